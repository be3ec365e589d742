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
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
