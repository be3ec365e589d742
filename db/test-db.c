/*
 * Unit tests of db/: opening (read-write and read-only), migration, refusal
 * of foreign files, and a round trip of every record kind: each stored,
 * loaded through every loader that reads it, and compared field by field.
 * Records: artifact; comparison with its summary (pair gains, flags,
 * reasons, validity); process with metrics, lines, protocol errors and
 * captured output; host; head; job; build with its artifacts; runner
 * result with its lines; pull comment, commit status, approval and head
 * first seen; tokens; an ingested comparison with its origin, written whole
 * and row for row what the step by step writes leave; stored receipts and
 * what drops them; alerts on the forge (an issue, commands taken once
 * with a triage's checks, culprits); holds. Also every
 * loader's output on a missing row or a failed list, and the A/A
 * comparisons counted per host and case.
 */
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

/* A process row with every column set, and its metrics, lines, protocol
 * errors and captured output. */
static struct db_metric rt_metrics[2] = { { (char *)"run2_ms", 4392 }, { (char *)"bad", NAN } };
static struct db_line rt_lines[2] = {
	{ (char *)"RESULT", (char *)"RESULT x on \"d\": passed=1" },
	{ (char *)"SUMMARY", (char *)"SUMMARY passed=1 failed=0" },
};
static char *rt_errors[1] = { (char *)"line 3: TIMING: metric 'bad' is nan" };

static void rt_process(struct db_process *pr, int64_t cid)
{
	memset(pr, 0, sizeof(*pr));
	pr->comparison_id = cid;
	pr->seq = 1;
	snprintf(pr->arm, sizeof(pr->arm), "old");
	pr->pair = 1;
	snprintf(pr->started_at, sizeof(pr->started_at), "2026-11-04T10:00:00.200Z");
	pr->cpus = (char *)"2-3";
}

static void rt_process_done(struct db_process *pr)
{
	snprintf(pr->started_at, sizeof(pr->started_at), "2026-11-04T10:00:00.250Z");
	snprintf(pr->ended_at, sizeof(pr->ended_at), "2026-11-04T10:00:00.300Z");
	pr->exit_code = 1;
	pr->signal = 0;
	pr->timed_out = true;
	pr->spawn_error = NULL;
	pr->wall_ms = 12.5;
	pr->user_ms = 10.25;
	pr->sys_ms = 1.5;
	pr->maxrss_kb = 2048;
	pr->cpu_wait_ms = 12.5;
	pr->metrics = rt_metrics;
	pr->nmetrics = 2;
	pr->lines = rt_lines;
	pr->nlines = 2;
	pr->protocol_errors = rt_errors;
	pr->nprotocol_errors = 1;
	pr->digest = (char *)"c475";
	pr->record_valid = true;
	pr->stdout_bytes = 5000;
	pr->stderr_bytes = 4;
	pr->fault = (char *)"amdgpu: ring gfx timeout";
	pr->fault_watch = (char *)"on";
	pr->out = (char *)"TIMING run2_ms=4392\n";
	pr->out_len = strlen(pr->out);
	pr->err = (char *)"oops";
	pr->err_len = 4;
}

static void rt_process_check(const struct db_process *p, int64_t id, int64_t cid)
{
	assert_int_equal(p->id, id);
	assert_int_equal(p->comparison_id, cid);
	assert_int_equal(p->seq, 1);
	assert_string_equal(p->arm, "old");
	assert_int_equal(p->pair, 1);
	assert_false(p->warmup);
	assert_int_equal(p->state, DB_STATE_DONE);
	assert_string_equal(p->started_at, "2026-11-04T10:00:00.250Z");
	assert_string_equal(p->ended_at, "2026-11-04T10:00:00.300Z");
	assert_int_equal(p->exit_code, 1);
	assert_int_equal(p->signal, 0);
	assert_true(p->timed_out);
	assert_null(p->spawn_error);
	assert_true(p->wall_ms == 12.5);
	assert_true(p->user_ms == 10.25);
	assert_true(p->sys_ms == 1.5);
	assert_int_equal(p->maxrss_kb, 2048);
	assert_true(p->cpu_wait_ms == 12.5);
	assert_string_equal(p->cpus, "2-3");
	/* Metrics come back by name. */
	assert_int_equal(p->nmetrics, 2);
	assert_string_equal(p->metrics[0].name, "bad");
	assert_true(isnan(p->metrics[0].value));
	assert_string_equal(p->metrics[1].name, "run2_ms");
	assert_true(p->metrics[1].value == 4392);
	assert_string_equal(p->digest, "c475");
	assert_true(p->record_valid);
	assert_int_equal(p->nlines, 2);
	assert_string_equal(p->lines[0].kind, "RESULT");
	assert_string_equal(p->lines[0].text, rt_lines[0].text);
	assert_string_equal(p->lines[1].kind, "SUMMARY");
	assert_string_equal(p->lines[1].text, rt_lines[1].text);
	assert_int_equal(p->nprotocol_errors, 1);
	assert_string_equal(p->protocol_errors[0], rt_errors[0]);
	assert_int_equal(p->stdout_bytes, 5000);
	assert_int_equal(p->stderr_bytes, 4);
	assert_int_equal(p->stdout_kept, strlen("TIMING run2_ms=4392\n"));
	assert_int_equal(p->stderr_kept, 4);
	assert_string_equal(p->fault, "amdgpu: ring gfx timeout");
	assert_string_equal(p->fault_watch, "on");
	assert_false(p->valid);
	assert_string_equal(p->invalid_reason, "exited 1");
	/* Captured output is loaded apart. */
	assert_null(p->out);
	assert_null(p->err);
}

/* An artifact, a comparison with one process, its summary: every column
 * stored comes back, through every loader that reads it. */
static void test_comparison_round_trip(void **state)
{
	char *p = path_for("rt.db");
	struct db *db = NULL;
	struct db_artifact a = { 0, (char *)"/bin/true", 123, "ab" };
	struct db_artifact b = { 0, (char *)"/bin/false", 456, "cd" }, al;
	struct db_comparison c, l;
	struct db_process pr;
	struct db_summary s;
	struct db_comparison_row rows[4];
	struct db_comparison_entry ents[4];
	struct db_comparison_filter f;
	struct db_timeline_point *pts;
	struct db_count counts[4];
	double gains[2] = { 0.1, NAN };
	bool valid[1] = { false };
	char *reason[1] = { (char *)"exited 1" };
	char *reasons[2] = { (char *)"exited 1", (char *)"too few valid pairs" };
	char *flags[2] = { (char *)"noisy", (char *)"digests differ" };
	int64_t id1, id2, idb, cid, *ids;
	size_t n;

	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_artifact_put(db, &id1, &a), 0);
	assert_int_equal(db_artifact_put(db, &id2, &a), 0);
	assert_true(id1 == id2);
	assert_int_equal(db_artifact_put(db, &idb, &b), 0);
	assert_true(idb != id1);
	assert_int_equal(db_artifact_load(db, &al, idb), 0);
	assert_int_equal(al.id, idb);
	assert_string_equal(al.path, "/bin/false");
	assert_int_equal(al.size, 456);
	assert_string_equal(al.sha256, "cd");
	db_artifact_release(&al);

	memset(&c, 0, sizeof(c));
	snprintf(c.created_at, sizeof(c.created_at), "2026-11-04T10:00:00.123Z");
	c.rule = (char *)"pairs-median/1";
	c.case_name = (char *)"default";
	c.metric_requested = (char *)"run2_ms";
	c.host = (char *)"lavapipe";
	c.fingerprint = (char *)"fp1";
	c.old.id = id1;
	c.new.id = idb;
	c.pairs = 2;
	c.warmup = 1;
	c.timeout_s = 30;
	c.min_effect = 0.01;
	c.noise = 0.05;
	c.args_json = (char *)"{\"old\":[\"-x\"]}";
	assert_int_equal(db_comparison_insert(db, &cid, &c), 0);
	assert_int_equal(db_comparison_load(db, &l, cid), 0);
	assert_int_equal(l.state, DB_STATE_RUNNING);
	assert_false(l.has_summary);
	assert_int_equal(l.nprocesses, 0);
	db_comparison_release(&l);

	rt_process(&pr, cid);
	assert_int_equal(db_process_insert(db, &pr.id, &pr), 0);
	rt_process_done(&pr);
	assert_int_equal(db_process_finish(db, &pr), 0);

	memset(&s, 0, sizeof(s));
	s.metric = (char *)"run2_ms";
	snprintf(s.verdict, sizeof(s.verdict), "invalid");
	s.has_gain = true;
	s.gain_median = 0.1;
	s.gain_min = -0.5;
	s.gain_max = 0.25;
	s.old = (struct db_arm_stats){ true, 4392, 4113, 4421, 0.07 };
	s.pair_gains = gains;
	s.npair_gains = 2;
	s.digests_equal = true;
	s.flags = flags;
	s.nflags = 2;
	s.reasons = reasons;
	s.nreasons = 2;
	s.process_valid = valid;
	s.process_reason = reason;
	s.nprocesses = 1;
	assert_int_equal(db_comparison_finish(db, cid, DB_STATE_DONE, &s, &pr, 1), 0);

	assert_int_equal(db_comparison_load(db, &l, cid), 0);
	assert_int_equal(l.id, cid);
	assert_string_equal(l.created_at, "2026-11-04T10:00:00.123Z");
	assert_true(l.finished_at[0] != '\0');
	assert_int_equal(l.state, DB_STATE_DONE);
	assert_string_equal(l.rule, "pairs-median/1");
	assert_string_equal(l.case_name, "default");
	assert_string_equal(l.metric_requested, "run2_ms");
	assert_string_equal(l.metric, "run2_ms");
	assert_string_equal(l.host, "lavapipe");
	assert_string_equal(l.fingerprint, "fp1");
	assert_int_equal(l.pairs, 2);
	assert_int_equal(l.warmup, 1);
	assert_true(l.timeout_s == 30);
	assert_true(l.min_effect == 0.01);
	assert_true(l.noise == 0.05);
	assert_string_equal(l.args_json, "{\"old\":[\"-x\"]}");
	assert_string_equal(l.old.path, "/bin/true");
	assert_int_equal(l.old.size, 123);
	assert_string_equal(l.new.path, "/bin/false");
	assert_string_equal(l.new.sha256, "cd");
	assert_int_equal(l.job_id, 0);
	assert_null(l.job_head);
	assert_true(l.has_summary);
	assert_string_equal(l.summary.metric, "run2_ms");
	assert_string_equal(l.summary.verdict, "invalid");
	assert_true(l.summary.has_gain);
	assert_true(l.summary.gain_median == 0.1);
	assert_true(l.summary.gain_min == -0.5);
	assert_true(l.summary.gain_max == 0.25);
	assert_true(l.summary.old.set);
	assert_true(l.summary.old.median == 4392 && l.summary.old.min == 4113);
	assert_true(l.summary.old.max == 4421 && l.summary.old.spread == 0.07);
	assert_false(l.summary.new.set);
	assert_true(l.summary.digests_equal);
	assert_int_equal(l.summary.npair_gains, 2);
	assert_true(l.summary.pair_gains[0] == 0.1);
	assert_true(isnan(l.summary.pair_gains[1]));
	assert_int_equal(l.summary.nflags, 2);
	assert_string_equal(l.summary.flags[0], "noisy");
	assert_string_equal(l.summary.flags[1], "digests differ");
	assert_int_equal(l.summary.nreasons, 2);
	assert_string_equal(l.summary.reasons[0], "exited 1");
	assert_string_equal(l.summary.reasons[1], "too few valid pairs");
	assert_int_equal(l.summary.nprocesses, 1);
	assert_false(l.summary.process_valid[0]);
	assert_string_equal(l.summary.process_reason[0], "exited 1");
	assert_int_equal(l.nprocesses, 1);
	rt_process_check(&l.processes[0], pr.id, cid);
	db_comparison_release(&l);

	/* Finishing again replaces the summary's rows rather than adding. */
	s.nflags = 1;
	s.nreasons = 1;
	s.npair_gains = 1;
	assert_int_equal(db_comparison_finish(db, cid, DB_STATE_DONE, &s, &pr, 1), 0);
	assert_int_equal(db_comparison_load(db, &l, cid), 0);
	assert_int_equal(l.summary.nflags, 1);
	assert_int_equal(l.summary.nreasons, 1);
	assert_int_equal(l.summary.npair_gains, 1);
	db_comparison_release(&l);

	memset(&pr, 0, sizeof(pr));
	assert_int_equal(db_process_output_load(db, &pr, cid, 1), 0);
	assert_string_equal(pr.out, "TIMING run2_ms=4392\n");
	assert_int_equal(pr.out_len, strlen("TIMING run2_ms=4392\n"));
	assert_string_equal(pr.err, "oops");
	assert_int_equal(pr.err_len, 4);
	db_process_release(&pr);
	assert_int_equal(db_process_output_load(db, &pr, cid, 2), -ENOENT);
	assert_int_equal(db_comparison_load(db, &l, cid + 1), -ENOENT);

	/* The lists of comparisons. */
	assert_int_equal(db_comparison_list(db, rows, ARRAY_SIZE(rows), 0), 1);
	assert_int_equal(rows[0].id, cid);
	assert_int_equal(rows[0].state, DB_STATE_DONE);
	assert_string_equal(rows[0].host, "lavapipe");
	assert_string_equal(rows[0].case_name, "default");
	assert_string_equal(rows[0].metric, "run2_ms");
	assert_string_equal(rows[0].verdict, "invalid");
	assert_true(rows[0].has_gain && rows[0].gain_median == 0.1);
	assert_string_equal(rows[0].old_sha256, "ab");
	assert_string_equal(rows[0].new_sha256, "cd");
	assert_int_equal(db_comparison_list(db, rows, ARRAY_SIZE(rows), cid), 0);
	assert_int_equal(db_comparison_ids(db, &ids, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], cid);
	free(ids);
	assert_int_equal(db_comparison_ids_in_state(db, &ids, &n, DB_STATE_DONE), 0);
	assert_int_equal(n, 1);
	free(ids);
	assert_int_equal(db_comparison_ids_in_state(db, &ids, &n, DB_STATE_RUNNING), 0);
	assert_int_equal(n, 0);
	assert_null(ids);

	memset(&f, 0, sizeof(f));
	f.host = "lavapipe";
	f.verdict = "invalid";
	assert_int_equal(db_comparison_find(db, ents, ARRAY_SIZE(ents), &f), 1);
	assert_int_equal(ents[0].row.id, cid);
	assert_int_equal(ents[0].job_id, 0);
	assert_string_equal(ents[0].head, "");
	f.verdict = "faster";
	assert_int_equal(db_comparison_find(db, ents, ARRAY_SIZE(ents), &f), 0);
	assert_int_equal(db_comparison_cells(db, ents, ARRAY_SIZE(ents), "lavapipe", NULL), 1);
	assert_string_equal(ents[0].row.new_sha256, "cd");
	assert_int_equal(db_comparison_cells(db, ents, ARRAY_SIZE(ents), "other", NULL), 0);

	assert_int_equal(db_timeline(db, &pts, &n, "lavapipe", "default", 10), 0);
	assert_int_equal(n, 1);
	assert_int_equal(pts[0].id, cid);
	assert_string_equal(pts[0].metric, "run2_ms");
	assert_string_equal(pts[0].verdict, "invalid");
	assert_true(pts[0].old_median == 4392);
	assert_true(isnan(pts[0].new_median));
	assert_string_equal(pts[0].fingerprint, "fp1");
	assert_int_equal(pts[0].nvalues, 1);
	assert_int_equal(pts[0].values[0].seq, 1);
	assert_string_equal(pts[0].values[0].arm, "old");
	assert_true(pts[0].values[0].has_value && pts[0].values[0].value == 4392);
	assert_false(pts[0].values[0].valid);
	db_timeline_point_release(&pts[0]);
	free(pts);

	assert_int_equal(db_count(db, counts, ARRAY_SIZE(counts), DB_COUNT_VERDICTS), 1);
	assert_string_equal(counts[0].key, "invalid");
	assert_int_equal(counts[0].n, 1);
	db_close(db);
	free(p);
}

