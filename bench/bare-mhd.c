/*
 * bench/bare-mhd.c: the least a libmicrohttpd server can do, the peer of
 * perfd serve in bench/hub.sh. It starts MHD with the flags and options
 * web/hub/server.c uses (one internal polling thread, MHD_USE_AUTO, the same
 * connection limits, timeout and memory per connection), answers every
 * request with a fixed small JSON body on the second call of the handler
 * (as perfd does, so keep-alive is kept), prints "serving
 * http://127.0.0.1:PORT/" and exits after SECONDS or on SIGTERM/SIGINT.
 *
 * usage: bare-mhd PORT SECONDS   (PORT 0: the system picks one)
 * Build: cc -O2 -std=c11 bare-mhd.c -lmicrohttpd
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
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

static const char body[] = "{\"comparison\": 1, \"rule\": \"pairs-median/1\", \"verdict\": \"faster\"}\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	static int first;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	(void)cls, (void)url, (void)method, (void)version, (void)upload_data;
	if (*upload_data_size)
		return MHD_NO;
	if (!*con_cls) {
		*con_cls = &first;  /* answer on the second call, as perfd does */
		return MHD_YES;
	}
	resp = MHD_create_response_from_buffer(sizeof(body) - 1, (void *)body,
					       MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;
	struct sigaction act;
	int seconds;

	if (argc != 3) {
		fprintf(stderr, "usage: bare-mhd PORT SECONDS\n");
		return 2;
	}
	seconds = atoi(argv[2]);
	if (seconds < 1 || seconds > 3600) {
		fprintf(stderr, "bare-mhd: SECONDS must be 1 to 3600\n");
		return 2;
	}
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
