/* Process records: the raw receipt rows. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

static enum db_state state_parse(const char *s)
{
	if (s && !strcmp(s, "done"))
		return DB_STATE_DONE;
	if (s && !strcmp(s, "abandoned"))
		return DB_STATE_ABANDONED;
	return DB_STATE_RUNNING;
}

enum db_state db_state_from_name(const char *s)
{
	return state_parse(s);
}

void db_process_release(struct db_process *p)
{
	size_t i;

	if (!p)
		return;
	free(p->spawn_error);
	free(p->cpus);
	for (i = 0; i < p->nmetrics; i++)
		free(p->metrics[i].name);
	free(p->metrics);
	free(p->digest);
	for (i = 0; i < p->nprotocol_errors; i++)
		free(p->protocol_errors[i]);
	free(p->protocol_errors);
	for (i = 0; i < p->nlines; i++) {
		free(p->lines[i].kind);
		free(p->lines[i].text);
	}
	free(p->lines);
	free(p->fault);
	free(p->fault_watch);
	free(p->invalid_reason);
	free(p->out);
	free(p->err);
	memset(p, 0, sizeof(*p));
}

bool db_process_metric(const struct db_process *p, const char *name, double *out)
{
	size_t i;

	for (i = 0; i < p->nmetrics; i++) {
		if (!strcmp(p->metrics[i].name, name)) {
			*out = p->metrics[i].value;
			return true;
		}
	}
	return false;
}

int db_process_insert(struct db *db, int64_t *out_id, const struct db_process *p)
{
	sqlite3_stmt *st = NULL;
	int64_t id;
	int rc, r;

	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_prepare(db, &st,
		       "INSERT INTO processes (comparison_id, seq, arm, pair, warmup,"
		       " state, started_at, cpus) VALUES (?, ?, ?, ?, ?, 'running', ?, ?)");
	if (r < 0)
		goto out;
	sqlite3_bind_int64(st, 1, p->comparison_id);
	sqlite3_bind_int(st, 2, p->seq);
	db_bind_text(st, 3, p->arm);
	sqlite3_bind_int(st, 4, p->pair);
	sqlite3_bind_int(st, 5, p->warmup);
	db_bind_text(st, 6, p->started_at);
	db_bind_text(st, 7, p->cpus);
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		r = db_fail(db, rc, "recording a process start");
		goto out;
	}
	id = sqlite3_last_insert_rowid(db->h);
	db_finish(st);
	st = NULL;
	r = db_receipt_forget(db, p->comparison_id);
	if (r == 0)
		r = db_commit(db);
	if (r == 0)
		*out_id = id;
out:
	db_finish(st);
	if (r < 0)
		db_rollback(db);
	return r;
}

/* A line is stored repaired (utf8_repair), so that every reader may render
 * it as text; the bytes as printed stay in process_output. */
static int insert_line(struct db *db, sqlite3_stmt *st, int64_t pid, int idx,
		       const char *kind, const char *text)
{
	char *fixed = utf8_repair_dup(text);
	int rc;

	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, pid);
	sqlite3_bind_int(st, 2, idx);
	db_bind_text(st, 3, kind);
	db_bind_text(st, 4, fixed);
	rc = sqlite3_step(st);
	free(fixed);
	return rc == SQLITE_DONE ? 0 : db_fail(db, rc, "recording a process's lines");
}

/* The rows a finished process owns besides its own: its metrics, its lines
 * (the malformed ones after them, kind "error") and its captured output. */
static int store_children(struct db *db, const struct db_process *p)
{
	sqlite3_stmt *st = NULL, *mt = NULL, *lt = NULL;
	size_t i;
	int rc, r, idx = 0;

	r = db_prepare(db, &mt, "INSERT INTO metrics (process_id, name, value) VALUES (?, ?, ?)");
	if (r < 0)
		goto out;
	for (i = 0; i < p->nmetrics; i++) {
		sqlite3_reset(mt);
		sqlite3_bind_int64(mt, 1, p->id);
		db_bind_text(mt, 2, p->metrics[i].name);
		db_bind_real(mt, 3, p->metrics[i].value);
		rc = sqlite3_step(mt);
		if (rc != SQLITE_DONE) {
			r = db_fail(db, rc, "recording a metric");
			goto out;
		}
	}

	r = db_prepare(db, &lt, "INSERT INTO process_lines (process_id, idx, kind, text)"
		       " VALUES (?, ?, ?, ?)");
	if (r < 0)
		goto out;
	for (i = 0; i < p->nlines; i++) {
		r = insert_line(db, lt, p->id, idx++, p->lines[i].kind, p->lines[i].text);
		if (r < 0)
			goto out;
	}
	for (i = 0; i < p->nprotocol_errors; i++) {
		r = insert_line(db, lt, p->id, idx++, "error", p->protocol_errors[i]);
		if (r < 0)
			goto out;
	}

	/* A process that printed nothing has no output row. */
	if (p->out_len || p->err_len) {
		r = db_prepare(db, &st, "INSERT INTO process_output (process_id, stdout, stderr)"
			       " VALUES (?, ?, ?)");
		if (r < 0)
			goto out;
		sqlite3_bind_int64(st, 1, p->id);
		sqlite3_bind_blob(st, 2, p->out ? p->out : "", (int)p->out_len, SQLITE_STATIC);
		sqlite3_bind_blob(st, 3, p->err ? p->err : "", (int)p->err_len, SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc != SQLITE_DONE) {
			r = db_fail(db, rc, "recording a process's output");
			goto out;
		}
	}
out:
	db_finish(st);
	db_finish(mt);
	db_finish(lt);
	return r;
}

