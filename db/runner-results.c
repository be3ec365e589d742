/*
 * Runner results with their runner_lines: one process of a contract runner
 * over a build, its outcome and its RESULT and SUMMARY lines.
 */
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

void db_runner_result_release(struct db_runner_result *r)
{
	size_t i;

	if (!r)
		return;
	free(r->binary_sha256);
	free(r->spawn_error);
	free(r->output);
	for (i = 0; i < r->nlines; i++) {
		free(r->lines[i].kind);
		free(r->lines[i].text);
	}
	free(r->lines);
	memset(r, 0, sizeof(*r));
}

int db_runner_result_done(struct db *db, int64_t build_id, const char *runner, int chunk)
{
	int64_t n;
	int r;

	r = db_run_count(db, &n, "SELECT count(*) FROM runner_results WHERE build_id = ? AND"
			 " runner = ? AND chunk = ? AND state = 'done'",
			 DB_ARGS(DB_INT(build_id), DB_TEXT(runner), DB_INT(chunk)), "reading results");
	return r < 0 ? r : n > 0;
}

int db_runner_result_insert(struct db *db, int64_t *out_id, const struct db_runner_result *r)
{
	return db_run_insert(db, out_id, "INSERT INTO runner_results (build_id, runner, chunk,"
			     " chunks, state, binary_sha256, started_at, owner)"
			     " VALUES (?, ?, ?, ?, 'running', ?, ?, ?)",
			     DB_ARGS(DB_INT(r->build_id), DB_TEXT(r->runner), DB_INT(r->chunk),
				     DB_INT(r->chunks), DB_TEXT(r->binary_sha256),
				     DB_TEXT(r->started_at), DB_TEXT(db->owner)),
			     "recording a runner's start");
}

int db_runner_result_finish(struct db *db, const struct db_runner_result *r)
{
	size_t i;
	int ret;

	ret = db_begin(db);
	if (ret < 0)
		return ret;
	ret = db_run(db, "UPDATE runner_results SET owner = NULL, state = 'done', ended_at = ?,"
		     " exit_code = ?, signal = ?, timed_out = ?, elapsed_ms = ?,"
		     " spawn_error = ?, output = ? WHERE id = ?",
		     DB_ARGS(DB_TEXT(r->ended_at), DB_INT(r->exit_code), DB_INT(r->signal),
			     DB_INT(r->timed_out), DB_REAL(r->elapsed_ms), DB_TEXT(r->spawn_error),
			     DB_BLOB(r->output, r->output_len), DB_INT(r->id)),
		     "recording a runner's end");
	for (i = 0; ret == 0 && i < r->nlines; i++)
		ret = db_line_insert(db, "INSERT INTO runner_lines (result_id, idx, kind, text)"
				     " VALUES (?, ?, ?, ?)", r->id, (int64_t)i, r->lines[i].kind,
				     r->lines[i].text, "recording a runner's lines");
	return db_end(db, ret);
}

static void runner_result_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_runner_result *x = elem;

	x->id = sqlite3_column_int64(st, 0);
	x->build_id = *(const int64_t *)arg;
	db_column_copy(x->runner, sizeof(x->runner), st, 1);
	x->chunk = sqlite3_column_int(st, 2);
	x->chunks = sqlite3_column_int(st, 3);
	x->binary_sha256 = db_column_strdup(st, 4);
	db_column_copy(x->started_at, sizeof(x->started_at), st, 5);
	db_column_copy(x->ended_at, sizeof(x->ended_at), st, 6);
	x->exit_code = sqlite3_column_int(st, 7);
	x->signal = sqlite3_column_int(st, 8);
	x->timed_out = sqlite3_column_int(st, 9);
	x->elapsed_ms = db_column_real(st, 10);
	x->spawn_error = db_column_strdup(st, 11);
	x->state = DB_STATE_DONE;
}

static void runner_result_release(void *elem)
{
	db_runner_result_release(elem);
}

static void line_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_line *l = elem;

	l->kind = db_column_strdup(st, 0);
	l->text = db_column_strdup(st, 1);
}

static void line_release(void *elem)
{
	struct db_line *l = elem;

	free(l->kind);
	free(l->text);
}

static int runner_lines_load(struct db *db, struct db_runner_result *x)
{
	static const struct db_rows how = {
		.size = sizeof(struct db_line), .max = SIZE_MAX, .fill = line_fill,
		.release = line_release, .doing = "loading runner lines",
	};

	return db_rows_select(db, "SELECT kind, text FROM runner_lines WHERE result_id = ?"
			      " ORDER BY idx", DB_ARGS(DB_INT(x->id)), &how, &x->lines, &x->nlines);
}

static void output_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_runner_result *x = elem;

	x->output = db_column_blobdup(st, 0, &x->output_len);
}

int db_runner_result_output(struct db *db, struct db_runner_result *x)
{
	free(x->output);
	x->output = NULL;
	x->output_len = 0;
	return db_run_row(db, output_fill, x, "SELECT output FROM runner_results WHERE id = ?",
			  DB_ARGS(DB_INT(x->id)), "loading a runner's output");
}

int db_runner_results_load(struct db *db, struct db_runner_result **out, size_t *out_n,
			   int64_t build_id)
{
	const struct db_rows how = {
		.size = sizeof(struct db_runner_result), .max = SIZE_MAX,
		.fill = runner_result_fill, .release = runner_result_release, .arg = &build_id,
		.doing = "loading runner results",
	};
	struct db_runner_result *res;
	size_t n, i;
	int r;

	*out = NULL;
	*out_n = 0;
	r = db_rows_select(db, "SELECT id, runner, chunk, chunks, binary_sha256, started_at,"
			   " coalesce(ended_at, ''), coalesce(exit_code, -1), coalesce(signal, 0),"
			   " coalesce(timed_out, 0), elapsed_ms, spawn_error FROM runner_results"
			   " WHERE build_id = ? AND state = 'done' ORDER BY runner, chunk",
			   DB_ARGS(DB_INT(build_id)), &how, &res, &n);
	if (r < 0)
		return r;
	/* The results' statement is reset before their lines are read. */
	for (i = 0; i < n; i++) {
		r = runner_lines_load(db, &res[i]);
		if (r < 0)
			goto fail;
	}
	*out = res;
	*out_n = n;
	return 0;
fail:
	for (i = 0; i < n; i++)
		db_runner_result_release(&res[i]);
	free(res);
	return r;
}