/* A host's quarantine, its clearing, and the hosts as listed. */
/* An A/A (or, with aa false, a comparison) of host and case, finished as
 * state with verdict and the gains given; returns its id. */
static int64_t put_aa(struct db *db, int64_t art, bool aa, const char *host, const char *case_name,
		      const char *fp, enum db_state state, const char *verdict, double *gains,
		      size_t ngains)
{
	struct db_comparison c;
	struct db_summary s;
	int64_t id;

	memset(&c, 0, sizeof(c));
	snprintf(c.created_at, sizeof(c.created_at), "2026-11-04T10:00:00.000Z");
	c.rule = (char *)"pairs-median/1";
	c.case_name = (char *)case_name;
	c.host = (char *)host;
	c.fingerprint = (char *)fp;
	c.old.id = c.new.id = art;
	c.pairs = (int)ngains;
	c.aa = aa;
	assert_int_equal(db_comparison_insert(db, &id, &c), 0);
	memset(&s, 0, sizeof(s));
	s.metric = (char *)"t_ms";
	snprintf(s.verdict, sizeof(s.verdict), "%s", verdict);
	s.pair_gains = gains;
	s.npair_gains = ngains;
	assert_int_equal(db_comparison_finish(db, id, state, &s, NULL, 0), 0);
	return id;
}

/* A process's load: its CPU pressure over its wall time, none without
 * either. */
static void test_process_load(void **state)
{
	(void)state;
	assert_true(db_process_load(5, 10) == 0.5);
	assert_true(db_process_load(0, 10) == 0);
	assert_true(isnan(db_process_load(NAN, 10)));
	assert_true(isnan(db_process_load(5, 0)));
	assert_true(isnan(db_process_load(5, NAN)));
}

/* The A/As per host and case: counted by verdict over the newest, the
 * newest not invalid one named, filtered and bounded; a calibration's gains
 * loaded; the timeline without them. */
static void test_calibration_infos(void **state)
{
	char *p = path_for("cal.db");
	struct db *db = NULL;
	struct db_artifact a = { 0, (char *)"/bin/true", 1, "ab" };
	struct db_calibration_info *v;
	struct db_calibration *cal;
	struct db_timeline_point *pts;
	double g3[3] = { 0.01, -0.02, NAN }, g2[2] = { 0.1, 0.2 };
	int64_t art, x1, x2, x3, x4, y1;
	size_t n, i;

	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_artifact_put(db, &art, &a), 0);
	x1 = put_aa(db, art, true, "h1", "work", "fpA", DB_STATE_DONE, "faster", g3, 3);
	x2 = put_aa(db, art, true, "h1", "work", "fpA", DB_STATE_DONE, "unchanged", g2, 2);
	x3 = put_aa(db, art, true, "h1", "work", "fpB", DB_STATE_DONE, "unresolved", g2, 2);
	x4 = put_aa(db, art, true, "h1", "work", "fpB", DB_STATE_DONE, "invalid", g2, 2);
	put_aa(db, art, true, "h1", "work", "fpB", DB_STATE_ABANDONED, "invalid", g2, 2);
	put_aa(db, art, false, "h1", "work", "fpB", DB_STATE_DONE, "slower", g2, 2);
	put_aa(db, art, false, "h1", "plain", "fpB", DB_STATE_DONE, "slower", g2, 2);
	y1 = put_aa(db, art, true, "h2", "b", NULL, DB_STATE_DONE, "slower", g2, 2);
	put_aa(db, art, true, "h0", "a", "fpA", DB_STATE_DONE, "invalid", g2, 2);

	assert_int_equal(db_calibration_infos(db, &v, &n, NULL, NULL, 10, 100), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[0].host, "h0");
	assert_int_equal(v[0].total, 1);
	assert_int_equal(v[0].invalid, 1);
	assert_int_equal(v[0].newest_id, 0);
	assert_null(v[0].rule);
	assert_string_equal(v[1].host, "h1");
	assert_string_equal(v[1].case_name, "work");
	assert_int_equal(v[1].total, 4);
	assert_int_equal(v[1].faster, 1);
	assert_int_equal(v[1].slower, 0);
	assert_int_equal(v[1].unchanged, 1);
	assert_int_equal(v[1].unresolved, 1);
	assert_int_equal(v[1].invalid, 1);
	assert_int_equal(v[1].newest_id, x3);
	assert_string_equal(v[1].rule, "pairs-median/1");
	assert_string_equal(v[1].fingerprint, "fpB");
	assert_false(v[1].higher_better);
	assert_string_equal(v[2].host, "h2");
	assert_int_equal(v[2].newest_id, y1);
	assert_null(v[2].fingerprint);
	assert_int_equal(v[2].slower, 1);
	for (i = 0; i < n; i++)
		db_calibration_info_release(&v[i]);
	free(v);

	/* Filters, and the bounds: pairs answered, A/As counted per pair. */
	assert_int_equal(db_calibration_infos(db, &v, &n, "h1", NULL, 10, 100), 0);
	assert_int_equal(n, 1);
	db_calibration_info_release(&v[0]);
	free(v);
	assert_int_equal(db_calibration_infos(db, &v, &n, NULL, "b", 10, 100), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].host, "h2");
	db_calibration_info_release(&v[0]);
	free(v);
	assert_int_equal(db_calibration_infos(db, &v, &n, "h1", "plain", 10, 100), 0);
	assert_int_equal(n, 0);
	assert_null(v);
	assert_int_equal(db_calibration_infos(db, &v, &n, NULL, NULL, 2, 100), 0);
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++)
		db_calibration_info_release(&v[i]);
	free(v);
	assert_int_equal(db_calibration_infos(db, &v, &n, "h1", "work", 10, 2), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].total, 2);
	assert_int_equal(v[0].invalid, 1);
	assert_int_equal(v[0].unresolved, 1);
	assert_int_equal(v[0].faster, 0);
	db_calibration_info_release(&v[0]);
	free(v);

	/* The selection of fingerprint A, its gains loaded as stored. */
	assert_int_equal(db_calibration_select(db, &cal, &n, "pairs-median/1", "h1", "work", false,
					       "fpA", 120), 0);
	assert_int_equal(n, 2);
	assert_int_equal(cal[0].comparison_id, x1);
	assert_int_equal(cal[1].comparison_id, x2);
	assert_int_equal(db_calibration_load(db, cal, n), 0);
	assert_string_equal(cal[0].metric, "t_ms");
	assert_int_equal(cal[0].ngains, 3);
	assert_true(cal[0].gains[1] == -0.02);
	assert_true(isnan(cal[0].gains[2]));
	assert_int_equal(cal[1].ngains, 2);
	cal[1].comparison_id = 99999;
	assert_int_equal(db_calibration_load(db, cal, n), -ENOENT);
	for (i = 0; i < n; i++)
		db_calibration_release(&cal[i]);
	free(cal);

	/* The timeline has the comparison, not the A/As. */
	assert_int_equal(db_timeline(db, &pts, &n, "h1", "work", 100), 0);
	assert_int_equal(n, 1);
	assert_true(pts[0].id > x4);
	db_timeline_point_release(&pts[0]);
	free(pts);
	db_close(db);
	free(p);
}

/* A comparison of job (0: none) with a head median, and its verdict. */
static int64_t put_point(struct db *db, int64_t art, int64_t job, const char *case_name,
			 bool aa, enum db_state state, const char *verdict, double median)
{
	struct db_comparison c;
	struct db_summary s;
	int64_t id;

	memset(&c, 0, sizeof(c));
	snprintf(c.created_at, sizeof(c.created_at), "2026-11-04T10:00:00.000Z");
	c.rule = (char *)"pairs-median/1";
	c.case_name = (char *)case_name;
	c.host = (char *)"h1";
	c.fingerprint = (char *)"{\"device\":\"x\"}";
	c.old.id = c.new.id = art;
	c.pairs = 3;
	c.aa = aa;
	c.job_id = job;
	assert_int_equal(db_comparison_insert(db, &id, &c), 0);
	memset(&s, 0, sizeof(s));
	s.metric = (char *)"t_ms";
	snprintf(s.verdict, sizeof(s.verdict), "%s", verdict);
	s.new.set = true;
	s.new.median = median;
	assert_int_equal(db_comparison_finish(db, id, state, &s, NULL, 0), 0);
	return id;
}

static int64_t put_job(struct db *db, enum db_job_kind kind, const char *head, const char *commit)
{
	struct db_job j;
	int64_t id;

	memset(&j, 0, sizeof(j));
	j.kind = kind;
	snprintf(j.head, sizeof(j.head), "%s", head);
	snprintf(j.commit, sizeof(j.commit), "%s", commit);
	assert_int_equal(db_job_queue(db, &id, &j), 1);
	return id;
}

/* A branch's series: its head jobs' done comparisons in job order, never
 * another branch's, a span's, an A/A, an abandoned or invalid one; the
 * newest max of them. */
static void test_series(void **state)
{
	char *p = path_for("series.db");
	struct db *db = NULL;
	struct db_artifact a = { 0, (char *)"/bin/true", 1, "ab" };
	struct db_series_point pts[8];
	struct db_series_known known;
	int64_t art, j1, j2, j3, jo, js, c1, c2, c3;

	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_artifact_put(db, &art, &a), 0);
	j1 = put_job(db, DB_JOB_HEAD, "main", "1111111111111111111111111111111111111111");
	j2 = put_job(db, DB_JOB_HEAD, "main", "2222222222222222222222222222222222222222");
	jo = put_job(db, DB_JOB_HEAD, "other", "3333333333333333333333333333333333333333");
	js = put_job(db, DB_JOB_SPAN, "span:main", "2222222222222222222222222222222222222222");
	j3 = put_job(db, DB_JOB_HEAD, "main", "4444444444444444444444444444444444444444");
	/* Stored out of job order: j2's first. */
	c2 = put_point(db, art, j2, "work", false, DB_STATE_DONE, "slower", 20);
	c1 = put_point(db, art, j1, "work", false, DB_STATE_DONE, "unchanged", 10);
	put_point(db, art, j1, "other-case", false, DB_STATE_DONE, "unchanged", 11);
	put_point(db, art, jo, "work", false, DB_STATE_DONE, "unchanged", 12);
	put_point(db, art, js, "work", false, DB_STATE_DONE, "slower", 13);
	put_point(db, art, j3, "work", false, DB_STATE_ABANDONED, "invalid", 14);
	put_point(db, art, j3, "work", false, DB_STATE_DONE, "invalid", 15);
	put_point(db, art, 0, "work", false, DB_STATE_DONE, "unchanged", 16);
	put_point(db, art, 0, "work", true, DB_STATE_DONE, "unchanged", 17);
	c3 = put_point(db, art, j3, "work", false, DB_STATE_DONE, "faster", 30);

	assert_int_equal(db_series_load(db, pts, 8, "h1", "work", "main"), 3);
	assert_int_equal(pts[0].comparison_id, c1);
	assert_int_equal(pts[0].job_id, j1);
	assert_string_equal(pts[0].commit, "1111111111111111111111111111111111111111");
	assert_true(pts[0].value == 10);
	assert_string_equal(pts[0].metric, "t_ms");
	assert_int_equal(strlen(pts[0].fingerprint_hash), 12);
	assert_int_equal(pts[1].comparison_id, c2);
	assert_true(pts[1].value == 20);
	assert_int_equal(pts[2].comparison_id, c3);
	assert_true(pts[2].value == 30);
	/* The newest two. */
	assert_int_equal(db_series_load(db, pts, 2, "h1", "work", "main"), 2);
	assert_int_equal(pts[0].comparison_id, c2);
	assert_int_equal(pts[1].comparison_id, c3);
	assert_int_equal(db_series_load(db, pts, 8, "h1", "work", "nope"), 0);
	assert_int_equal(db_series_load(db, pts, 8, "h2", "work", "main"), 0);
	/* Why a series is empty: the host, its case, the branch. */
	assert_int_equal(db_series_known(db, &known, "h1", "work", "main"), 0);
	assert_true(known.host && known.case_name && known.branch);
	assert_int_equal(db_series_known(db, &known, "h1", "work", "nope"), 0);
	assert_true(known.host && known.case_name && !known.branch);
	assert_int_equal(db_series_known(db, &known, "h1", "nope", "other"), 0);
	assert_true(known.host && !known.case_name && known.branch);
	assert_int_equal(db_series_known(db, &known, "h2", "work", "span:main"), 0);
	assert_true(!known.host && !known.case_name && !known.branch);
	db_close(db);
	free(p);
}

/* An alert of this database's own agent on branch, raised or left
 * confirming. */
static int64_t put_alert(struct db *db, const char *branch, const char *hi, int64_t cid,
			 bool raise)
{
	struct db_alert a;
	int64_t id;

	memset(&a, 0, sizeof(a));
	snprintf(a.host, sizeof(a.host), "h1");
	snprintf(a.branch, sizeof(a.branch), "%s", branch);
	snprintf(a.case_name, sizeof(a.case_name), "work");
	snprintf(a.lo, sizeof(a.lo), "1111111111111111111111111111111111111111");
	snprintf(a.hi, sizeof(a.hi), "%s", hi);
	a.commits = 2;
	a.slower = true;
	a.gain = -0.05;
	a.comparison_id = cid;
	assert_int_equal(db_alert_add(db, &id, &a), 1);
	if (raise)
		assert_int_equal(db_alert_confirmed(db, id, true, cid, DB_BISECT_NONE, "ok"), 0);
	return id;
}