int db_process_finish(struct db *db, const struct db_process *p)
{
	sqlite3_stmt *st = NULL;
	int rc, r;

	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_prepare(db, &st,
		       "UPDATE processes SET state = 'done', ended_at = ?, exit_code = ?,"
		       " signal = ?, timed_out = ?, spawn_error = ?, wall_ms = ?,"
		       " user_ms = ?, sys_ms = ?, maxrss_kb = ?, digest = ?,"
		       " record_valid = ?, stdout_bytes = ?, stderr_bytes = ?, fault = ?,"
		       " fault_watch = ?, started_at = COALESCE(NULLIF(?17, ''), started_at)"
		       " WHERE id = ?16");
	if (r < 0)
		goto out;
	db_bind_text(st, 1, p->ended_at);
	sqlite3_bind_int(st, 2, p->exit_code);
	sqlite3_bind_int(st, 3, p->signal);
	sqlite3_bind_int(st, 4, p->timed_out);
	db_bind_text(st, 5, p->spawn_error);
	db_bind_real(st, 6, p->wall_ms);
	db_bind_real(st, 7, p->user_ms);
	db_bind_real(st, 8, p->sys_ms);
	sqlite3_bind_int64(st, 9, p->maxrss_kb);
	db_bind_text(st, 10, p->digest);
	sqlite3_bind_int(st, 11, p->record_valid);
	sqlite3_bind_int64(st, 12, p->stdout_bytes);
	sqlite3_bind_int64(st, 13, p->stderr_bytes);
	db_bind_text(st, 14, p->fault);
	db_bind_text(st, 15, p->fault_watch);
	sqlite3_bind_int64(st, 16, p->id);
	/* The row was made before the process started (a cool-down may lie
	 * between): its start is the launcher's. */
	db_bind_text(st, 17, p->started_at);
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		r = db_fail(db, rc, "recording a process's end");
		goto out;
	}
	r = db_receipt_forget(db, p->comparison_id);
	if (r == 0)
		r = store_children(db, p);
	if (r == 0)
		r = db_commit(db);
out:
	db_finish(st);
	if (r < 0)
		db_rollback(db);
	return r;
}

/* The columns are those db_process_insert, db_process_finish and
 * db_comparison_finish write between them, bound the same way, so that a
 * row stored whole is the row those three leave for a process that ran to
 * its end. */
int db_process_store(struct db *db, int64_t *out_id, const struct db_process *p)
{
	struct db_process with_id;
	sqlite3_stmt *st = NULL;
	int64_t id = 0;
	int r;

	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_prepare(db, &st,
		       "INSERT INTO processes (comparison_id, seq, arm, pair, warmup, state,"
		       " started_at, cpus, ended_at, exit_code, signal, timed_out, spawn_error,"
		       " wall_ms, user_ms, sys_ms, maxrss_kb, digest, record_valid,"
		       " stdout_bytes, stderr_bytes, fault, fault_watch, valid, invalid_reason)"
		       " VALUES (?, ?, ?, ?, ?, 'done', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
		       " ?, ?, ?, ?, ?)");
	if (r < 0)
		goto out;
	sqlite3_bind_int64(st, 1, p->comparison_id);
	sqlite3_bind_int(st, 2, p->seq);
	db_bind_text(st, 3, p->arm);
	sqlite3_bind_int(st, 4, p->pair);
	sqlite3_bind_int(st, 5, p->warmup);
	db_bind_text(st, 6, p->started_at);
	db_bind_text(st, 7, p->cpus);
	db_bind_text(st, 8, p->ended_at);
	sqlite3_bind_int(st, 9, p->exit_code);
	sqlite3_bind_int(st, 10, p->signal);
	sqlite3_bind_int(st, 11, p->timed_out);
	db_bind_text(st, 12, p->spawn_error);
	db_bind_real(st, 13, p->wall_ms);
	db_bind_real(st, 14, p->user_ms);
	db_bind_real(st, 15, p->sys_ms);
	sqlite3_bind_int64(st, 16, p->maxrss_kb);
	db_bind_text(st, 17, p->digest);
	sqlite3_bind_int(st, 18, p->record_valid);
	sqlite3_bind_int64(st, 19, p->stdout_bytes);
	sqlite3_bind_int64(st, 20, p->stderr_bytes);
	db_bind_text(st, 21, p->fault);
	db_bind_text(st, 22, p->fault_watch);
	sqlite3_bind_int(st, 23, p->valid);
	db_bind_text(st, 24, p->invalid_reason);
	r = db_step_insert(db, st, &id, "recording a process");
	if (r < 0)
		goto out;
	with_id = *p;   /* shallow: store_children only reads */
	with_id.id = id;
	r = store_children(db, &with_id);
	if (r == 0)
		r = db_commit(db);
	if (r == 0)
		*out_id = id;
out:
	if (r < 0)
		db_rollback(db);
	return r;
}

