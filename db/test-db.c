/* Unit tests of db/: opening, migration, refusal of foreign files, and
 * round trips of every record. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "db-internal.h"

static char dir[] = "/tmp/perfd-test-db-XXXXXX";

static char *path_for(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static void test_create_and_reopen(void **state)
{
	char *p = path_for("a.db");
	struct db *db = NULL;

	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_schema_version(db), DB_SCHEMA_VERSION);
	db_close(db);
	db = NULL;
	assert_int_equal(db_open(&db, p, 1000), 0);
	db_close(db);
	free(p);
}

static void set_pragma(const char *p, const char *sql)
{
	sqlite3 *h;

	assert_int_equal(sqlite3_open(p, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
}

static void test_newer_schema_refused(void **state)
{
	char *p = path_for("newer.db");
	struct db *db = NULL;

	assert_int_equal(db_open(&db, p, 1000), 0);
	db_close(db);
	db = NULL;
	set_pragma(p, "PRAGMA user_version = 99");
	assert_int_equal(db_open(&db, p, 1000), -EPROTONOSUPPORT);
	assert_null(db);
	assert_non_null(strstr(err_last(), "schema version 99"));
	free(p);
}

/* A file written at schema version 1 opens, is migrated to the newest
 * version, and keeps its rows. */
static void test_migration_from_v1(void **state)
{
	char *p = path_for("v1.db");
	struct db *db = NULL;
	sqlite3 *h;
	sqlite3_stmt *st;

	assert_int_equal(sqlite3_open(p, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, db_migrations[0].sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "PRAGMA user_version = 1; PRAGMA application_id = 1885696614;"
				      "INSERT INTO artifacts (path, size, sha256) VALUES ('/x', 1, 'ab');",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_schema_version(db), DB_SCHEMA_VERSION);
	db_close(db);
	assert_int_equal(sqlite3_open(p, &h), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT (SELECT count(*) FROM artifacts),"
					    " (SELECT count(*) FROM jobs)", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), 1);
	assert_int_equal(sqlite3_column_int(st, 1), 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	free(p);
}

static void test_foreign_and_corrupt_refused(void **state)
{
	char *p = path_for("foreign.db"), *q = path_for("corrupt.db");
	struct db *db = NULL;
	FILE *f;

	set_pragma(p, "CREATE TABLE t (x)");
	assert_int_equal(db_open(&db, p, 1000), -EPROTO);
	assert_non_null(strstr(err_last(), "not a perfd database"));

	f = fopen(q, "w");
	fputs("this is not an SQLite file, but it is long enough to have a header.....\n", f);
	fclose(f);
	assert_int_equal(db_open(&db, q, 1000), -EPROTO);
	assert_non_null(strstr(err_last(), "corrupt"));
	free(p);
	free(q);
}

/* The read-only open: never creates, migrates or writes the file. */
static void test_readonly_open(void **state)
{
	char *p = path_for("ro.db"), *missing = path_for("ro-missing.db");
	char *empty = path_for("ro-empty.db"), *old = path_for("ro-v1.db");
	char *wal = xasprintf("%s-wal", p), *shm = xasprintf("%s-shm", p);
	struct db *db = NULL;
	struct db_host *hosts;
	size_t n;
	sqlite3 *h;
	FILE *f;

	assert_int_equal(db_open_readonly(&db, missing, 1000), -ENOENT);
	assert_null(db);
	assert_non_null(strstr(err_last(), "no database at"));
	assert_int_equal(access(missing, F_OK), -1);

	f = fopen(empty, "w");
	fclose(f);
	assert_int_equal(db_open_readonly(&db, empty, 1000), -ENOENT);
	assert_non_null(strstr(err_last(), "is empty"));

	/* An older schema is refused and left at its version. */
	assert_int_equal(sqlite3_open(old, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, db_migrations[0].sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "PRAGMA user_version = 1; PRAGMA application_id = 1885696614;",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	assert_int_equal(db_open_readonly(&db, old, 1000), -EPROTONOSUPPORT);
	assert_non_null(strstr(err_last(), "schema version 1, older"));
	assert_int_equal(db_open(&db, old, 1000), 0);
	db_close(db);
	assert_int_equal(db_open_readonly(&db, old, 1000), 0);
	db_close(db);

	/* A current one reads, and refuses every write. */
	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_host_quarantine(db, "gpu0", "fault", 1, 1), 0);
	db_close(db);
	assert_int_equal(db_open_readonly(&db, p, 1000), 0);
	assert_int_equal(db_schema_version(db), DB_SCHEMA_VERSION);
	assert_int_equal(db_host_list(db, &hosts, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(hosts[0].name, "gpu0");
	db_host_release(&hosts[0]);
	free(hosts);
	assert_int_equal(db_host_clear(db, "gpu0"), -EACCES);
	assert_int_equal(db_host_quarantine(db, "gpu1", "fault", 1, 1), -EACCES);
	db_close(db);
	/* The last close leaves no -wal or -shm beside it. */
	assert_int_equal(access(wal, F_OK), -1);
	assert_int_equal(access(shm, F_OK), -1);
	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_host_list(db, &hosts, &n), 0);
	assert_int_equal(n, 1);
	assert_true(hosts[0].quarantined);
	db_host_release(&hosts[0]);
	free(hosts);
	db_close(db);

	/* Foreign and newer files are refused as db_open refuses them. */
	set_pragma(p, "PRAGMA user_version = 99");
	assert_int_equal(db_open_readonly(&db, p, 1000), -EPROTONOSUPPORT);
	assert_non_null(strstr(err_last(), "schema version 99"));
	set_pragma(empty, "CREATE TABLE t (x)");
	assert_int_equal(db_open_readonly(&db, empty, 1000), -EPROTO);
	assert_null(db);
	free(p);
	free(missing);
	free(empty);
	free(old);
	free(wal);
	free(shm);
}

static void test_round_trip(void **state)
{
	char *p = path_for("rt.db");
	struct db *db = NULL;
	struct db_artifact a = { 0, (char *)"/bin/true", 123, "ab" };
	struct db_comparison c, l;
	struct db_process pr;
	struct db_metric m[2] = { { (char *)"run2_ms", 4392 }, { (char *)"bad", NAN } };
	struct db_line line = { (char *)"RESULT", (char *)"RESULT x on \"d\": passed=1" };
	char *err = (char *)"line 3: TIMING: metric 'bad' is nan";
	struct db_summary s;
	double gains[1] = { 0.1 };
	bool valid[1] = { false };
	char *reason[1] = { (char *)"exited 1" };
	char *flags[1] = { (char *)"noisy" };
	int64_t id1, id2, cid;

	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_artifact_put(db, &id1, &a), 0);
	assert_int_equal(db_artifact_put(db, &id2, &a), 0);
	assert_true(id1 == id2);

	memset(&c, 0, sizeof(c));
	snprintf(c.created_at, sizeof(c.created_at), "2026-11-04T10:00:00.123Z");
	c.rule = (char *)"pairs-median/1";
	c.case_name = (char *)"default";
	c.host = (char *)"lavapipe";
	c.old.id = c.new.id = id1;
	c.pairs = 1;
	c.min_effect = 0.01;
	c.noise = 0.05;
	assert_int_equal(db_comparison_insert(db, &cid, &c), 0);

	memset(&pr, 0, sizeof(pr));
	pr.comparison_id = cid;
	pr.seq = 1;
	snprintf(pr.arm, sizeof(pr.arm), "old");
	pr.pair = 1;
	snprintf(pr.started_at, sizeof(pr.started_at), "2026-11-04T10:00:00.200Z");
	assert_int_equal(db_process_insert(db, &pr.id, &pr), 0);
	pr.exit_code = 1;
	pr.wall_ms = 12.5;
	pr.metrics = m;
	pr.nmetrics = 2;
	pr.lines = &line;
	pr.nlines = 1;
	pr.protocol_errors = &err;
	pr.nprotocol_errors = 1;
	pr.digest = (char *)"c475";
	pr.out = (char *)"TIMING run2_ms=4392\n";
	pr.out_len = strlen(pr.out);
	assert_int_equal(db_process_finish(db, &pr), 0);

	memset(&s, 0, sizeof(s));
	s.metric = (char *)"run2_ms";
	snprintf(s.verdict, sizeof(s.verdict), "invalid");
	s.pair_gains = gains;
	s.npair_gains = 1;
	s.flags = flags;
	s.nflags = 1;
	s.reasons = reason;
	s.nreasons = 1;
	s.process_valid = valid;
	s.process_reason = reason;
	s.nprocesses = 1;
	assert_int_equal(db_comparison_finish(db, cid, DB_STATE_DONE, &s, &pr, 1), 0);

	assert_int_equal(db_comparison_load(db, &l, cid), 0);
	assert_string_equal(l.metric, "run2_ms");
	assert_string_equal(l.summary.verdict, "invalid");
	assert_int_equal(l.nprocesses, 1);
	assert_int_equal(l.processes[0].exit_code, 1);
	assert_int_equal(l.processes[0].nmetrics, 2);
	assert_string_equal(l.processes[0].metrics[0].name, "bad");
	assert_true(isnan(l.processes[0].metrics[0].value));
	assert_true(l.processes[0].metrics[1].value == 4392);
	assert_int_equal(l.processes[0].nlines, 1);
	assert_int_equal(l.processes[0].nprotocol_errors, 1);
	assert_string_equal(l.processes[0].invalid_reason, "exited 1");
	assert_string_equal(l.summary.flags[0], "noisy");
	assert_true(l.summary.pair_gains[0] == 0.1);
	assert_string_equal(l.old.path, "/bin/true");
	db_comparison_release(&l);

	memset(&pr, 0, sizeof(pr));
	assert_int_equal(db_process_output_load(db, &pr, cid, 1), 0);
	assert_string_equal(pr.out, "TIMING run2_ms=4392\n");
	db_process_release(&pr);
	assert_int_equal(db_process_output_load(db, &pr, cid, 2), -ENOENT);
	assert_int_equal(db_comparison_load(db, &l, cid + 1), -ENOENT);
	db_close(db);
	free(p);
}

/* Garbage where a caller forgot to initialise: a loader must not leave it. */
#define GARBAGE(x) memset(&(x), 0xA5, sizeof(x))

/* Every loader asked for a row a fresh database lacks: -ENOENT, and the
 * output zeroed, so that releasing it is safe. */
static void test_missing_rows_zeroed(void **state)
{
	char *p = path_for("missing.db");
	struct db *db = NULL;
	struct db_host h;
	struct db_job j;
	struct db_build b;
	struct db_comparison c;
	struct db_artifact a;
	struct db_pull_comment pc;
	char oid[DB_OID_HEX], st[16], *desc, *approver;

	assert_int_equal(db_open(&db, p, 1000), 0);

	GARBAGE(h);
	assert_int_equal(db_host_load(db, &h, "nohost"), -ENOENT);
	assert_null(h.fault);
	assert_string_equal(h.name, "");
	assert_false(h.quarantined);
	db_host_release(&h);

	GARBAGE(j);
	assert_int_equal(db_job_get(db, &j, "main", "0123"), -ENOENT);
	assert_null(j.subject);
	assert_null(j.detail);
	assert_int_equal(j.id, 0);
	db_job_release(&j);
	GARBAGE(j);
	assert_int_equal(db_job_next(db, &j), -ENOENT);
	assert_null(j.subject);
	assert_null(j.detail);
	db_job_release(&j);

	GARBAGE(b);
	assert_int_equal(db_build_find(db, &b, "host", "tree", "recipe"), -ENOENT);
	assert_null(b.dir);
	assert_null(b.log);
	assert_null(b.artifacts);
	assert_int_equal(b.nartifacts, 0);
	db_build_release(&b);
	GARBAGE(b);
	assert_int_equal(db_build_load(db, &b, 42), -ENOENT);
	assert_null(b.dir);
	assert_null(b.detail);
	assert_int_equal(b.nartifacts, 0);
	db_build_release(&b);

	GARBAGE(c);
	assert_int_equal(db_comparison_load(db, &c, 42), -ENOENT);
	assert_null(c.rule);
	assert_null(c.old.path);
	assert_null(c.summary.metric);
	assert_null(c.processes);
	assert_int_equal(c.nprocesses, 0);
	assert_int_equal(c.summary.nflags, 0);
	db_comparison_release(&c);

	GARBAGE(a);
	assert_int_equal(db_artifact_load(db, &a, 42), -ENOENT);
	assert_null(a.path);
	assert_string_equal(a.sha256, "");
	db_artifact_release(&a);

	GARBAGE(pc);
	assert_int_equal(db_pull_comment_get(db, &pc, "o/r", 1, ""), -ENOENT);
	assert_int_equal(pc.comment_id, 0);
	assert_string_equal(pc.commit, "");
	assert_false(pc.muted);

	GARBAGE(st);
	GARBAGE(desc);
	assert_int_equal(db_commit_status_get(db, st, &desc, "o/r", "0123", "perfd/x"), -ENOENT);
	assert_string_equal(st, "");
	assert_null(desc);
	free(desc);

	GARBAGE(approver);
	assert_int_equal(db_pull_approval_get(db, &approver, "o/r", 1, "0123"), -ENOENT);
	assert_null(approver);
	free(approver);

	GARBAGE(oid);
	assert_int_equal(db_head_get(db, oid, "main"), -ENOENT);
	assert_string_equal(oid, "");

	db_close(db);
	free(p);
}

/* The list loaders on a database whose tables are gone: an error, and the
 * list NULL and empty rather than what the caller's variable held. */
static void test_failed_lists_zeroed(void **state)
{
	char *p = path_for("broken.db"), *q = path_for("foreign-again.db");
	struct db *db = NULL;
	struct db_host *hosts;
	struct db_host_info *infos;
	struct db_head_info *heads;
	struct db_timeline_point *pts;
	struct db_runner_result *res;
	struct db_job jobs[4];
	int64_t *ids;
	size_t n;

	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(sqlite3_exec(db->h, "PRAGMA foreign_keys = OFF;"
				      " DROP TABLE hosts; DROP TABLE heads; DROP TABLE jobs;"
				      " DROP TABLE runner_lines; DROP TABLE runner_results;"
				      " DROP TABLE comparisons;", NULL, NULL, NULL), SQLITE_OK);

	GARBAGE(hosts);
	GARBAGE(n);
	assert_true(db_host_list(db, &hosts, &n) < 0);
	assert_null(hosts);
	assert_int_equal(n, 0);

	GARBAGE(ids);
	GARBAGE(n);
	assert_true(db_comparison_ids(db, &ids, &n) < 0);
	assert_null(ids);
	assert_int_equal(n, 0);
	GARBAGE(ids);
	GARBAGE(n);
	assert_true(db_comparison_ids_in_state(db, &ids, &n, DB_STATE_RUNNING) < 0);
	assert_null(ids);
	assert_int_equal(n, 0);

	GARBAGE(res);
	GARBAGE(n);
	assert_true(db_runner_results_load(db, &res, &n, 1) < 0);
	assert_null(res);
	assert_int_equal(n, 0);

	GARBAGE(infos);
	GARBAGE(n);
	assert_true(db_host_infos(db, &infos, &n, 10) < 0);
	assert_null(infos);
	assert_int_equal(n, 0);

	GARBAGE(heads);
	GARBAGE(n);
	assert_true(db_head_infos(db, &heads, &n, 10) < 0);
	assert_null(heads);
	assert_int_equal(n, 0);

	GARBAGE(pts);
	GARBAGE(n);
	assert_true(db_timeline(db, &pts, &n, "host", "case", 10) < 0);
	assert_null(pts);
	assert_int_equal(n, 0);

	/* A fixed array: the count is negative and nothing in it is the
	 * caller's to release. */
	assert_true(db_job_list(db, jobs, ARRAY_SIZE(jobs)) < 0);
	db_close(db);

	/* db_open's handle is NULL when the file is refused. */
	set_pragma(q, "CREATE TABLE t (x)");
	GARBAGE(db);
	assert_int_equal(db_open(&db, q, 1000), -EPROTO);
	assert_null(db);
	db_close(db);
	free(p);
	free(q);
}

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);
	int r = system(cmd);

	free(cmd);
	return r;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_and_reopen),
		cmocka_unit_test(test_newer_schema_refused),
		cmocka_unit_test(test_migration_from_v1),
		cmocka_unit_test(test_foreign_and_corrupt_refused),
		cmocka_unit_test(test_readonly_open),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_missing_rows_zeroed),
		cmocka_unit_test(test_failed_lists_zeroed),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