/* Makes comparison cid one the hub can check (DB_COMPARISON_CHECKED): of
 * host h1, at the hub, with a job and builds of 1111... and hi. */
static void make_checked(struct db *db, int64_t cid, const char *hi)
{
	char sql[2048];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO builds (host, commit_oid, tree_oid, recipe_hash, state, dir,"
		 " started_at) VALUES ('h1', '1111111111111111111111111111111111111111', 't',"
		 " 'r', 'done', 'd', 'x'), ('h1', '%s', 't', 'r', 'done', 'd', 'x');"
		 "INSERT INTO jobs (host, head, commit_oid, state, created_at, origin_id)"
		 " VALUES ('h1', 'j%lld', '%s', 'done', 'x', %lld);"
		 "INSERT INTO comparison_origins (host, origin_id, comparison_id, sha256,"
		 " received_at) VALUES ('h1', %lld, %lld, 's', 'x');"
		 "UPDATE comparisons SET job_id = (SELECT max(id) FROM jobs),"
		 " base_build = (SELECT max(id) - 1 FROM builds),"
		 " head_build = (SELECT max(id) FROM builds) WHERE id = %lld;",
		 hi, (long long)cid, hi, (long long)cid, (long long)cid, (long long)cid,
		 (long long)cid);
	assert_int_equal(sqlite3_exec(db->h, sql, NULL, NULL, NULL), SQLITE_OK);
}

static int64_t count_rows(struct db *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t n = -1;

	assert_int_equal(sqlite3_prepare_v2(db->h, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* Alerts on the forge: the raised alerts of a branch an issue is kept
 * for; an issue's row; commands taken once each, applied with the checks
 * of a triage (a fixed by a comparison in the same direction refused, the
 * triage kept), ignored ones kept out of the recent list, the issue read
 * up to the newest comment taken; only open alerts' issues read; culprits. */
static void test_alert_issues(void **state)
{
	char *p = path_for("alert-issues.db");
	struct db *db = NULL;
	struct db_artifact art = { 0, (char *)"/bin/true", 1, "ab" };
	struct db_alert_issue is, *iss = NULL;
	struct db_alert_command cmd, *cmds = NULL;
	struct db_alert_culprit cu, *cus = NULL;
	struct db_count counts[8];
	struct db_alert al;
	int64_t aid, cs, cl, cf, a1, a2, a4, *ids = NULL;
	size_t n;

	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_artifact_put(db, &aid, &art), 0);
	cs = put_point(db, aid, 0, "work", false, DB_STATE_DONE, "slower", 10);
	cl = put_point(db, aid, 0, "work", false, DB_STATE_DONE, "slower", 11);
	cf = put_point(db, aid, 0, "work", false, DB_STATE_DONE, "faster", 12);
	assert_int_equal(sqlite3_exec(db->h, "UPDATE comparisons SET created_at ="
				      " '2026-11-05T10:00:00.000Z' WHERE id > 1", NULL, NULL, NULL),
			 SQLITE_OK);
	a1 = put_alert(db, "main", "2222222222222222222222222222222222222222", cs, true);
	a2 = put_alert(db, "dev", "2222222222222222222222222222222222222222", cs, true);
	put_alert(db, "main", "3333333333333333333333333333333333333333", cs, false);
	a4 = put_alert(db, "main", "4444444444444444444444444444444444444444", cs, true);

	/* None the hub can check yet: no candidate. */
	assert_int_equal(db_alert_issue_candidates(db, &ids, &n, "main", 10), 0);
	assert_int_equal(n, 0);
	free(ids);
	/* cs made checked from 1111 to 2222: a1 alone; a4 names 4444. */
	make_checked(db, cs, "2222222222222222222222222222222222222222");
	assert_int_equal(db_alert_issue_candidates(db, &ids, &n, "main", 10), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], a1);
	free(ids);
	make_checked(db, cl, "4444444444444444444444444444444444444444");
	{
		char sql[128];

		snprintf(sql, sizeof(sql), "UPDATE alerts SET comparison_id = %lld WHERE id = %lld",
			 (long long)cl, (long long)a4);
		assert_int_equal(sqlite3_exec(db->h, sql, NULL, NULL, NULL), SQLITE_OK);
	}

	/* Raised, on main: a1 and a4 (not the one confirming), oldest first;
	 * the newest one alone. */
	assert_int_equal(db_alert_issue_candidates(db, &ids, &n, "main", 10), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ids[0], a1);
	assert_int_equal(ids[1], a4);
	free(ids);
	assert_int_equal(db_alert_issue_candidates(db, &ids, &n, "main", 1), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], a4);
	free(ids);
	assert_int_equal(db_alert_issue_candidates(db, &ids, &n, "dev", 10), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], a2);
	free(ids);

	assert_int_equal(db_alert_issue_get(db, &is, "o/r", a1), -ENOENT);
	assert_int_equal(is.alert_id, a1);
	assert_int_equal(is.number, 0);
	is.unsure = true;
	assert_int_equal(db_alert_issue_put(db, "o/r", &is), 0);
	assert_int_equal(db_alert_issue_get(db, &is, "o/r", a1), 0);
	assert_true(is.unsure);
	assert_int_equal(db_alert_issue_get(db, &is, "o/other", a1), -ENOENT);
	/* Not made yet: nothing to read. */
	assert_int_equal(db_alert_issues_to_read(db, &iss, &n, "o/r", 10), 0);
	assert_int_equal(n, 0);
	is.unsure = false;
	is.number = 12;
	snprintf(is.body_sha256, sizeof(is.body_sha256), "%064d", 7);
	assert_int_equal(db_alert_issue_put(db, "o/r", &is), 0);
	assert_int_equal(db_alert_issues_to_read(db, &iss, &n, "o/r", 10), 0);
	assert_int_equal(n, 1);
	assert_int_equal(iss[0].alert_id, a1);
	assert_int_equal(iss[0].number, 12);
	assert_false(iss[0].closed);
	assert_int_equal(iss[0].body_sha256[63], '7');
	free(iss);

	/* Applied, by the login. */
	memset(&cmd, 0, sizeof(cmd));
	cmd.alert_id = a1;
	cmd.comment_id = 500;
	snprintf(cmd.login, sizeof(cmd.login), "alice");
	snprintf(cmd.command, sizeof(cmd.command), "/perfd triage acknowledged");
	assert_int_equal(db_alert_command_take(db, "o/r", &cmd, true, DB_TRIAGE_ACKNOWLEDGED, 0,
					       "2026-11-05T11:00:00Z"), 0);
	assert_int_equal(cmd.outcome, DB_COMMAND_APPLIED);
	assert_int_equal(db_alert_get(db, &al, a1), 0);
	assert_int_equal(al.triage, DB_TRIAGE_ACKNOWLEDGED);
	assert_string_equal(al.triage_by, "alice");
	db_alert_release(&al);
	assert_int_equal(db_alert_issue_get(db, &is, "o/r", a1), 0);
	assert_int_equal(is.comment_id, 500);
	assert_string_equal(is.since, "2026-11-05T11:00:00Z");
	/* The same comment again: nothing. */
	cmd.outcome = DB_COMMAND_IGNORED;
	assert_int_equal(db_alert_command_take(db, "o/r", &cmd, true, DB_TRIAGE_NEW, 0, NULL), 0);
	assert_int_equal(count_rows(db, "SELECT count(*) FROM alert_commands"), 1);
	assert_int_equal(db_alert_get(db, &al, a1), 0);
	assert_int_equal(al.triage, DB_TRIAGE_ACKNOWLEDGED);
	db_alert_release(&al);

	/* Fixed by a later comparison that says slower too: refused, kept. */
	cmd.comment_id = 501;
	cmd.outcome = DB_COMMAND_APPLIED;
	assert_int_equal(db_alert_command_take(db, "o/r", &cmd, true, DB_TRIAGE_FIXED, cl,
					       "2026-11-05T11:00:01Z"), 0);
	assert_int_equal(cmd.outcome, DB_COMMAND_REFUSED);
	assert_non_null(strstr(cmd.detail, "says slower"));
	assert_int_equal(db_alert_get(db, &al, a1), 0);
	assert_int_equal(al.triage, DB_TRIAGE_ACKNOWLEDGED);
	db_alert_release(&al);
	/* Someone who may not: kept out of the recent ones. */
	db_alert_command_release(&cmd);
	cmd.comment_id = 502;
	snprintf(cmd.login, sizeof(cmd.login), "mallory");
	cmd.outcome = DB_COMMAND_IGNORED;
	assert_int_equal(db_alert_command_take(db, "o/r", &cmd, false, DB_TRIAGE_NEW, 0,
					       "2026-11-05T11:00:02Z"), 0);
	assert_int_equal(cmd.outcome, DB_COMMAND_IGNORED);
	snprintf(cmd.login, sizeof(cmd.login), "bob");
	cmd.comment_id = 503;
	assert_int_equal(db_alert_command_take(db, "o/r", &cmd, true, DB_TRIAGE_FIXED, cf,
					       "2026-11-05T11:00:03Z"), 0);
	assert_int_equal(cmd.outcome, DB_COMMAND_APPLIED);
	assert_int_equal(db_alert_get(db, &al, a1), 0);
	assert_int_equal(al.triage, DB_TRIAGE_FIXED);
	assert_int_equal(al.fixed_by, cf);
	assert_string_equal(al.triage_by, "bob");
	db_alert_release(&al);
	assert_int_equal(db_alert_commands_recent(db, &cmds, &n, "o/r", a1, 2), 0);
	assert_int_equal(n, 2);
	assert_int_equal(cmds[0].comment_id, 501);
	assert_int_equal(cmds[0].outcome, DB_COMMAND_REFUSED);
	assert_non_null(strstr(cmds[0].detail, "says slower"));
	assert_int_equal(cmds[1].comment_id, 503);
	assert_string_equal(cmds[1].login, "bob");
	assert_null(cmds[1].detail);
	db_alert_command_release(&cmds[0]);
	db_alert_command_release(&cmds[1]);
	free(cmds);
	assert_int_equal(db_alert_issue_get(db, &is, "o/r", a1), 0);
	assert_int_equal(is.comment_id, 503);
	/* Fixed: no longer read. */
	assert_int_equal(db_alert_issues_to_read(db, &iss, &n, "o/r", 10), 0);
	assert_int_equal(n, 0);
	assert_int_equal(db_count(db, counts, ARRAY_SIZE(counts), DB_COUNT_ALERT_COMMANDS), 3);
	assert_string_equal(counts[0].key, "applied");
	assert_int_equal(counts[0].n, 2);
	assert_string_equal(counts[1].key, "ignored");
	assert_int_equal(counts[1].n, 1);
	assert_string_equal(counts[2].key, "refused");
	assert_int_equal(counts[2].n, 1);

	memset(&cu, 0, sizeof(cu));
	cu.alert_id = a4;
	snprintf(cu.commit, sizeof(cu.commit), "4444444444444444444444444444444444444444");
	cu.pr = 9;
	cu.unsure = true;
	assert_int_equal(db_alert_culprit_put(db, "o/r", &cu), 0);
	cu.unsure = false;
	cu.comment_id = 77;
	assert_int_equal(db_alert_culprit_put(db, "o/r", &cu), 0);
	snprintf(cu.commit, sizeof(cu.commit), "3333333333333333333333333333333333333333");
	cu.pr = 0;
	cu.comment_id = 0;
	assert_int_equal(db_alert_culprit_put(db, "o/r", &cu), 0);
	assert_int_equal(db_alert_culprits(db, &cus, &n, "o/r", a4), 0);
	assert_int_equal(n, 2);
	assert_int_equal(cus[0].pr, 0);
	assert_int_equal(cus[1].pr, 9);
	assert_int_equal(cus[1].comment_id, 77);
	assert_false(cus[1].unsure);
	free(cus);
	assert_int_equal(db_alert_culprits(db, &cus, &n, "o/other", a4), 0);
	assert_int_equal(n, 0);
	db_close(db);
	free(p);
}