static void process_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_process *p = elem;

	p->id = sqlite3_column_int64(st, 0);
	p->comparison_id = *(const int64_t *)arg;
	p->seq = sqlite3_column_int(st, 1);
	db_column_copy(p->arm, sizeof(p->arm), st, 2);
	p->pair = sqlite3_column_int(st, 3);
	p->warmup = sqlite3_column_int(st, 4);
	p->state = state_parse((const char *)sqlite3_column_text(st, 5));
	db_column_copy(p->started_at, sizeof(p->started_at), st, 6);
	db_column_copy(p->ended_at, sizeof(p->ended_at), st, 7);
	p->exit_code = sqlite3_column_type(st, 8) == SQLITE_NULL ? -1 :
		       sqlite3_column_int(st, 8);
	p->signal = sqlite3_column_int(st, 9);
	p->timed_out = sqlite3_column_int(st, 10);
	p->spawn_error = db_column_strdup(st, 11);
	p->wall_ms = db_column_real(st, 12);
	p->user_ms = db_column_real(st, 13);
	p->sys_ms = db_column_real(st, 14);
	p->maxrss_kb = sqlite3_column_int64(st, 15);
	p->cpus = db_column_strdup(st, 16);
	p->digest = db_column_strdup(st, 17);
	p->record_valid = sqlite3_column_int(st, 18);
	p->stdout_bytes = sqlite3_column_int64(st, 19);
	p->stderr_bytes = sqlite3_column_int64(st, 20);
	p->fault = db_column_strdup(st, 21);
	p->valid = sqlite3_column_int(st, 22);
	p->invalid_reason = db_column_strdup(st, 23);
	p->fault_watch = db_column_strdup(st, 24);
	p->stdout_kept = sqlite3_column_int64(st, 25);
	p->stderr_kept = sqlite3_column_int64(st, 26);
}

static void process_release(void *elem)
{
	db_process_release(elem);
}

/* The process rows of a comparison, in execution order. */
static int process_rows_load(struct db *db, struct db_process **out, size_t *out_n,
			     int64_t comparison_id)
{
	const struct db_rows how = {
		.size = sizeof(struct db_process), .max = SIZE_MAX, .fill = process_fill,
		.release = process_release, .arg = &comparison_id, .doing = "loading processes",
	};
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	r = db_prepare(db, &st,
		       "SELECT id, seq, arm, pair, warmup, state, started_at, ended_at,"
		       " exit_code, signal, timed_out, spawn_error, wall_ms, user_ms,"
		       " sys_ms, maxrss_kb, cpus, digest, record_valid, stdout_bytes,"
		       " stderr_bytes, fault, valid, invalid_reason, fault_watch,"
		       " coalesce(length(o.stdout), 0), coalesce(length(o.stderr), 0)"
		       " FROM processes LEFT JOIN process_output o ON o.process_id = id"
		       " WHERE comparison_id = ? ORDER BY seq");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, comparison_id);
	r = db_rows_load(db, st, &how, &v, out_n);
	*out = v;
	return r;
}

/* The processes a comparison's metric and line rows are handed out to. */
struct process_set {
	struct db_process *procs;
	size_t n;
};

/* The process with this id (sorted by id is not assumed), or NULL. */
static struct db_process *find_by_id(const struct process_set *set, int64_t id)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (set->procs[i].id == id)
			return &set->procs[i];
	return NULL;
}

