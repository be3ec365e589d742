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

double db_process_load(double cpu_wait_ms, double wall_ms)
{
	return isfinite(cpu_wait_ms) && wall_ms > 0 ? cpu_wait_ms / wall_ms : NAN;
}

/* The columns a process has from its start, and those its end sets: bound
 * alike by db_process_insert, db_process_finish and db_process_store. */
#define START_ARGS(p) DB_INT((p)->comparison_id), DB_INT((p)->seq), DB_TEXT((p)->arm), \
	DB_INT((p)->pair), DB_INT((p)->warmup), DB_TEXT((p)->started_at), DB_TEXT((p)->cpus)
#define END_ARGS(p) DB_TEXT((p)->ended_at), DB_INT((p)->exit_code), DB_INT((p)->signal), \
	DB_INT((p)->timed_out), DB_TEXT((p)->spawn_error), DB_REAL((p)->wall_ms), \
	DB_REAL((p)->user_ms), DB_REAL((p)->sys_ms), DB_INT((p)->maxrss_kb), \
	DB_TEXT((p)->digest), DB_INT((p)->record_valid), DB_INT((p)->stdout_bytes), \
	DB_INT((p)->stderr_bytes), DB_TEXT((p)->fault), DB_TEXT((p)->fault_watch), \
	DB_REAL((p)->cpu_wait_ms)

int db_process_insert(struct db *db, int64_t *out_id, const struct db_process *p)
{
	int64_t id = 0;
	int r;

	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_run_insert(db, &id, "INSERT INTO processes (comparison_id, seq, arm, pair, warmup,"
			  " started_at, cpus, state) VALUES (?, ?, ?, ?, ?, ?, ?, 'running')",
			  DB_ARGS(START_ARGS(p)), "recording a process start");
	if (r == 0)
		r = db_receipt_forget(db, p->comparison_id);
	r = db_end(db, r);
	if (r == 0)
		*out_id = id;
	return r;
}

static int insert_line(struct db *db, int64_t pid, int idx, const char *kind, const char *text)
{
	return db_line_insert(db, "INSERT INTO process_lines (process_id, idx, kind, text)"
			      " VALUES (?, ?, ?, ?)", pid, idx, kind, text,
			      "recording a process's lines");
}

/* The rows a finished process owns besides its own: its metrics, its lines
 * (the malformed ones after them, kind "error") and its captured output. */
static int store_children(struct db *db, const struct db_process *p)
{
	size_t i;
	int r = 0, idx = 0;

	for (i = 0; r == 0 && i < p->nmetrics; i++)
		r = db_run(db, "INSERT INTO metrics (process_id, name, value) VALUES (?, ?, ?)",
			   DB_ARGS(DB_INT(p->id), DB_TEXT(p->metrics[i].name),
				   DB_REAL(p->metrics[i].value)), "recording a metric");
	for (i = 0; r == 0 && i < p->nlines; i++)
		r = insert_line(db, p->id, idx++, p->lines[i].kind, p->lines[i].text);
	for (i = 0; r == 0 && i < p->nprotocol_errors; i++)
		r = insert_line(db, p->id, idx++, "error", p->protocol_errors[i]);
	/* A process that printed nothing has no output row. */
	if (r == 0 && (p->out_len || p->err_len))
		r = db_run(db, "INSERT INTO process_output (process_id, stdout, stderr)"
			   " VALUES (?, ?, ?)", DB_ARGS(DB_INT(p->id), DB_BLOB(p->out, p->out_len),
							DB_BLOB(p->err, p->err_len)),
			   "recording a process's output");
	return r;
}

int db_process_finish(struct db *db, const struct db_process *p)
{
	int r;

	r = db_begin(db);
	if (r < 0)
		return r;
	/* The row was made before the process started (a cool-down may lie
	 * between): its start is the launcher's. */
	r = db_run(db, "UPDATE processes SET state = 'done', ended_at = ?, exit_code = ?,"
		   " signal = ?, timed_out = ?, spawn_error = ?, wall_ms = ?,"
		   " user_ms = ?, sys_ms = ?, maxrss_kb = ?, digest = ?,"
		   " record_valid = ?, stdout_bytes = ?, stderr_bytes = ?, fault = ?,"
		   " fault_watch = ?, cpu_wait_ms = ?,"
		   " started_at = COALESCE(NULLIF(?18, ''), started_at)"
		   " WHERE id = ?17", DB_ARGS(END_ARGS(p), DB_INT(p->id), DB_TEXT(p->started_at)),
		   "recording a process's end");
	if (r == 0)
		r = db_receipt_forget(db, p->comparison_id);
	if (r == 0)
		r = store_children(db, p);
	return db_end(db, r);
}