static void test_host_round_trip(void **state)
{
	char *p = path_for("hosts.db");
	struct db *db = NULL;
	struct db_host h, *hosts;
	struct db_host_info *infos;
	struct db_count counts[2];
	size_t n;

	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_host_quarantine(db, "gpu0", "amdgpu: ring gfx timeout", 7, 3), 0);
	assert_int_equal(db_host_load(db, &h, "gpu0"), 0);
	assert_string_equal(h.name, "gpu0");
	assert_true(h.quarantined);
	assert_string_equal(h.fault, "amdgpu: ring gfx timeout");
	assert_true(h.since[0] != '\0');
	assert_int_equal(h.comparison_id, 7);
	assert_int_equal(h.seq, 3);
	assert_string_equal(h.cleared_at, "");
	db_host_release(&h);

	assert_int_equal(db_host_clear(db, "gpu0"), 1);
	assert_int_equal(db_host_clear(db, "gpu0"), 0);
	assert_int_equal(db_host_load(db, &h, "gpu0"), 0);
	assert_false(h.quarantined);
	assert_true(h.cleared_at[0] != '\0');
	db_host_release(&h);

	assert_int_equal(db_host_quarantine(db, "gpu1", "xe: GT reset", 8, 1), 0);
	assert_int_equal(db_host_list(db, &hosts, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(hosts[0].name, "gpu0");
	assert_false(hosts[0].quarantined);
	assert_string_equal(hosts[1].name, "gpu1");
	assert_true(hosts[1].quarantined);
	assert_string_equal(hosts[1].fault, "xe: GT reset");
	db_host_release(&hosts[0]);
	db_host_release(&hosts[1]);
	free(hosts);

	assert_int_equal(db_host_infos(db, &infos, &n, 10), 0);
	assert_int_equal(n, 2);
	assert_string_equal(infos[1].name, "gpu1");
	assert_true(infos[1].quarantined);
	assert_string_equal(infos[1].fault, "xe: GT reset");
	assert_string_equal(infos[1].heartbeat, "");
	assert_null(infos[1].fingerprint);
	db_host_info_release(&infos[0]);
	db_host_info_release(&infos[1]);
	free(infos);
	assert_int_equal(db_host_infos(db, &infos, &n, 1), 0);
	assert_int_equal(n, 1);
	db_host_info_release(&infos[0]);
	free(infos);

	assert_int_equal(db_count(db, counts, ARRAY_SIZE(counts), DB_COUNT_QUARANTINED), 1);
	assert_string_equal(counts[0].key, "quarantined");
	assert_int_equal(counts[0].n, 1);
	db_close(db);
	free(p);
}

/* Each host's newest heartbeat keeps its sandbox; the hosts whose newest
 * says none are counted. */
static void test_host_status_sandbox(void **state)
{
	static const char *const said[] = { "bubblewrap", "none: [sandbox] mode = off", NULL };
	char *p = path_for("status.db");
	struct db *db = NULL;
	struct db_host_status s, got;
	struct db_host_info *infos;
	struct db_count counts[2];
	bool stored;
	size_t n, i;

	assert_int_equal(db_open(&db, p, 1000), 0);
	for (i = 0; i < ARRAY_SIZE(said); i++) {
		memset(&s, 0, sizeof(s));
		snprintf(s.host, sizeof(s.host), "h%zu", i);
		s.seq = 10;
		snprintf(s.sent_at, sizeof(s.sent_at), "2026-12-01T03:54:10.123Z");
		snprintf(s.state, sizeof(s.state), "idle");
		s.sandbox = (char *)said[i];
		assert_int_equal(db_host_status_put(db, &s, &stored), 0);
		assert_true(stored);
	}
	assert_int_equal(db_host_status_get(db, &got, "h1"), 0);
	assert_string_equal(got.sandbox, said[1]);
	db_host_status_release(&got);
	assert_int_equal(db_count(db, counts, ARRAY_SIZE(counts), DB_COUNT_UNSANDBOXED), 1);
	assert_string_equal(counts[0].key, "unsandboxed");
	assert_int_equal(counts[0].n, 1);

	/* An older heartbeat changes nothing; a newer one replaces it. */
	s.seq = 9;
	snprintf(s.host, sizeof(s.host), "h1");
	s.sandbox = (char *)"bubblewrap";
	assert_int_equal(db_host_status_put(db, &s, &stored), 0);
	assert_false(stored);
	snprintf(s.host, sizeof(s.host), "h0");
	s.seq = 11;
	s.sandbox = (char *)"none";
	assert_int_equal(db_host_status_put(db, &s, &stored), 0);
	assert_true(stored);
	assert_int_equal(db_count(db, counts, ARRAY_SIZE(counts), DB_COUNT_UNSANDBOXED), 1);
	assert_int_equal(counts[0].n, 2);

	assert_int_equal(db_host_infos(db, &infos, &n, 10), 0);
	assert_int_equal(n, 3);
	assert_string_equal(infos[0].sandbox, "none");
	assert_string_equal(infos[1].sandbox, said[1]);
	assert_null(infos[2].sandbox);
	for (i = 0; i < n; i++)
		db_host_info_release(&infos[i]);
	free(infos);
	db_close(db);
	free(p);
}

#define OID_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define OID_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define OID_C "c0ffee0000000000000000000000000000000000"

static void free_hub_holds(struct db_hub_hold *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		db_hub_hold_release(&v[i]);
	free(v);
}

/* The holds a host's heartbeats list, at a hub: the set in force follows
 * the newest list, those dropped kept as released; a green light is
 * recorded once, on a hold in force; each with its host's kind. */
static void test_hub_holds(void **state)
{
	char *p = path_for("hub-holds.db");
	struct db *db = NULL;
	struct db_host_status s = { .seq = 1, .state = "idle", .kind = (char *)"GFX1201" };
	struct db_hub_hold said[2] = {
		{ .origin_id = 7, .why = DB_HOLD_WENT_DOWN, .step = DB_HOLD_CASE, .commit = OID_A,
		  .since = "2026-12-01T03:54:10.123Z", .text = (char *)"went down" },
		{ .origin_id = 8, .why = DB_HOLD_GATE, .step = DB_HOLD_JOB, .commit = OID_B,
		  .since = "2026-12-01T03:55:10.123Z", .text = (char *)"gated" },
	}, *v = NULL;
	struct db_count counts[4];
	bool changed, stored;
	size_t n;

	assert_int_equal(db_open(&db, p, 1000), 0);
	snprintf(s.host, sizeof(s.host), "gfx-a");
	snprintf(s.sent_at, sizeof(s.sent_at), "2026-12-01T03:54:10.123Z");
	assert_int_equal(db_host_status_put(db, &s, &stored), 0);
	assert_int_equal(db_hub_holds_set(db, "gfx-a", said, 2, &changed), 0);
	assert_true(changed);
	assert_int_equal(db_hub_holds_set(db, "gfx-a", said, 2, &changed), 0);
	assert_false(changed);
	assert_int_equal(db_hub_holds_list(db, &v, &n, NULL, OID_A, NULL), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].host, "gfx-a");
	assert_int_equal(v[0].origin_id, 7);
	assert_int_equal(v[0].why, DB_HOLD_WENT_DOWN);
	assert_int_equal(v[0].step, DB_HOLD_CASE);
	assert_string_equal(v[0].text, "went down");
	assert_string_equal(v[0].kind, "GFX1201");
	assert_true(v[0].in_force);
	assert_string_equal(v[0].greenlit_by, "");
	free_hub_holds(v, n);
	assert_int_equal(db_hub_holds_list(db, &v, &n, "gfx-a", OID_C, OID_B), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].origin_id, 8);
	free_hub_holds(v, n);
	assert_int_equal(db_count(db, counts, ARRAY_SIZE(counts), DB_COUNT_HELD), 2);

	/* Green lit once; a second word changes nothing. */
	assert_int_equal(db_hub_hold_greenlight(db, "gfx-a", 7, "alice", 5, 41), 1);
	assert_int_equal(db_hub_hold_greenlight(db, "gfx-a", 7, "bob", 5, 42), 0);
	assert_int_equal(db_hub_hold_greenlight(db, "gfx-b", 7, "bob", 5, 42), 0);
	assert_int_equal(db_hub_holds_list(db, &v, &n, "gfx-a", NULL, NULL), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[n - 1].greenlit_by, "alice");
	assert_int_equal(v[n - 1].greenlit_pr, 5);
	free_hub_holds(v, n);

	/* The host released 7: no longer in force, and no green light for it. */
	assert_int_equal(db_hub_holds_set(db, "gfx-a", &said[1], 1, &changed), 0);
	assert_true(changed);
	assert_int_equal(db_hub_holds_list(db, &v, &n, NULL, OID_A, NULL), 0);
	assert_int_equal(n, 0);
	free_hub_holds(v, n);
	assert_int_equal(db_hub_hold_greenlight(db, "gfx-a", 7, "bob", 5, 43), 0);
	assert_int_equal(db_hub_holds_set(db, "gfx-a", NULL, 0, &changed), 0);
	assert_true(changed);
	assert_int_equal(db_count(db, counts, ARRAY_SIZE(counts), DB_COUNT_HELD), 0);
	db_close(db);
	free(p);
	(void)state;
}

/* Heads and jobs, as the agent writes them and the hub reads them. */
static void test_head_job_round_trip(void **state)
{
	char *p = path_for("jobs.db");
	const char *keep[1] = { "refs/heads/main" };
	struct db *db = NULL;
	struct db_job j, jobs[4];
	struct db_head_info *heads;
	struct db_count counts[4];
	char oid[DB_OID_HEX];
	int64_t j1, j2, jx;
	size_t n;

	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_head_set(db, "refs/heads/main", OID_A, false), 0);
	assert_int_equal(db_head_set(db, "refs/pull/7/head", OID_B, true), 0);
	assert_int_equal(db_head_get(db, oid, "refs/heads/main"), 0);
	assert_string_equal(oid, OID_A);
	assert_int_equal(db_head_set(db, "refs/heads/main", OID_C, false), 0);
	assert_int_equal(db_head_get(db, oid, "refs/heads/main"), 0);
	assert_string_equal(oid, OID_C);

	assert_int_equal(db_job_add(db, &j1, "refs/heads/main", OID_C, OID_A, "speed up"), 1);
	jx = -1;
	assert_int_equal(db_job_add(db, &jx, "refs/heads/main", OID_C, OID_A, "again"), 0);
	assert_int_equal(jx, j1);  /* the job that was there */
	assert_int_equal(db_job_add(db, &j2, "refs/pull/7/head", OID_B, "", "a pull"), 1);
	assert_int_equal(db_job_get(db, &j, "refs/heads/main", OID_C), 0);
	assert_int_equal(j.id, j1);
	assert_string_equal(j.head, "refs/heads/main");
	assert_string_equal(j.commit, OID_C);
	assert_string_equal(j.base, OID_A);
	assert_string_equal(j.subject, "speed up");
	assert_int_equal(j.state, DB_JOB_QUEUED);
	assert_null(j.detail);
	db_job_release(&j);
	assert_int_equal(db_job_get(db, &j, "refs/pull/7/head", OID_B), 0);
	assert_string_equal(j.base, "");
	db_job_release(&j);

	assert_int_equal(db_job_next(db, &j), 0);
	assert_int_equal(j.id, j1);
	db_job_release(&j);
	assert_int_equal(db_job_set_state(db, j1, DB_JOB_RUNNING, NULL), 0);
	assert_int_equal(db_job_next(db, &j), 0);
	assert_int_equal(j.id, j1);
	assert_int_equal(j.state, DB_JOB_RUNNING);
	db_job_release(&j);
	assert_int_equal(db_job_set_state(db, j1, DB_JOB_DONE, "1 case"), 0);
	assert_int_equal(db_job_next(db, &j), 0);
	assert_int_equal(j.id, j2);
	db_job_release(&j);

	assert_int_equal(db_job_list(db, jobs, ARRAY_SIZE(jobs)), 2);
	assert_int_equal(jobs[0].id, j2);
	assert_int_equal(jobs[1].id, j1);
	assert_int_equal(jobs[1].state, DB_JOB_DONE);
	assert_string_equal(jobs[1].detail, "1 case");
	db_job_release(&jobs[0]);
	db_job_release(&jobs[1]);
	assert_int_equal(db_job_list(db, jobs, 1), 1);
	db_job_release(&jobs[0]);
	assert_int_equal(db_commit_jobs(db, jobs, ARRAY_SIZE(jobs), OID_C), 1);
	assert_int_equal(jobs[0].id, j1);
	db_job_release(&jobs[0]);

	assert_int_equal(db_head_infos(db, &heads, &n, 10), 0);
	assert_int_equal(n, 2);
	assert_string_equal(heads[0].name, "refs/heads/main");
	assert_string_equal(heads[0].oid, OID_C);
	assert_false(heads[0].is_pull);
	assert_true(heads[0].seen_at[0] != '\0');
	assert_int_equal(heads[0].job_id, j1);
	assert_string_equal(heads[0].job_state, "done");
	assert_string_equal(heads[0].job_detail, "1 case");
	assert_string_equal(heads[0].subject, "speed up");
	assert_string_equal(heads[1].name, "refs/pull/7/head");
	assert_true(heads[1].is_pull);
	assert_int_equal(heads[1].job_id, j2);
	assert_string_equal(heads[1].job_state, "queued");
	db_head_info_release(&heads[0]);
	db_head_info_release(&heads[1]);
	free(heads);

	assert_int_equal(db_heads_keep_only(db, keep, 1), 0);
	assert_int_equal(db_head_get(db, oid, "refs/pull/7/head"), -ENOENT);
	assert_int_equal(db_head_get(db, oid, "refs/heads/main"), 0);
	/* The jobs of a forgotten head stay. */
	assert_int_equal(db_job_get(db, &j, "refs/pull/7/head", OID_B), 0);
	db_job_release(&j);

	assert_int_equal(db_count(db, counts, ARRAY_SIZE(counts), DB_COUNT_JOBS), 2);
	assert_string_equal(counts[0].key, "done");
	assert_int_equal(counts[0].n, 1);
	assert_string_equal(counts[1].key, "queued");
	assert_int_equal(counts[1].n, 1);
	db_close(db);
	free(p);
}

/* A build with its artifacts, a contract runner's results with their
 * lines, and a comparison tied to the job and its builds. */
/* A build of OID_C (tree OID_B, recipe r1) on gpu0, started, not stored. */
static void build_init(struct db_build *b)
{
	memset(b, 0, sizeof(*b));
	snprintf(b->host, sizeof(b->host), "gpu0");
	snprintf(b->commit, sizeof(b->commit), OID_C);
	snprintf(b->tree, sizeof(b->tree), OID_B);
	snprintf(b->recipe_hash, sizeof(b->recipe_hash), "r1");
	b->dir = (char *)"/w/b1";
	snprintf(b->started_at, sizeof(b->started_at), "2026-11-04T09:00:00.000Z");
}