static void metric_add(sqlite3_stmt *st, void *arg)
{
	struct db_process *p = find_by_id(arg, sqlite3_column_int64(st, 0));

	if (!p)
		return;
	p->metrics = xrealloc(p->metrics, (p->nmetrics + 1) * sizeof(*p->metrics));
	p->metrics[p->nmetrics].name = db_column_strdup(st, 1);
	p->metrics[p->nmetrics].value = db_column_real(st, 2);
	p->nmetrics++;
}

/* Every metric of the comparison's processes, in one query. */
static int metrics_load(struct db *db, struct process_set *set, int64_t comparison_id)
{
	sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st,
		       "SELECT m.process_id, m.name, m.value FROM metrics m"
		       " JOIN processes p ON p.id = m.process_id"
		       " WHERE p.comparison_id = ? ORDER BY m.process_id, m.name");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, comparison_id);
	r = db_rows_each(db, st, SIZE_MAX, metric_add, set, "loading metrics");
	return r < 0 ? r : 0;
}

/* A process line is a RESULT or SUMMARY line, or a malformed one (kind
 * "error") kept among the protocol errors. */
static void line_add(sqlite3_stmt *st, void *arg)
{
	struct db_process *p = find_by_id(arg, sqlite3_column_int64(st, 0));
	const char *kind = (const char *)sqlite3_column_text(st, 1);

	if (!p || !kind)
		return;
	if (!strcmp(kind, "error")) {
		p->protocol_errors = xrealloc(p->protocol_errors,
			(p->nprotocol_errors + 1) * sizeof(char *));
		p->protocol_errors[p->nprotocol_errors++] = db_column_strdup(st, 2);
	} else {
		p->lines = xrealloc(p->lines, (p->nlines + 1) * sizeof(*p->lines));
		p->lines[p->nlines].kind = xstrdup(kind);
		p->lines[p->nlines].text = db_column_strdup(st, 2);
		p->nlines++;
	}
}

/* Every line of the comparison's processes, in one query. */
static int lines_load(struct db *db, struct process_set *set, int64_t comparison_id)
{
	sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st,
		       "SELECT l.process_id, l.kind, l.text FROM process_lines l"
		       " JOIN processes p ON p.id = l.process_id"
		       " WHERE p.comparison_id = ? ORDER BY l.process_id, l.idx");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, comparison_id);
	r = db_rows_each(db, st, SIZE_MAX, line_add, set, "loading process lines");
	return r < 0 ? r : 0;
}

/*
 * Three queries per comparison, not three per process: the metrics and the
 * lines of all its processes come in one query each and are handed to
 * their process by id.
 */
int db_processes_load(struct db *db, struct db_process **out, size_t *out_n,
		      int64_t comparison_id)
{
	struct process_set set = { NULL, 0 };
	size_t i;
	int r;

	*out = NULL;
	*out_n = 0;
	r = process_rows_load(db, &set.procs, &set.n, comparison_id);
	if (r < 0)
		return r;
	r = metrics_load(db, &set, comparison_id);
	if (r == 0)
		r = lines_load(db, &set, comparison_id);
	if (r < 0) {
		for (i = 0; i < set.n; i++)
			db_process_release(&set.procs[i]);
		free(set.procs);
		return r;
	}
	*out = set.procs;
	*out_n = set.n;
	return 0;
}

int db_process_output_load(struct db *db, struct db_process *out,
			   int64_t comparison_id, int seq)
{
	sqlite3_stmt *st = NULL;
	int rc, r;

	r = db_prepare(db, &st,
		       "SELECT o.stdout, o.stderr FROM process_output o"
		       " JOIN processes p ON p.id = o.process_id"
		       " WHERE p.comparison_id = ? AND p.seq = ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, comparison_id);
	sqlite3_bind_int(st, 2, seq);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		r = err_set(-ENOENT, "comparison %lld has no captured output for process %d",
			    (long long)comparison_id, seq);
		goto out;
	}
	if (rc != SQLITE_ROW) {
		r = db_fail(db, rc, "loading captured output");
		goto out;
	}
	out->out_len = (size_t)sqlite3_column_bytes(st, 0);
	out->out = xmalloc(out->out_len + 1);
	memcpy(out->out, sqlite3_column_blob(st, 0) ? sqlite3_column_blob(st, 0) : "",
	       out->out_len);
	out->out[out->out_len] = '\0';
	out->err_len = (size_t)sqlite3_column_bytes(st, 1);
	out->err = xmalloc(out->err_len + 1);
	memcpy(out->err, sqlite3_column_blob(st, 1) ? sqlite3_column_blob(st, 1) : "",
	       out->err_len);
	out->err[out->err_len] = '\0';
out:
	db_finish(st);
	return r;
}