/* The columns are those db_process_insert, db_process_finish and
 * db_comparison_finish write between them, bound the same way, so that a
 * row stored whole is the row those three leave for a process that ran to
 * its end. */
int db_process_store(struct db *db, int64_t *out_id, const struct db_process *p)
{
	struct db_process with_id;
	int64_t id = 0;
	int r;

	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_run_insert(db, &id, "INSERT INTO processes (comparison_id, seq, arm, pair, warmup,"
			  " started_at, cpus, ended_at, exit_code, signal, timed_out, spawn_error,"
			  " wall_ms, user_ms, sys_ms, maxrss_kb, digest, record_valid,"
			  " stdout_bytes, stderr_bytes, fault, fault_watch, cpu_wait_ms, valid,"
			  " invalid_reason, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
			  " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'done')",
			  DB_ARGS(START_ARGS(p), END_ARGS(p), DB_INT(p->valid),
				  DB_TEXT(p->invalid_reason)), "recording a process");
	if (r == 0) {
		with_id = *p;   /* shallow: store_children only reads */
		with_id.id = id;
		r = store_children(db, &with_id);
	}
	r = db_end(db, r);
	if (r == 0)
		*out_id = id;
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
	p->cpu_wait_ms = db_column_real(st, 27);
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

	return db_rows_select(db, "SELECT id, seq, arm, pair, warmup, state, started_at, ended_at,"
			      " exit_code, signal, timed_out, spawn_error, wall_ms, user_ms,"
			      " sys_ms, maxrss_kb, cpus, digest, record_valid, stdout_bytes,"
			      " stderr_bytes, fault, valid, invalid_reason, fault_watch,"
			      " coalesce(length(o.stdout), 0), coalesce(length(o.stderr), 0), cpu_wait_ms"
			      " FROM processes LEFT JOIN process_output o ON o.process_id = id"
			      " WHERE comparison_id = ? ORDER BY seq", DB_ARGS(DB_INT(comparison_id)),
			      &how, out, out_n);
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

/* Hands every row of sql, whose one parameter is the comparison's id, to
 * fn with the comparison's processes. */
static int children_load(struct db *db, struct process_set *set, int64_t comparison_id,
			 const char *sql, void (*fn)(sqlite3_stmt *st, void *arg), const char *doing)
{
	sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare_bound(db, &st, sql, DB_ARGS(DB_INT(comparison_id)));
	if (r == 0)
		r = db_rows_each(db, st, SIZE_MAX, fn, set, doing);
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
	r = children_load(db, &set, comparison_id, "SELECT m.process_id, m.name, m.value"
			  " FROM metrics m JOIN processes p ON p.id = m.process_id"
			  " WHERE p.comparison_id = ? ORDER BY m.process_id, m.name", metric_add,
			  "loading metrics");
	if (r == 0)
		r = children_load(db, &set, comparison_id, "SELECT l.process_id, l.kind, l.text"
				  " FROM process_lines l JOIN processes p ON p.id = l.process_id"
				  " WHERE p.comparison_id = ? ORDER BY l.process_id, l.idx", line_add,
				  "loading process lines");
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

static void output_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_process *p = elem;

	p->out = db_column_blobdup(st, 0, &p->out_len);
	p->err = db_column_blobdup(st, 1, &p->err_len);
}

int db_process_output_load(struct db *db, struct db_process *out,
			   int64_t comparison_id, int seq)
{
	int r;

	r = db_run_row(db, output_fill, out, "SELECT o.stdout, o.stderr FROM process_output o"
		       " JOIN processes p ON p.id = o.process_id"
		       " WHERE p.comparison_id = ? AND p.seq = ?",
		       DB_ARGS(DB_INT(comparison_id), DB_INT(seq)), "loading captured output");
	if (r == -ENOENT)
		r = err_set(-ENOENT, "comparison %lld has no captured output for process %d",
			    (long long)comparison_id, seq);
	return r;
}