static void test_build_runner_round_trip(void **state)
{
	char *p = path_for("builds.db");
	struct db *db = NULL;
	struct db_artifact prog = { 0, (char *)"/w/b1/prog", 9000, "11" };
	struct db_artifact check = { 0, (char *)"/w/b1/check.sh", 40, "22" };
	struct db_build_artifact arts[2];
	struct db_build b, l;
	struct db_runner_result r, *res;
	struct db_line lines[2] = {
		{ (char *)"RESULT", (char *)"RESULT t1 on \"d\": passed=3" },
		{ (char *)"SUMMARY", (char *)"SUMMARY passed=3 failed=0" },
	};
	struct db_comparison c, cl;
	struct db_summary s;
	struct db_job_info infos[4];
	struct db_comparison_entry ents[4];
	struct db_comparison_filter f;
	struct db_host_info *hosts;
	struct db_count counts[4];
	enum db_state cstate;
	int64_t job, bid, bid2, bid3, rid, rid2, cid, cid2, ids[4];
	size_t n;

	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_job_add(db, &job, "refs/heads/main", OID_C, OID_A, "speed up"), 1);

	build_init(&b);
	b.fingerprint = (char *)"fp-build";
	assert_int_equal(db_build_insert(db, &bid, &b), 0);
	assert_int_equal(db_build_find(db, &l, "gpu0", OID_B, "r1"), 0);
	assert_int_equal(l.id, bid);
	assert_int_equal(l.state, DB_BUILD_RUNNING);
	assert_int_equal(l.nartifacts, 0);
	db_build_release(&l);

	assert_int_equal(db_artifact_put(db, &prog.id, &prog), 0);
	assert_int_equal(db_artifact_put(db, &check.id, &check), 0);
	arts[0] = (struct db_build_artifact){ (char *)"prog", prog };
	arts[1] = (struct db_build_artifact){ (char *)"check.sh", check };
	b.id = bid;
	b.state = DB_BUILD_DONE;
	snprintf(b.finished_at, sizeof(b.finished_at), "2026-11-04T09:00:01.500Z");
	b.exit_code = 0;
	b.signal = 0;
	b.timed_out = false;
	b.wall_ms = 1500;
	b.log = (char *)"cc -O1 -o prog prog.c\n";
	b.log_len = strlen(b.log);
	b.log_bytes = 4096;
	b.toolchain = (char *)"cc 12.2";
	b.detail = NULL;
	b.artifacts = arts;
	b.nartifacts = 2;
	assert_int_equal(db_build_finish(db, &b), 0);

	assert_int_equal(db_build_load(db, &l, bid), 0);
	assert_int_equal(l.id, bid);
	assert_string_equal(l.host, "gpu0");
	assert_string_equal(l.commit, OID_C);
	assert_string_equal(l.tree, OID_B);
	assert_string_equal(l.recipe_hash, "r1");
	assert_int_equal(l.state, DB_BUILD_DONE);
	assert_string_equal(l.dir, "/w/b1");
	assert_string_equal(l.started_at, "2026-11-04T09:00:00.000Z");
	assert_string_equal(l.finished_at, "2026-11-04T09:00:01.500Z");
	assert_int_equal(l.exit_code, 0);
	assert_int_equal(l.signal, 0);
	assert_false(l.timed_out);
	assert_true(l.wall_ms == 1500);
	assert_int_equal(l.log_len, strlen("cc -O1 -o prog prog.c\n"));
	assert_string_equal(l.log, "cc -O1 -o prog prog.c\n");
	assert_int_equal(l.log_bytes, 4096);
	assert_string_equal(l.toolchain, "cc 12.2");
	assert_string_equal(l.fingerprint, "fp-build");
	assert_null(l.detail);
	/* Artifacts come back by name. */
	assert_int_equal(l.nartifacts, 2);
	assert_string_equal(l.artifacts[0].name, "check.sh");
	assert_int_equal(l.artifacts[0].artifact.id, check.id);
	assert_string_equal(l.artifacts[0].artifact.path, "/w/b1/check.sh");
	assert_int_equal(l.artifacts[0].artifact.size, 40);
	assert_string_equal(l.artifacts[0].artifact.sha256, "22");
	assert_string_equal(l.artifacts[1].name, "prog");
	assert_string_equal(l.artifacts[1].artifact.sha256, "11");
	db_build_release(&l);
	assert_int_equal(db_build_count(db, DB_BUILD_DONE), 1);
	/* Abandoning touches a running build alone. */
	assert_int_equal(db_build_abandon(db, bid), 0);
	assert_int_equal(db_build_load(db, &l, bid), 0);
	assert_int_equal(l.state, DB_BUILD_DONE);
	db_build_release(&l);
	assert_int_equal(db_build_insert(db, &bid2, &b), 0);
	assert_int_equal(db_build_abandon(db, bid2), 0);
	assert_int_equal(db_build_load(db, &l, bid2), 0);
	assert_int_equal(l.state, DB_BUILD_ABANDONED);
	db_build_release(&l);
	assert_int_equal(db_build_find(db, &l, "gpu0", OID_B, "r1"), 0);
	assert_int_equal(l.id, bid);
	db_build_release(&l);

	memset(&r, 0, sizeof(r));
	r.build_id = bid;
	snprintf(r.runner, sizeof(r.runner), "contract");
	r.chunk = 1;
	r.chunks = 2;
	r.binary_sha256 = (char *)"11";
	snprintf(r.started_at, sizeof(r.started_at), "2026-11-04T09:00:02.000Z");
	assert_int_equal(db_runner_result_insert(db, &rid, &r), 0);
	assert_int_equal(db_runner_result_done(db, bid, "contract", 1), 0);
	r.id = rid;
	snprintf(r.ended_at, sizeof(r.ended_at), "2026-11-04T09:00:02.500Z");
	r.exit_code = 1;
	r.signal = 0;
	r.timed_out = true;
	r.elapsed_ms = 500.5;
	r.spawn_error = (char *)"none really";
	r.output = (char *)"RESULT t1\n";
	r.output_len = strlen(r.output);
	r.lines = lines;
	r.nlines = 2;
	assert_int_equal(db_runner_result_finish(db, &r), 0);
	assert_int_equal(db_runner_result_done(db, bid, "contract", 1), 1);
	assert_int_equal(db_runner_result_done(db, bid, "contract", 2), 0);
	r.chunk = 2;
	assert_int_equal(db_runner_result_insert(db, &rid2, &r), 0);

	/* Only the finished result is loaded; its output is not. */
	assert_int_equal(db_runner_results_load(db, &res, &n, bid), 0);
	assert_int_equal(n, 1);
	assert_int_equal(res[0].id, rid);
	assert_int_equal(res[0].build_id, bid);
	assert_string_equal(res[0].runner, "contract");
	assert_int_equal(res[0].chunk, 1);
	assert_int_equal(res[0].chunks, 2);
	assert_int_equal(res[0].state, DB_STATE_DONE);
	assert_string_equal(res[0].binary_sha256, "11");
	assert_string_equal(res[0].started_at, "2026-11-04T09:00:02.000Z");
	assert_string_equal(res[0].ended_at, "2026-11-04T09:00:02.500Z");
	assert_int_equal(res[0].exit_code, 1);
	assert_int_equal(res[0].signal, 0);
	assert_true(res[0].timed_out);
	assert_true(res[0].elapsed_ms == 500.5);
	assert_string_equal(res[0].spawn_error, "none really");
	assert_null(res[0].output);
	assert_int_equal(res[0].nlines, 2);
	assert_string_equal(res[0].lines[0].kind, "RESULT");
	assert_string_equal(res[0].lines[0].text, lines[0].text);
	assert_string_equal(res[0].lines[1].kind, "SUMMARY");
	assert_string_equal(res[0].lines[1].text, lines[1].text);
	db_runner_result_release(&res[0]);
	free(res);

	/* A killed agent's running build and runner result are abandoned;
	 * those of a perfd that runs (this one) are not. */
	assert_int_equal(db_build_insert(db, &bid3, &b), 0);
	assert_int_equal(db_abandon_running(db, true), 0);
	{
		char gone[OWNER_LEN + 32], sql[256];
		unsigned long long start, ns;
		char boot[40];
		long pid;

		assert_int_equal(sscanf(db->owner, "%ld %llu %llu %39s", &pid, &start, &ns,
					boot), 4);
		assert_false(owner_is_gone(db->owner));
		/* The same pid, started at another time: another process. */
		snprintf(gone, sizeof(gone), "%ld %llu %llu %s", pid, start + 1, ns, boot);
		assert_true(owner_is_gone(gone));
		snprintf(sql, sizeof(sql), "UPDATE builds SET owner = '%s' WHERE id = %lld;"
			 "UPDATE runner_results SET owner = NULL WHERE state = 'running'",
			 gone, (long long)bid3);
		assert_int_equal(sqlite3_exec(db->h, sql, NULL, NULL, NULL), SQLITE_OK);
	}
	/* The build's perfd is gone; the runner result names none, which
	 * only the agent (unowned) takes for its own. */
	assert_int_equal(db_abandon_running(db, false), 1);
	assert_int_equal(db_abandon_running(db, true), 1);
	assert_int_equal(db_build_load(db, &l, bid3), 0);
	assert_int_equal(l.state, DB_BUILD_ABANDONED);
	assert_non_null(strstr(l.detail, "ended before it finished"));
	db_build_release(&l);
	assert_int_equal(db_abandon_running(db, true), 0);
	assert_int_equal(db_count(db, counts, ARRAY_SIZE(counts), DB_COUNT_BUILDS), 2);
	assert_string_equal(counts[0].key, "abandoned");
	assert_int_equal(counts[0].n, 2);
	assert_string_equal(counts[1].key, "done");

	/* A comparison of the job, between its base's and head's builds. */
	memset(&c, 0, sizeof(c));
	snprintf(c.created_at, sizeof(c.created_at), "2026-11-04T09:00:03.000Z");
	c.rule = (char *)"pairs-median/1";
	c.case_name = (char *)"work";
	c.host = (char *)"gpu0";
	c.fingerprint = (char *)"fp-cmp";
	c.old.id = c.new.id = prog.id;
	c.pairs = 3;
	c.job_id = job;
	c.base_build = bid;
	c.head_build = bid;
	assert_int_equal(db_comparison_insert(db, &cid, &c), 0);
	assert_int_equal(db_job_comparison(db, &cid2, &cstate, job, "work"), 0);
	assert_int_equal(cid2, cid);
	assert_int_equal(cstate, DB_STATE_RUNNING);
	assert_int_equal(db_commit_comparison_ids(db, ids, ARRAY_SIZE(ids), OID_C), 0);
	memset(&s, 0, sizeof(s));
	snprintf(s.verdict, sizeof(s.verdict), "faster");
	s.has_gain = true;
	s.gain_median = 0.03;
	assert_int_equal(db_comparison_finish(db, cid, DB_STATE_DONE, &s, NULL, 0), 0);
	assert_int_equal(db_job_comparison(db, &cid2, &cstate, job, "work"), 0);
	assert_int_equal(cstate, DB_STATE_DONE);
	assert_int_equal(db_job_comparison(db, &cid2, &cstate, job, "other"), -ENOENT);
	assert_int_equal(db_commit_comparison_ids(db, ids, ARRAY_SIZE(ids), OID_C), 1);
	assert_int_equal(ids[0], cid);
	assert_int_equal(db_commit_comparison_ids(db, ids, ARRAY_SIZE(ids), OID_A), 0);

	assert_int_equal(db_comparison_load(db, &cl, cid), 0);
	assert_int_equal(cl.job_id, job);
	assert_int_equal(cl.base_build, bid);
	assert_int_equal(cl.head_build, bid);
	assert_string_equal(cl.job_head, "refs/heads/main");
	assert_string_equal(cl.job_commit, OID_C);
	assert_string_equal(cl.job_base, OID_A);
	db_comparison_release(&cl);

	assert_int_equal(db_job_infos(db, infos, ARRAY_SIZE(infos), 0), 1);
	assert_int_equal(infos[0].id, job);
	assert_string_equal(infos[0].head, "refs/heads/main");
	assert_string_equal(infos[0].commit, OID_C);
	assert_string_equal(infos[0].base, OID_A);
	assert_string_equal(infos[0].subject, "speed up");
	assert_string_equal(infos[0].state, "queued");
	assert_true(infos[0].created_at[0] != '\0');
	assert_string_equal(infos[0].started_at, "");
	assert_int_equal(infos[0].ncomparisons, 1);
	assert_int_equal(infos[0].comparisons[0].id, cid);
	assert_string_equal(infos[0].comparisons[0].case_name, "work");
	assert_string_equal(infos[0].comparisons[0].verdict, "faster");
	assert_true(infos[0].comparisons[0].has_gain);
	assert_true(infos[0].comparisons[0].gain_median == 0.03);
	db_job_info_release(&infos[0]);
	assert_int_equal(db_job_infos(db, infos, ARRAY_SIZE(infos), job), 0);

	memset(&f, 0, sizeof(f));
	f.commit = "c0ffee";
	assert_int_equal(db_comparison_find(db, ents, ARRAY_SIZE(ents), &f), 1);
	assert_int_equal(ents[0].row.id, cid);
	assert_int_equal(ents[0].job_id, job);
	assert_string_equal(ents[0].head, "refs/heads/main");
	assert_string_equal(ents[0].commit, OID_C);
	f.commit = "c0ffef";
	assert_int_equal(db_comparison_find(db, ents, ARRAY_SIZE(ents), &f), 0);

	/* The host's heartbeat and fingerprint are its newest row's. */
	assert_int_equal(db_host_infos(db, &hosts, &n, 10), 0);
	assert_int_equal(n, 1);
	assert_string_equal(hosts[0].name, "gpu0");
	assert_false(hosts[0].quarantined);
	assert_true(hosts[0].heartbeat[0] != '\0');
	assert_string_equal(hosts[0].fingerprint, "fp-cmp");
	db_host_info_release(&hosts[0]);
	free(hosts);
	db_close(db);
	free(p);
}

/* What perfd said on a pull request's host: comment, status, approval and
 * the head first seen. */
