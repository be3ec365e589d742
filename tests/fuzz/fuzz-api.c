/*
 * The hub's paths and query parameters (web/hub/params.c, web/hub/api.c):
 * any bytes as a GET's request target, taken as web/hub/server.c takes
 * what libmicrohttpd hands it (the path checked, the static and document
 * names tried, the parameters added one by one, web_api_answer), against a
 * real hub database that holds the records of the corpus of fuzz-record,
 * ingested at start as the hub ingests a POST. No target may make the API
 * fail (500), and each JSON answer is JSON.
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>

#include <jansson.h>

#include "hub-internal.h"
#include "fuzz.h"

static struct db *db;
static char db_dir[] = "/tmp/perfd-fuzz-api.XXXXXX";

/* The database goes with the run (libFuzzer ends with exit). */
static void remove_db(void)
{
	db_close(db);
	fs_rm_rf(db_dir);
}

static void ingest_seeds(const char *dir)
{
	const struct web_identity who = { .kind = DB_TOKEN_HOST, .name = "lavapipe" };
	int (*const ingest[])(struct web_reply *, struct db *, const struct web_identity *,
			      const char *, size_t, char[41]) = {
		web_ingest_job, web_ingest_build, web_ingest_comparison, web_ingest_heartbeat,
	};
	struct dirent **names;
	int n, i;
	size_t k;

	n = scandir(dir, &names, NULL, alphasort);
	for (i = 0; i < n; i++) {
		struct strbuf path = STRBUF_INIT;
		char *text, commit[41];
		size_t len;

		strbuf_addf(&path, "%s/%s", dir, names[i]->d_name);
		if (names[i]->d_name[0] != '.' &&
		    fs_read_file(&text, &len, path.buf, WEB_INGEST_BODY_MAX) == 0) {
			for (k = 0; k < ARRAY_SIZE(ingest); k++) {
				struct web_reply rp = { .body = STRBUF_INIT };

				ingest[k](&rp, db, &who, text, len, commit);
				strbuf_release(&rp.body);
			}
			free(text);
		}
		strbuf_release(&path);
		free(names[i]);
	}
	free(n >= 0 ? names : NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[64];

	if (!mkdtemp(db_dir))
		abort();
	atexit(remove_db);
	snprintf(path, sizeof(path), "%s/hub.db", db_dir);
	if (db_open(&db, path, 10000) < 0) {
		fprintf(stderr, "fuzz-api: %s\n", err_last());
		abort();
	}
	ingest_seeds(FUZZ_CORPUS "/record");
	return 0;
}

/* libmicrohttpd's reading of a query: '&' between arguments, '=' between
 * a name and its value (none: NULL), '+' a blank and %XX a byte in both. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		unsigned v;

		if (*s == '+') {
			*o++ = ' ';
		} else if (*s == '%' && sscanf(s + 1, "%2x", &v) == 1 &&
			   strspn(s + 1, "0123456789abcdefABCDEF") >= 2) {
			*o++ = (char)v;
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

static int add_query(struct web_params *pa, char *query)
{
	char *arg, *save = NULL;

	for (arg = strtok_r(query, "&", &save); arg; arg = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(arg, '=');

		if (eq)
			*eq++ = '\0';
		unescape(arg);
		if (eq)
			unescape(eq);
		if (web_params_add(pa, arg, eq) < 0)
			return -EINVAL;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const expect[] = { "lavapipe", "m1" };
	const struct web_api_pulls pulls = { "owner/repo", expect, 2, 900 };
	struct web_counters counters = { .n = 0 };
	struct web_params pa = { .n = 0 };
	struct web_reply rp = { .status = 500, .body = STRBUF_INIT };
	char *raw, *path, *query, name[WEB_PATH_MAX + 1];

	if (size > 4096)
		return 0;
	raw = xstrndup((const char *)data, size);
	path = xstrdup(raw);
	query = strchr(path, '?');
	if (query)
		*query++ = '\0';
	web_counters_add(&counters, 200);
	if (web_path_check(raw, path) < 0) {
		FUZZ_CHECK(*err_last());
		goto out;
	}
	FUZZ_CHECK(path[0] == '/' && !strstr(path, "/../") && !strchr(path, '%'));
	if (web_static_name(name, sizeof(name), path) == 0 ||
	    web_doc_name(name, sizeof(name), path) == 0) {
		/* A file under its root: no segment starts with '.' ("a..b" is a
		 * name, "../" is not). */
		FUZZ_CHECK(name[0] && name[0] != '.' && !strstr(name, "/.") && name[0] != '/');
		goto out;
	}
	if (strcmp(path, "/metrics") && strncmp(path, "/api/", 5))
		goto out;
	if (query && add_query(&pa, query) < 0)
		goto out;
	web_api_answer(&rp, db, &counters, &pulls, "main", path, &pa);
	FUZZ_CHECK(rp.status == 200 || rp.status == 400 || rp.status == 404);
	if (!strcmp(rp.type, "application/json")) {
		json_error_t err;
		json_t *j = json_loadb(rp.body.buf, rp.body.len, 0, &err);

		FUZZ_CHECK(j);
		json_decref(j);
	}
out:
	strbuf_release(&rp.body);
	web_params_release(&pa);
	free(path);
	free(raw);
	return 0;
}
