/*
 * bench/bare-mhd.c: the least a libmicrohttpd server can do, the peer of
 * perfd serve in bench/hub.sh. It starts MHD with the flags and options
 * web/hub/server.c uses (one internal polling thread, MHD_USE_AUTO, the same
 * connection limits, timeout and memory per connection), answers each
 * request on the second call of the handler (as perfd does, so keep-alive
 * is kept), prints "serving http://127.0.0.1:PORT/" and exits after SECONDS
 * or on SIGTERM/SIGINT.
 *
 * Without DIR every request is answered with a fixed small JSON body. With
 * DIR, the receipts perfd answered, read into memory at start: each file
 * DIR/ID.body holds the bytes of /api/v1/comparisons/ID and DIR/ID.etag its
 * ETag; GET /api/v1/comparisons/ID answers those bytes from memory with
 * the headers perfd sends with a stored receipt (Content-Type, nosniff,
 * ETag, Cache-Control: no-cache), any other path 404. An empty ID.etag
 * answers as perfd's other API answers do: no ETag, Cache-Control:
 * no-store (bench/changepoints.sh).
 *
 * usage: bare-mhd PORT SECONDS [DIR]   (PORT 0: the system picks one)
 * Build: cc -O2 -std=c11 bare-mhd.c -lmicrohttpd
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

/* The values of web/hub/hub.h and web/hub/server.c. */
#define CONNECTIONS_MAX 256
#define CONNECTIONS_PER_IP 64
#define TIMEOUT_S 15
#define REQUEST_MEMORY (32 * 1024)

#define PREFIX "/api/v1/comparisons/"
#define BODY_MAX (64 * 1024 * 1024)

static const char body[] = "{\"comparison\": 1, \"rule\": \"pairs-median/1\", \"verdict\": \"faster\"}\n";

/* The receipts of DIR, indexed by comparison id (NULL: none). */
struct receipt {
	char *body;
	size_t len;
	char etag[80];
};
static struct receipt **receipts;
static long nreceipts;               /* entries of receipts: the largest id + 1 */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The whole of path into *out (NUL after it); -1 when it cannot be read. */
static int slurp(const char *path, char **out, size_t *out_len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long len;

	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) < 0 || (len = ftell(f)) < 0 || len > BODY_MAX ||
	    fseek(f, 0, SEEK_SET) < 0 || !(buf = malloc((size_t)len + 1))) {
		fclose(f);
		return -1;
	}
	if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[len] = '\0';
	*out = buf;
	*out_len = (size_t)len;
	return 0;
}

static int load_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	long count = 0;

	if (!d) {
		fprintf(stderr, "bare-mhd: cannot open '%s'\n", dir);
		return -1;
	}
	while ((e = readdir(d))) {
		char path[4096], *end, *etag;
		struct receipt *r;
		size_t elen;
		long id = strtol(e->d_name, &end, 10);

		if (id <= 0 || strcmp(end, ".body"))
			continue;
		r = calloc(1, sizeof(*r));
		snprintf(path, sizeof(path), "%s/%ld.body", dir, id);
		if (!r || slurp(path, &r->body, &r->len) < 0)
			goto bad;
		snprintf(path, sizeof(path), "%s/%ld.etag", dir, id);
		if (slurp(path, &etag, &elen) < 0)
			goto bad;
		etag[strcspn(etag, "\r\n")] = '\0';
		snprintf(r->etag, sizeof(r->etag), "%s", etag);
		free(etag);
		if (id >= nreceipts) {
			receipts = realloc(receipts, (size_t)(id + 1) * sizeof(*receipts));
			memset(receipts + nreceipts, 0, (size_t)(id + 1 - nreceipts) * sizeof(*receipts));
			nreceipts = id + 1;
		}
		receipts[id] = r;
		count++;
		continue;
bad:
		fprintf(stderr, "bare-mhd: cannot read '%s'\n", path);
		closedir(d);
		return -1;
	}
	closedir(d);
	if (!count) {
		fprintf(stderr, "bare-mhd: no ID.body files in '%s'\n", dir);
		return -1;
	}
	fprintf(stderr, "bare-mhd: %ld receipts from '%s'\n", count, dir);
	return 0;
}

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status, const char *text,
			      size_t len, const char *etag)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (etag)
		MHD_add_response_header(resp, "ETag", etag);
	MHD_add_response_header(resp, "Cache-Control", etag ? "no-cache" : "no-store");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	static const char none[] = "{\"error\": \"no such comparison\"}\n";
	static int first;
	const struct receipt *r = NULL;
	char *end;
	long id;

	(void)cls, (void)method, (void)version, (void)upload_data;
	if (*upload_data_size)
		return MHD_NO;
	if (!*con_cls) {
		*con_cls = &first;  /* answer on the second call, as perfd does */
		return MHD_YES;
	}
	if (!receipts)
		return answer(conn, MHD_HTTP_OK, body, sizeof(body) - 1, NULL);
	if (!strncmp(url, PREFIX, strlen(PREFIX))) {
		id = strtol(url + strlen(PREFIX), &end, 10);
		if (!*end && id > 0 && id < nreceipts)
			r = receipts[id];
	}
	if (!r)
		return answer(conn, MHD_HTTP_NOT_FOUND, none, sizeof(none) - 1, NULL);
	return answer(conn, MHD_HTTP_OK, r->body, r->len, r->etag[0] ? r->etag : NULL);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;
	struct sigaction act;
	int seconds;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: bare-mhd PORT SECONDS [DIR]\n");
		return 2;
	}
	seconds = atoi(argv[2]);
	if (seconds < 1 || seconds > 3600) {
		fprintf(stderr, "bare-mhd: SECONDS must be 1 to 3600\n");
		return 2;
	}
	if (argc == 4 && load_dir(argv[3]) < 0)
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)atoi(argv[1]));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memset(&act, 0, sizeof(act));
	act.sa_handler = on_signal;
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, NULL, NULL,
			     on_request, NULL,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTIONS_MAX,
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)CONNECTIONS_PER_IP,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)TIMEOUT_S,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "bare-mhd: cannot start the daemon\n");
		return 1;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	printf("serving http://127.0.0.1:%u/\n", info ? (unsigned)info->port : 0u);
	fflush(stdout);
	while (!stop && seconds-- > 0)
		sleep(1);
	MHD_stop_daemon(d);
	return 0;
}