static void test_pulls_round_trip(void **state)
{
	char *p = path_for("pulls.db");
	struct db *db = NULL;
	struct db_pull_comment c, l;
	char st[16], *desc, *approver;
	int64_t t, last;

	assert_int_equal(db_open(&db, p, 1000), 0);
	memset(&c, 0, sizeof(c));
	c.comment_id = 1234;
	snprintf(c.commit, sizeof(c.commit), OID_C);
	snprintf(c.body_sha256, sizeof(c.body_sha256), "beef");
	c.recreated = 1;
	assert_int_equal(db_pull_comment_put(db, "o/r", 7, "", &c), 0);
	assert_int_equal(db_pull_comment_get(db, &l, "o/r", 7, ""), 0);
	assert_int_equal(l.comment_id, 1234);
	assert_string_equal(l.commit, OID_C);
	assert_string_equal(l.body_sha256, "beef");
	assert_int_equal(l.recreated, 1);
	assert_false(l.muted);
	assert_int_equal(db_pull_comment_get(db, &l, "o/r", 7, "host-b"), -ENOENT);
	assert_int_equal(db_pull_comment_get(db, &l, "o/r", 8, ""), -ENOENT);
	c.muted = true;
	c.comment_id = 0;
	c.body_sha256[0] = '\0';
	assert_int_equal(db_pull_comment_put(db, "o/r", 7, "", &c), 0);
	assert_int_equal(db_pull_comment_get(db, &l, "o/r", 7, ""), 0);
	assert_true(l.muted);
	assert_int_equal(l.comment_id, 0);
	assert_string_equal(l.body_sha256, "");

	assert_int_equal(db_commit_status_put(db, "o/r", OID_C, "perfd/gpu0", "pending",
					      "queued", "http://hub/jobs/1"), 0);
	assert_int_equal(db_commit_status_get(db, st, &desc, "o/r", OID_C, "perfd/gpu0"), 0);
	assert_string_equal(st, "pending");
	assert_string_equal(desc, "queued");
	free(desc);
	assert_int_equal(db_commit_status_put(db, "o/r", OID_C, "perfd/gpu0", "success",
					      "faster by 3%", NULL), 0);
	assert_int_equal(db_commit_status_get(db, st, &desc, "o/r", OID_C, "perfd/gpu0"), 0);
	assert_string_equal(st, "success");
	assert_string_equal(desc, "faster by 3%");
	free(desc);
	assert_int_equal(db_commit_status_get(db, st, &desc, "o/r", OID_C, "perfd/gpu1"), -ENOENT);

	assert_int_equal(db_pull_approval_last(db, &last, "o/r", 7), 0);
	assert_int_equal(last, 0);
	assert_int_equal(db_pull_approval_add(db, "o/r", 7, OID_C, "alice", 99), 0);
	assert_int_equal(db_pull_approval_add(db, "o/r", 7, OID_C, "bob", 101), 0);
	assert_int_equal(db_pull_approval_get(db, &approver, "o/r", 7, OID_C), 0);
	assert_string_equal(approver, "alice");
	free(approver);
	assert_int_equal(db_pull_approval_get(db, &approver, "o/r", 7, OID_B), -ENOENT);
	assert_int_equal(db_pull_approval_add(db, "o/r", 7, OID_B, "alice", 120), 0);
	assert_int_equal(db_pull_approval_last(db, &last, "o/r", 7), 0);
	assert_int_equal(last, 120);
	assert_int_equal(db_pull_approval_last(db, &last, "o/r", 8), 0);
	assert_int_equal(last, 0);

	assert_int_equal(db_pull_head_first_seen(db, &t, "o/r", 7, OID_C), 0);
	assert_true(t > 1700000000);
	/* Asked again, it is the stored time, not now. */
	assert_int_equal(sqlite3_exec(db->h, "UPDATE pull_heads_seen SET first_seen = 1000",
				      NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(db_pull_head_first_seen(db, &t, "o/r", 7, OID_C), 0);
	assert_int_equal(t, 1000);
	assert_int_equal(db_pull_head_first_seen(db, &t, "o/r", 7, OID_B), 0);
	assert_true(t > 1700000000);
	db_close(db);
	free(p);
}

/* Garbage where a caller forgot to initialise: a loader must not leave it. */
#define GARBAGE(x) memset(&(x), 0xA5, sizeof(x))

#define SHA_1 "1111111111111111111111111111111111111111111111111111111111111111"
#define SHA_2 "2222222222222222222222222222222222222222222222222222222222222222"
#define SHA_3 "3333333333333333333333333333333333333333333333333333333333333333"
#define RECIPE "feedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedface"

/* A build whose case program is a wrapper, run.sh, and whose real work is
 * in libwork.so: the wrapper's bytes alone cannot tell two builds apart. */
static void wrapper_build(struct db_build *b, struct db_build_artifact arts[2], const char *lib_sha)
{
	memset(b, 0, sizeof(*b));
	b->id = 7;
	snprintf(b->commit, sizeof(b->commit), OID_C);
	snprintf(b->tree, sizeof(b->tree), OID_B);
	snprintf(b->recipe_hash, sizeof(b->recipe_hash), RECIPE);
	arts[0] = (struct db_build_artifact){ (char *)"run.sh", { 0, (char *)"/w/run.sh", 40, SHA_1 } };
	arts[1] = (struct db_build_artifact){ (char *)"lib/libwork.so",
					      { 0, (char *)"/w/lib/libwork.so", 9000, "" } };
	snprintf(arts[1].artifact.sha256, sizeof(arts[1].artifact.sha256), "%s", lib_sha);
	b->artifacts = arts;
	b->nartifacts = 2;
}

static int64_t manifest_comparison(struct db *db, int64_t art, const char *old_m,
				   const char *new_m)
{
	struct db_comparison c;
	int64_t cid;

	memset(&c, 0, sizeof(c));
	snprintf(c.created_at, sizeof(c.created_at), "2026-11-04T10:00:00.000Z");
	c.rule = (char *)"pairs-median/1";
	c.case_name = (char *)"wrapped";
	c.host = (char *)"gpu0";
	c.old.id = art;
	c.new.id = art;
	c.pairs = 3;
	c.old_manifest = (char *)old_m;
	c.new_manifest = (char *)new_m;
	assert_int_equal(db_comparison_insert(db, &cid, &c), 0);
	return cid;
}

/* Manifests: the canonical text and its hash, two wrappers of identical
 * bytes told apart by the rest of their builds, what is refused, the round
 * trip through the database, and cells that pool only comparisons of the
 * same two manifests. */
static void test_manifest_round_trip(void **state)
{
	char *p = path_for("manifests.db");
	struct db *db = NULL;
	struct db_build b1, b2;
	struct db_build_artifact a1[2], a2[2];
	struct db_manifest m1, m2, m, l;
	struct db_artifact wrapper = { 0, (char *)"/w/run.sh", 40, SHA_1 };
	struct db_comparison c;
	struct db_comparison_entry ents[8];
	struct db_comparison_row rows[8];
	char want[65], got[65];
	int64_t c1, c2, c3, c4, c5;
	const char *text =
		"perfd-manifest/1\n"
		"commit " OID_C "\n"
		"file lib/libwork.so 9000 " SHA_2 "\n"
		"file odd\\\\name\\nx 1 " SHA_3 "\n"
		"file run.sh 40 " SHA_1 "\n"
		"recipe " RECIPE "\n"
		"tree " OID_B "\n";

	/* The text as docs/protocol.md defines it, whatever the files' order. */
	wrapper_build(&b1, a1, SHA_2);
	GARBAGE(m1);
	assert_int_equal(db_manifest_of_build(&m1, &b1), 0);
	assert_int_equal(m1.build_id, 7);
	assert_int_equal(m1.nfiles, 2);
	db_manifest_add(&m1, "odd\\name\nx", 1, SHA_3);
	assert_int_equal(sha256_hex(want, text, strlen(text)), 0);
	assert_int_equal(db_manifest_hash(got, &m1), 0);
	assert_string_equal(got, want);
	memset(&m, 0, sizeof(m));
	db_manifest_add(&m, "odd\\name\nx", 1, SHA_3);
	db_manifest_add(&m, "run.sh", 40, SHA_1);
	db_manifest_add(&m, "lib/libwork.so", 9000, SHA_2);
	snprintf(m.commit, sizeof(m.commit), OID_C);
	snprintf(m.tree, sizeof(m.tree), OID_B);
	snprintf(m.recipe_hash, sizeof(m.recipe_hash), RECIPE);
	assert_int_equal(db_manifest_hash(got, &m), 0);
	assert_string_equal(got, want);
	db_manifest_release(&m1);

	/* Two builds whose wrapper is byte for byte the same, and whose
	 * library is not: two manifests. */
	wrapper_build(&b1, a1, SHA_2);
	wrapper_build(&b2, a2, SHA_3);
	assert_string_equal(a1[0].artifact.sha256, a2[0].artifact.sha256);
	assert_int_equal(db_manifest_of_build(&m1, &b1), 0);
	assert_int_equal(db_manifest_of_build(&m2, &b2), 0);
	assert_string_not_equal(m1.hash, m2.hash);

	/* Refused: two files of one name, a bad sha256, a bad commit, nothing. */
	db_manifest_add(&m, "run.sh", 41, SHA_2);
	GARBAGE(got);
	assert_int_equal(db_manifest_hash(got, &m), -EINVAL);
	assert_string_equal(got, "");
	assert_non_null(strstr(err_last(), "two files named 'run.sh'"));
	db_manifest_release(&m);
	db_manifest_add(&m, "x", 1, "abc");
	assert_int_equal(db_manifest_hash(got, &m), -EINVAL);
	assert_non_null(strstr(err_last(), "file 'x'"));
	db_manifest_release(&m);
	snprintf(m.commit, sizeof(m.commit), "main");
	assert_int_equal(db_manifest_hash(got, &m), -EINVAL);
	assert_non_null(strstr(err_last(), "commit 'main'"));
	db_manifest_release(&m);
	assert_int_equal(db_manifest_hash(got, &m), -EINVAL);
	b1.nartifacts = 0;
	b1.commit[0] = b1.tree[0] = b1.recipe_hash[0] = '\0';
	GARBAGE(m);
	assert_int_equal(db_manifest_of_build(&m, &b1), -EINVAL);
	assert_null(m.files);
	assert_string_equal(m.hash, "");
	assert_non_null(strstr(err_last(), "build 7: manifest: no build and no file"));
	db_manifest_release(&m);

	/* Stored once however often it is put; loaded whole. */
	assert_int_equal(db_open(&db, p, 1000), 0);
	m1.build_id = m2.build_id = 0;  /* no build 7 in this file */
	assert_int_equal(db_manifest_put(db, &m1), 0);
	assert_int_equal(db_manifest_put(db, &m1), 0);
	assert_int_equal(db_manifest_put(db, &m2), 0);
	GARBAGE(l);
	assert_int_equal(db_manifest_load(db, &l, m1.hash), 0);
	assert_string_equal(l.hash, m1.hash);
	assert_int_equal(l.build_id, 0);
	assert_string_equal(l.commit, OID_C);
	assert_string_equal(l.tree, OID_B);
	assert_string_equal(l.recipe_hash, RECIPE);
	assert_true(l.created_at[0] != '\0');
	assert_int_equal(l.nfiles, 2);
	assert_string_equal(l.files[0].name, "lib/libwork.so");
	assert_int_equal(l.files[0].size, 9000);
	assert_string_equal(l.files[0].sha256, SHA_2);
	assert_string_equal(l.files[1].name, "run.sh");
	assert_string_equal(l.files[1].sha256, SHA_1);
	assert_int_equal(db_manifest_hash(got, &l), 0);
	assert_string_equal(got, m1.hash);
	db_manifest_release(&l);
	{
		sqlite3_stmt *st;

		assert_int_equal(sqlite3_prepare_v2(db->h, "SELECT (SELECT count(*) FROM manifests),"
						    " (SELECT count(*) FROM manifest_files)", -1,
						    &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int(st, 0), 2);
		assert_int_equal(sqlite3_column_int(st, 1), 4);
		sqlite3_finalize(st);
	}
	/* A hash that is not its text's is refused, and nothing stored. */
	snprintf(m2.hash, sizeof(m2.hash), SHA_3);
	assert_int_equal(db_manifest_put(db, &m2), -EINVAL);
	GARBAGE(l);
	assert_int_equal(db_manifest_load(db, &l, SHA_3), -ENOENT);
	assert_null(l.files);
	assert_int_equal(l.nfiles, 0);
	db_manifest_release(&l);
	assert_int_equal(db_manifest_hash(m2.hash, &m2), 0);

	/* Comparisons of one program, the wrapper, in three cells: (m1, m2)
	 * twice, (m1, m1), and one stored before manifests, pooled by sha256. */
	assert_int_equal(db_artifact_put(db, &wrapper.id, &wrapper), 0);
	c1 = manifest_comparison(db, wrapper.id, m1.hash, m2.hash);
	c2 = manifest_comparison(db, wrapper.id, m1.hash, m1.hash);
	c3 = manifest_comparison(db, wrapper.id, NULL, NULL);
	c4 = manifest_comparison(db, wrapper.id, m1.hash, m2.hash);
	c5 = manifest_comparison(db, wrapper.id, m1.hash, m1.hash);
	assert_int_equal(db_comparison_load(db, &c, c1), 0);
	assert_string_equal(c.old_manifest, m1.hash);
	assert_string_equal(c.new_manifest, m2.hash);
	db_comparison_release(&c);
	assert_int_equal(db_comparison_list(db, rows, ARRAY_SIZE(rows), 0), 5);
	assert_int_equal(rows[0].id, c5);
	assert_string_equal(rows[0].old_manifest, m1.hash);
	assert_string_equal(rows[0].new_manifest, m1.hash);
	assert_string_equal(rows[2].old_manifest, "");
	assert_string_equal(rows[2].new_manifest, "");
	assert_int_equal(db_comparison_cells(db, ents, ARRAY_SIZE(ents), "gpu0", "wrapped"), 5);
	/* The row without a manifest first (NULL sorts first), then each pair
	 * of manifests together. */
	assert_int_equal(ents[0].row.id, c3);
	assert_true((ents[1].row.id == c1 && ents[2].row.id == c4) ||
		    (ents[1].row.id == c2 && ents[2].row.id == c5));
	assert_true((ents[3].row.id == c1 && ents[4].row.id == c4) ||
		    (ents[3].row.id == c2 && ents[4].row.id == c5));
	assert_string_equal(ents[1].row.new_manifest, ents[2].row.new_manifest);
	assert_string_not_equal(ents[2].row.new_manifest, ents[3].row.new_manifest);
	assert_string_equal(ents[3].row.old_sha256, SHA_1);
	db_manifest_release(&m1);
	db_manifest_release(&m2);
	db_close(db);
	free(p);
}

/* Every loader asked for a row a fresh database lacks: -ENOENT, and the
 * output zeroed, so that releasing it is safe. */
static void test_tokens(void **state)
{
	char *p = path_for("tokens.db");
	struct db *db = NULL;
	struct db_token *t;
	int64_t id1, id2, id3;
	size_t n;

	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_token_add(db, &id1, DB_TOKEN_HOST, "m1", "aa"), 0);
	assert_int_equal(db_token_add(db, &id2, DB_TOKEN_HOST, "m1", "bb"), 0);
	assert_int_equal(db_token_add(db, &id3, DB_TOKEN_MAINTAINER, "alice", "cc"), 0);
	assert_true(id1 < id2 && id2 < id3);
	/* A hash is stored once. */
	assert_int_equal(db_token_add(db, &id1, DB_TOKEN_HOST, "m2", "aa"), -EIO);
	assert_int_equal(id1, 0);
	assert_int_equal(db_token_list(db, &t, &n, true, 10), 0);
	assert_int_equal(n, 3);
	assert_int_equal(t[0].kind, DB_TOKEN_HOST);
	assert_string_equal(t[0].name, "m1");
	assert_string_equal(t[0].sha256, "aa");
	assert_string_equal(t[0].revoked_at, "");
	assert_true(t[0].created_at[0] != '\0');
	assert_int_equal(t[2].kind, DB_TOKEN_MAINTAINER);
	assert_string_equal(t[2].name, "alice");
	free(t);
	assert_int_equal(db_token_list(db, &t, &n, true, 2), 0);
	assert_int_equal(n, 2);
	free(t);
	/* Revoking ends every live token of the name, and only of its kind. */
	assert_int_equal(db_token_revoke(db, DB_TOKEN_MAINTAINER, "m1"), 0);
	assert_int_equal(db_token_revoke(db, DB_TOKEN_HOST, "m1"), 2);
	assert_int_equal(db_token_revoke(db, DB_TOKEN_HOST, "m1"), 0);
	assert_int_equal(db_token_list(db, &t, &n, true, 10), 0);
	assert_int_equal(n, 1);
	assert_string_equal(t[0].name, "alice");
	free(t);
	assert_int_equal(db_token_list(db, &t, &n, false, 10), 0);
	assert_int_equal(n, 3);
	assert_true(t[0].revoked_at[0] != '\0' && t[1].revoked_at[0] != '\0');
	assert_string_equal(t[2].revoked_at, "");
	free(t);
	db_close(db);
	free(p);
}

static void test_ingest(void **state)
{
	char *p = path_for("ingest.db");
	struct db *db = NULL;
	struct db_artifact a = { 0, (char *)"/agent/prog", 123, "ab" };
	struct db_process procs[2];
	struct db_comparison c, l;
	struct db_summary s;
	struct db_origin o, got;
	struct db_calibration cal;
	bool valid[2] = { false, true };
	char *reason[2] = { (char *)"exited 1", NULL };
	double gains[1] = { 0.25 };
	int64_t id, *ids;
	size_t n;

	assert_int_equal(db_open(&db, p, 1000), 0);
	memset(&c, 0, sizeof(c));
	snprintf(c.created_at, sizeof(c.created_at), "2026-11-04T10:00:00.123Z");
	snprintf(c.finished_at, sizeof(c.finished_at), "2026-11-04T10:00:09.456Z");
	c.state = DB_STATE_DONE;
	c.rule = (char *)"pairs-median/2";
	c.case_name = (char *)"default";
	c.host = (char *)"m1";
	c.old = a;
	c.new = a;
	c.pairs = c.max_pairs = 1;
	c.timeout_s = 30;
	c.args_json = (char *)"{}";
	rt_process(&procs[0], 0);
	rt_process_done(&procs[0]);
	procs[1] = procs[0];
	procs[1].seq = 2;
	snprintf(procs[1].arm, sizeof(procs[1].arm), "new");
	c.processes = procs;
	c.nprocesses = 2;
	memset(&s, 0, sizeof(s));
	s.metric = (char *)"run2_ms";
	snprintf(s.verdict, sizeof(s.verdict), "unresolved");
	s.pair_gains = gains;
	s.npair_gains = 1;
	s.process_valid = valid;
	s.process_reason = reason;
	s.nprocesses = 2;
	memset(&o, 0, sizeof(o));
	snprintf(o.host, sizeof(o.host), "m1");
	o.origin_id = 17;
	snprintf(o.sha256, sizeof(o.sha256), "%064d", 1);

	assert_int_equal(db_origin_get(db, &got, "m1", 17), -ENOENT);
	assert_int_equal(db_comparison_ingest(db, &id, &c, &s, &o), 0);
	assert_true(id > 0);
	assert_int_equal(db_origin_get(db, &got, "m1", 17), 0);
	assert_int_equal(got.comparison_id, id);
	assert_string_equal(got.sha256, o.sha256);
	assert_true(got.received_at[0] != '\0');
	assert_int_equal(db_origin_get(db, &got, "m2", 17), -ENOENT);
	assert_int_equal(db_comparison_load(db, &l, id), 0);
	assert_int_equal(l.state, DB_STATE_DONE);
	/* The host's times, not the ingest's. */
	assert_string_equal(l.created_at, "2026-11-04T10:00:00.123Z");
	assert_string_equal(l.finished_at, "2026-11-04T10:00:09.456Z");
	assert_int_equal(l.nprocesses, 2);
	rt_process_check(&l.processes[0], l.processes[0].id, id);
	assert_int_equal(l.processes[1].seq, 2);
	assert_true(l.processes[1].valid);
	assert_string_equal(l.summary.verdict, "unresolved");
	db_comparison_release(&l);
	/* As a calibration: its metric and gains. */
	memset(&cal, 0, sizeof(cal));
	cal.comparison_id = id;
	assert_int_equal(db_calibration_load(db, &cal, 1), 0);
	assert_int_equal(cal.comparison_id, id);
	assert_string_equal(cal.metric, "run2_ms");
	assert_int_equal(cal.ngains, 1);
	assert_true(cal.gains[0] == 0.25);
	db_calibration_release(&cal);
	cal.comparison_id = id + 1;
	assert_int_equal(db_calibration_load(db, &cal, 1), -ENOENT);
	assert_null(cal.metric);
	assert_null(cal.gains);
	db_calibration_release(&cal);

	/* The same host and id again, and a failure half way: nothing stored. */
	assert_int_equal(db_comparison_ingest(db, &id, &c, &s, &o), -EEXIST);
	assert_int_equal(id, 0);
	o.origin_id = 18;
	procs[1].seq = 1;
	assert_int_not_equal(db_comparison_ingest(db, &id, &c, &s, &o), 0);
	assert_int_equal(id, 0);
	assert_int_equal(db_origin_get(db, &got, "m1", 18), -ENOENT);
	assert_int_equal(db_comparison_ids(db, &ids, &n), 0);
	assert_int_equal(n, 1);
	free(ids);
	db_close(db);
	free(p);
}

/* Whether sql, run for comparison a and for comparison b, gives the same
 * rows, column by column (type and bytes), but for the columns named id and
 * comparison_id. */
static bool rows_same(struct db *db, const char *sql, int64_t a, int64_t b)
{
	sqlite3_stmt *sa, *sb;
	bool same = true;
	int ra, rb, i;

	assert_int_equal(sqlite3_prepare_v2(db->h, sql, -1, &sa, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db->h, sql, -1, &sb, NULL), SQLITE_OK);
	sqlite3_bind_int64(sa, 1, a);
	sqlite3_bind_int64(sb, 1, b);
	do {
		ra = sqlite3_step(sa);
		rb = sqlite3_step(sb);
		same = ra == rb;
		for (i = 0; same && ra == SQLITE_ROW && i < sqlite3_column_count(sa); i++) {
			const char *name = sqlite3_column_name(sa, i);
			int type = sqlite3_column_type(sa, i), len;

			if (!strcmp(name, "id") || !strcmp(name, "comparison_id"))
				continue;
			same = type == sqlite3_column_type(sb, i);
			if (!same)
				break;
			if (type == SQLITE_INTEGER)
				same = sqlite3_column_int64(sa, i) == sqlite3_column_int64(sb, i);
			else if (type == SQLITE_FLOAT)
				same = memcmp(&(double){ sqlite3_column_double(sa, i) },
					      &(double){ sqlite3_column_double(sb, i) },
					      sizeof(double)) == 0;
			else if (type != SQLITE_NULL)
				same = (len = sqlite3_column_bytes(sa, i)) ==
				       sqlite3_column_bytes(sb, i) &&
				       !memcmp(sqlite3_column_blob(sa, i), sqlite3_column_blob(sb, i),
					       (size_t)len);
			if (!same)
				print_error("%s: column %s differs\n", sql, name);
		}
	} while (same && ra == SQLITE_ROW);
	sqlite3_finalize(sa);
	sqlite3_finalize(sb);
	return same && ra == SQLITE_DONE;
}

/* A comparison written whole (db_comparison_store, db_process_store) is the
 * row for row what perfd pair's writes leave: insert, finish, summary and
 * validity, with the host's end time. */
static void test_store_whole(void **state)
{
	static const char *const sql[] = {
		"SELECT * FROM comparisons WHERE id = ?",
		"SELECT * FROM processes WHERE comparison_id = ? ORDER BY seq",
		"SELECT p.seq, m.name, m.value FROM metrics m JOIN processes p ON p.id = m.process_id"
		" WHERE p.comparison_id = ? ORDER BY p.seq, m.name",
		"SELECT p.seq, l.idx, l.kind, l.text FROM process_lines l"
		" JOIN processes p ON p.id = l.process_id WHERE p.comparison_id = ?"
		" ORDER BY p.seq, l.idx",
		"SELECT p.seq, o.stdout, o.stderr FROM process_output o"
		" JOIN processes p ON p.id = o.process_id WHERE p.comparison_id = ? ORDER BY p.seq",
		"SELECT * FROM pair_gains WHERE comparison_id = ? ORDER BY pair",
		"SELECT * FROM comparison_notes WHERE comparison_id = ? ORDER BY kind, idx",
		"SELECT * FROM comparison_stages WHERE comparison_id = ? ORDER BY stage",
	};
	char *p = path_for("whole.db");
	struct db *db = NULL;
	struct db_artifact a = { 0, (char *)"/agent/prog", 123, "ab" };
	struct db_process procs[2];
	struct db_comparison c;
	struct db_summary s;
	struct db_stage stage = { 1, "sign", 0, 0.125, 0.5, 0.875, NAN, 0.25, 0.01, NAN, NAN,
				  NAN, 0.3, 2.5, 0.004, 5, "unresolved" };
	bool valid[2] = { false, true };
	char *reason[2] = { (char *)"exited 1", NULL };
	char *flags[1] = { (char *)"noisy" }, *reasons[2] = { (char *)"one", (char *)"two" };
	double gains[2] = { 0.25, NAN };
	sqlite3_stmt *st;
	int64_t whole, steps, pid;
	size_t i;

	assert_int_equal(db_open(&db, p, 1000), 0);
	memset(&c, 0, sizeof(c));
	snprintf(c.created_at, sizeof(c.created_at), "2026-11-04T10:00:00.123Z");
	snprintf(c.finished_at, sizeof(c.finished_at), "2026-11-04T10:00:09.456Z");
	c.state = DB_STATE_DONE;
	c.rule = (char *)"pairs-median/2";
	c.case_name = (char *)"default";
	c.metric = (char *)"wall_ms";
	c.metric_requested = (char *)"run2_ms";
	c.host = (char *)"m1";
	c.fingerprint = (char *)"{\"gpu\":\"x\"}";
	c.pairs = 2;
	c.max_pairs = 4;
	c.warmup = 1;
	c.timeout_s = 30;
	c.min_effect = 0.01;
	c.noise = 0.05;
	c.higher_better = true;
	c.args_json = (char *)"{\"n\":1}";
	c.old_manifest = (char *)"aa";
	rt_process(&procs[0], 0);
	rt_process_done(&procs[0]);
	procs[0].state = DB_STATE_DONE;
	procs[1] = procs[0];
	procs[1].seq = 2;
	procs[1].exit_code = -1;
	procs[1].signal = 6;
	procs[1].wall_ms = NAN;
	procs[1].out = NULL;
	procs[1].out_len = 0;
	procs[1].err = NULL;
	procs[1].err_len = 0;
	snprintf(procs[1].arm, sizeof(procs[1].arm), "new");
	c.processes = procs;
	c.nprocesses = 2;
	memset(&s, 0, sizeof(s));
	s.metric = (char *)"run2_ms";
	snprintf(s.verdict, sizeof(s.verdict), "unresolved");
	s.has_gain = true;
	s.gain_median = 0.25;
	s.gain_min = -0.5;
	s.gain_max = 1.0 / 3;
	s.old = (struct db_arm_stats){ true, 4392, 4113, 4421, 0.07 };
	s.digests_equal = true;
	s.pairs_run = 2;
	s.pair_gains = gains;
	s.npair_gains = 2;
	s.stages = &stage;
	s.nstages = 1;
	s.flags = flags;
	s.nflags = 1;
	s.reasons = reasons;
	s.nreasons = 2;
	s.process_valid = valid;
	s.process_reason = reason;
	s.nprocesses = 2;

	assert_int_equal(db_artifact_put(db, &c.old.id, &a), 0);
	c.new.id = c.old.id;
	/* Written whole, as the hub's ingest writes it. */
	assert_int_equal(db_begin(db), 0);
	assert_int_equal(db_comparison_store(db, &whole, &c, &s), 0);
	for (i = 0; i < 2; i++) {
		struct db_process q = procs[i];

		q.comparison_id = whole;
		q.valid = valid[i];
		q.invalid_reason = reason[i];
		assert_int_equal(db_process_store(db, &pid, &q), 0);
	}
	assert_int_equal(db_commit(db), 0);
	/* Step by step, as perfd pair writes it. */
	assert_int_equal(db_comparison_insert(db, &steps, &c), 0);
	for (i = 0; i < 2; i++) {
		procs[i].comparison_id = steps;
		assert_int_equal(db_process_insert(db, &procs[i].id, &procs[i]), 0);
		assert_int_equal(db_process_finish(db, &procs[i]), 0);
	}
	assert_int_equal(db_comparison_finish(db, steps, DB_STATE_DONE, &s, procs, 2), 0);
	assert_int_equal(sqlite3_prepare_v2(db->h, "UPDATE comparisons SET finished_at = ?"
					    " WHERE id = ?", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, c.finished_at, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, steps);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);

	assert_true(whole != steps);
	for (i = 0; i < ARRAY_SIZE(sql); i++)
		assert_true(rows_same(db, sql[i], whole, steps));
	db_close(db);
	free(p);
}

/* The agent's push: the backlog is its own done comparisons the hub has not
 * answered for, oldest first; one a hub ingested is never in it. */
static void test_pushed(void **state)
{
	char *p = path_for("ingest.db");        /* test_ingest's, one comparison */
	struct db *db = NULL;
	int64_t backlog, *ids;
	size_t n;

	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_push_backlog(db, &backlog), 0);
	assert_int_equal(backlog, 0);
	assert_int_equal(db_push_pending(db, &ids, &n, 10), 0);
	assert_int_equal(n, 0);
	free(ids);
	/* The same comparison as this database's own. */
	set_pragma(p, "DELETE FROM comparison_origins");
	assert_int_equal(db_push_backlog(db, &backlog), 0);
	assert_int_equal(backlog, 1);
	assert_int_equal(db_push_pending(db, &ids, &n, 10), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], 1);
	assert_int_equal(db_push_mark(db, 1, 201, 7, NULL), 0);
	assert_int_equal(db_push_backlog(db, &backlog), 0);
	assert_int_equal(backlog, 0);
	/* A refusal replaces the mark, and keeps it out of the backlog. */
	assert_int_equal(db_push_mark(db, 1, 409, 0, "conflict"), 0);
	assert_int_equal(db_push_backlog(db, &backlog), 0);
	assert_int_equal(backlog, 0);
	free(ids);
	db_close(db);
	free(p);
}

/* Puts a receipt of cid in format under renderer "r1", as a reader that
 * has just rendered it would. */
static void receipt_put(struct db *db, int64_t cid, const char *format, const char *body)
{
	int64_t mark;

	assert_int_equal(db_receipt_mark(db, &mark), 0);
	assert_int_equal(db_receipt_put(db, cid, format, "r1", "5eed", body, strlen(body), mark),
			 0);
}

static bool receipt_stored(struct db *db, int64_t cid, const char *format)
{
	struct db_receipt got;
	int r = db_receipt_get(db, &got, cid, format, "r1");

	assert_true(r == 0 || r == -ENOENT);
	db_receipt_release(&got);
	return r == 0;
}

/*
 * Stored receipts: answered for the renderer that stored them alone; gone
 * after every write that changes what they show; not stored when another
 * connection wrote since the comparison was read, nor by waiting for a
 * writer, nor through a read-only handle.
 */
static void test_receipts(void **state)
{
	char *p = path_for("receipts.db");
	struct db *db = NULL, *other = NULL, *ro = NULL;
	struct db_artifact a = { 0, (char *)"/bin/true", 123, "ab" };
	struct db_comparison c;
	struct db_process pr, pr2;
	struct db_summary s;
	struct db_receipt got;
	bool valid[1] = { true };
	char *reason[1] = { NULL };
	int64_t art, cid, mark;

	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_artifact_put(db, &art, &a), 0);
	memset(&c, 0, sizeof(c));
	snprintf(c.created_at, sizeof(c.created_at), "2026-11-04T10:00:00.123Z");
	c.rule = (char *)"pairs-median/1";
	c.case_name = (char *)"default";
	c.host = (char *)"lavapipe";
	c.old.id = art;
	c.new.id = art;
	c.pairs = 1;
	assert_int_equal(db_comparison_insert(db, &cid, &c), 0);
	rt_process(&pr, cid);
	assert_int_equal(db_process_insert(db, &pr.id, &pr), 0);
	rt_process_done(&pr);
	assert_int_equal(db_process_finish(db, &pr), 0);
	memset(&s, 0, sizeof(s));
	snprintf(s.verdict, sizeof(s.verdict), "unresolved");
	s.process_valid = valid;
	s.process_reason = reason;
	s.nprocesses = 1;
	assert_int_equal(db_comparison_finish(db, cid, DB_STATE_DONE, &s, &pr, 1), 0);

	assert_int_equal(db_receipt_get(db, &got, cid, "json", "r1"), -ENOENT);
	assert_null(got.body);
	receipt_put(db, cid, "json", "{\"comparison\": 1}\n");
	receipt_put(db, cid, "csv", "comparison\n1\n");
	assert_int_equal(db_receipt_get(db, &got, cid, "json", "r1"), 0);
	assert_int_equal(got.len, 18);
	assert_memory_equal(got.body, "{\"comparison\": 1}\n", 19);
	assert_string_equal(got.sha256, "5eed");
	db_receipt_release(&got);
	/* Bytes of another renderer (an older perfd's) are not answered. */
	assert_int_equal(db_receipt_get(db, &got, cid, "json", "r2"), -ENOENT);
	assert_true(receipt_stored(db, cid, "csv"));

	/* Each write that changes what the receipt shows drops every format:
	 * the summary written again, a process recorded or finished. */
	assert_int_equal(db_comparison_finish(db, cid, DB_STATE_DONE, &s, &pr, 1), 0);
	assert_false(receipt_stored(db, cid, "json"));
	assert_false(receipt_stored(db, cid, "csv"));
	receipt_put(db, cid, "json", "{}\n");
	rt_process(&pr2, cid);
	pr2.seq = 2;
	assert_int_equal(db_process_insert(db, &pr2.id, &pr2), 0);
	assert_false(receipt_stored(db, cid, "json"));
	receipt_put(db, cid, "json", "{}\n");
	pr2.ended_at[0] = '\0';
	assert_int_equal(db_process_finish(db, &pr2), 0);
	assert_false(receipt_stored(db, cid, "json"));
	/* A write with no function of its own yet (linking the comparison to
	 * its job) forgets through db_receipt_forget, in its transaction. */
	receipt_put(db, cid, "json", "{}\n");
	receipt_put(db, cid, "csv", "comparison\n");
	assert_int_equal(db_transaction_begin(db), 0);
	assert_int_equal(db_exec(db, "UPDATE comparisons SET job_id = NULL", "linking"), 0);
	assert_int_equal(db_receipt_forget(db, cid), 0);
	assert_int_equal(db_transaction_commit(db), 0);
	assert_false(receipt_stored(db, cid, "json"));
	assert_false(receipt_stored(db, cid, "csv"));
	assert_int_equal(db_receipt_forget(db, cid), 0);

	/* Another connection wrote since the comparison was read: what was
	 * rendered may be stale, and is not stored. */
	assert_int_equal(db_open(&other, p, 1000), 0);
	assert_int_equal(db_receipt_mark(db, &mark), 0);
	receipt_put(other, cid, "csv", "comparison\n");
	assert_int_equal(db_receipt_put(db, cid, "json", "r1", "5eed", "{}\n", 3, mark), -EAGAIN);
	assert_false(receipt_stored(db, cid, "json"));
	/* A writer holds the lock: not waited for. */
	assert_int_equal(db_receipt_mark(db, &mark), 0);
	assert_int_equal(db_transaction_begin(other), 0);
	assert_int_equal(db_receipt_put(db, cid, "json", "r1", "5eed", "{}\n", 3, mark), -EBUSY);
	db_transaction_rollback(other);
	assert_int_equal(db_receipt_put(db, cid, "json", "r1", "5eed", "{}\n", 3, mark), 0);
	/* A read-only handle answers what is stored and stores nothing. */
	assert_int_equal(db_open_readonly(&ro, p, 1000), 0);
	assert_true(receipt_stored(ro, cid, "csv"));
	assert_int_equal(db_receipt_mark(ro, &mark), 0);
	assert_int_equal(db_receipt_put(ro, cid, "md", "r1", "5eed", "x", 1, mark), -EACCES);
	assert_false(receipt_stored(db, cid, "md"));
	db_close(ro);
	db_close(other);
	db_close(db);
	free(p);
}

static int refuse_commit(void *arg)
{
	return 1;
}

/*
 * A write whose commit fails (a full disk: the insert ran, its id came
 * back, then writing it out failed) reports the failure and hands out no id
 * of a row that was rolled back, which every later row naming it would
 * trip over ("FOREIGN KEY constraint failed"). A refusing commit hook
 * stands in for the full disk.
 */
static void test_failed_commit_reported(void **state)
{
	char *p = path_for("commit-fails.db");
	struct db_artifact a = { 0, (char *)"/bin/true", 123, "ab" }, l;
	struct db *db = NULL;
	int64_t id = 0, n = -1;
	sqlite3_stmt *st;

	assert_int_equal(db_open(&db, p, 1000), 0);
	sqlite3_commit_hook(db->h, refuse_commit, NULL);
	assert_true(db_artifact_put(db, &id, &a) < 0);
	assert_non_null(strstr(err_last(), "recording an artifact"));
	sqlite3_commit_hook(db->h, NULL, NULL);
	assert_int_equal(db_prepare(db, &st, "SELECT count(*) FROM artifacts"), 0);
	assert_int_equal(db_step_count(db, st, &n, "counting"), 0);
	assert_int_equal(n, 0);
	/* Once the disk has room again, the same artifact is stored. */
	assert_int_equal(db_artifact_put(db, &id, &a), 0);
	assert_int_equal(db_artifact_load(db, &l, id), 0);
	assert_string_equal(l.path, "/bin/true");
	db_artifact_release(&l);
	db_close(db);
	free(p);
}

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
	struct db_manifest m;
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

	GARBAGE(m);
	assert_int_equal(db_manifest_load(db, &m, "0123"), -ENOENT);
	assert_null(m.files);
	assert_int_equal(m.nfiles, 0);
	assert_string_equal(m.hash, "");
	db_manifest_release(&m);

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
	struct db_job_info infos4[4];
	struct db_comparison_row rows[4];
	struct db_count counts[4];
	int64_t *ids, cids[4];
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
	assert_true(db_commit_jobs(db, jobs, ARRAY_SIZE(jobs), "0123") < 0);
	assert_true(db_job_infos(db, infos4, ARRAY_SIZE(infos4), 0) < 0);
	assert_true(db_comparison_list(db, rows, ARRAY_SIZE(rows), 0) < 0);
	assert_true(db_commit_comparison_ids(db, cids, ARRAY_SIZE(cids), "0123") < 0);
	assert_true(db_count(db, counts, ARRAY_SIZE(counts), DB_COUNT_JOBS) < 0);
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

/* Holds: a step an earlier boot left running is a suspect (a build, a
 * runner's chunk, with the job then running), stored once whatever the
 * calls, found by commit or by tree and recipe, keeping its job out of the
 * queue until it is released. The boot is changed as the tests change it,
 * through PERFD_BOOT_ID_FILE. */
static void test_holds(void **state)
{
	char *p = path_for("holds.db"), *boot = path_for("boot_id");
	struct db *db = NULL;
	struct db_build b;
	struct db_runner_result rr;
	struct db_hold *v = NULL, h;
	struct db_job j;
	int64_t job, job2, bid, rid, id, id2;
	size_t n = 0;
	FILE *f;

	f = fopen(boot, "w");
	assert_non_null(f);
	fputs("11111111-1111-1111-1111-111111111111\n", f);
	fclose(f);
	setenv("PERFD_BOOT_ID_FILE", boot, 1);
	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_job_add(db, &job, "refs/heads/main", OID_C, OID_A, "hangs"), 1);
	assert_int_equal(db_job_add(db, &job2, "refs/heads/next", OID_B, OID_C, "on it"), 1);
	assert_int_equal(db_job_set_state(db, job, DB_JOB_RUNNING, NULL), 0);
	build_init(&b);
	assert_int_equal(db_build_insert(db, &bid, &b), 0);
	memset(&rr, 0, sizeof(rr));
	rr.build_id = bid;
	snprintf(rr.runner, sizeof(rr.runner), "contract");
	rr.chunk = rr.chunks = 1;
	snprintf(rr.started_at, sizeof(rr.started_at), "2026-11-04T09:00:01.000Z");
	assert_int_equal(db_runner_result_insert(db, &rid, &rr), 0);
	/* This boot's rows are no suspects, nor another host's. */
	assert_int_equal(db_hold_suspects(db, &v, &n, "gpu0"), 0);
	assert_int_equal(n, 0);
	db_close(db);

	f = fopen(boot, "w");
	assert_non_null(f);
	fputs("22222222-2222-2222-2222-222222222222\n", f);
	fclose(f);
	assert_int_equal(db_open(&db, p, 1000), 0);
	assert_int_equal(db_hold_suspects(db, &v, &n, "gpu1"), 0);
	assert_int_equal(n, 0);
	assert_int_equal(db_hold_suspects(db, &v, &n, "gpu0"), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].step, DB_HOLD_BUILD);
	assert_string_equal(v[0].commit, OID_C);
	assert_int_equal(v[1].step, DB_HOLD_RUNNER);
	assert_string_equal(v[1].name, "contract");
	assert_int_equal(v[1].result_id, rid);
	assert_string_equal(v[1].commit, "");
	assert_string_equal(v[1].boot, "11111111-1111-1111-1111-111111111111");
	assert_int_equal(v[1].job_id, job);
	assert_int_equal(v[1].build_id, bid);
	v[1].log_read = xstrdup("none found");
	assert_int_equal(db_hold_add(db, &id, &v[1]), 0);
	assert_true(id > 0);
	/* The same step again keeps its one hold. */
	assert_int_equal(db_hold_add(db, &id2, &v[1]), 0);
	assert_int_equal(id2, id);
	db_hold_release(&v[0]);
	db_hold_release(&v[1]);
	free(v);

	assert_int_equal(db_hold_load(db, &h, id), 0);
	/* A runner's commit is its job's; its tree and recipe its build's. */
	assert_string_equal(h.commit, OID_C);
	assert_string_equal(h.tree, OID_B);
	assert_string_equal(h.recipe, "r1");
	assert_int_equal(h.why, DB_HOLD_WENT_DOWN);
	assert_string_equal(h.log_read, "none found");
	assert_string_equal(h.released_at, "");
	db_hold_release(&h);
	assert_int_equal(db_hold_find(db, &h, "gpu0", OID_C, "", ""), 0);
	db_hold_release(&h);
	assert_int_equal(db_hold_find(db, &h, "gpu0", OID_A, OID_B, "r1"), 0);
	db_hold_release(&h);
	assert_int_equal(db_hold_find(db, &h, "gpu0", OID_A, OID_B, "r2"), -ENOENT);
	assert_int_equal(db_hold_find(db, &h, "gpu1", OID_C, OID_B, "r1"), -ENOENT);

	/* A job waiting on the hold is passed over by the queue. */
	assert_int_equal(db_job_hold(db, job, id), 0);
	assert_int_equal(db_job_next(db, &j), 0);
	assert_int_equal(j.id, job2);
	db_job_release(&j);
	assert_int_equal(db_hold_list(db, &v, &n, "gpu0", true), 0);
	assert_int_equal(n, 1);
	db_hold_release(&v[0]);
	free(v);
	assert_int_equal(db_hold_lift(db, "gpu1", 0, "someone"), 0);
	assert_int_equal(db_hold_lift(db, "gpu0", id, "someone"), 1);
	assert_int_equal(db_hold_lift(db, "gpu0", id, "someone"), 0);
	assert_int_equal(db_hold_find(db, &h, "gpu0", OID_C, "", ""), -ENOENT);
	assert_int_equal(db_hold_list(db, &v, &n, NULL, true), 0);
	assert_int_equal(n, 0);
	assert_int_equal(db_hold_list(db, &v, &n, NULL, false), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].released_by, "someone");
	db_hold_release(&v[0]);
	free(v);
	assert_int_equal(db_job_next(db, &j), 0);
	assert_int_equal(j.id, job);
	db_job_release(&j);
	db_close(db);
	unsetenv("PERFD_BOOT_ID_FILE");
	free(boot);
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
		cmocka_unit_test(test_readonly_open),
		cmocka_unit_test(test_comparison_round_trip),
		cmocka_unit_test(test_process_load),
		cmocka_unit_test(test_calibration_infos),
		cmocka_unit_test(test_host_round_trip),
		cmocka_unit_test(test_host_status_sandbox),
		cmocka_unit_test(test_hub_holds),
		cmocka_unit_test(test_head_job_round_trip),
		cmocka_unit_test(test_build_runner_round_trip),
		cmocka_unit_test(test_pulls_round_trip),
		cmocka_unit_test(test_manifest_round_trip),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_ingest),
		cmocka_unit_test(test_store_whole),
		cmocka_unit_test(test_pushed),
		cmocka_unit_test(test_receipts),
		cmocka_unit_test(test_missing_rows_zeroed),
		cmocka_unit_test(test_failed_commit_reported),
		cmocka_unit_test(test_failed_lists_zeroed),
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_alert_issues),
		cmocka_unit_test(test_holds),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
