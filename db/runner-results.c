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
	sqlite3_stmt *st;
	int rc, r;

	r = db_prepare(db, &st, "SELECT count(*) FROM runner_results WHERE build_id = ? AND"
		       " runner = ? AND chunk = ? AND state = 'done'");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, build_id);
	db_bind_text(st, 2, runner);
	sqlite3_bind_int(st, 3, chunk);
	rc = sqlite3_step(st);
	r = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) > 0 : db_fail(db, rc, "reading results");
	db_finish(st);
	return r;
}

int db_runner_result_insert(struct db *db, int64_t *out_id, const struct db_runner_result *r)
{
	sqlite3_stmt *st;
	int ret;

	ret = db_prepare(db, &st, "INSERT INTO runner_results (build_id, runner, chunk, chunks,"
			 " state, binary_sha256, started_at, owner)"
			 " VALUES (?, ?, ?, ?, 'running', ?, ?, ?)");
	if (ret < 0)
		return ret;
	sqlite3_bind_int64(st, 1, r->build_id);
	db_bind_text(st, 2, r->runner);
	sqlite3_bind_int(st, 3, r->chunk);
	sqlite3_bind_int(st, 4, r->chunks);
	db_bind_text(st, 5, r->binary_sha256);
	db_bind_text(st, 6, r->started_at);
	db_bind_text(st, 7, db->owner);
	return db_step_insert(db, st, out_id, "recording a runner's start");
}

int db_runner_result_finish(struct db *db, const struct db_runner_result *r)
{
	sqlite3_stmt *st;
	size_t i;
	int ret;

	ret = db_begin(db);
	if (ret < 0)
		return ret;
	ret = db_prepare(db, &st, "UPDATE runner_results SET owner = NULL, state = 'done', ended_at = ?,"
			 " exit_code = ?, signal = ?, timed_out = ?, elapsed_ms = ?,"
			 " spawn_error = ?, output = ? WHERE id = ?");
	if (ret < 0)
		goto out;
	db_bind_text(st, 1, r->ended_at);
	sqlite3_bind_int(st, 2, r->exit_code);
	sqlite3_bind_int(st, 3, r->signal);
	sqlite3_bind_int(st, 4, r->timed_out);
	db_bind_real(st, 5, r->elapsed_ms);
	db_bind_text(st, 6, r->spawn_error);
	sqlite3_bind_blob(st, 7, r->output ? r->output : "", (int)r->output_len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 8, r->id);
	ret = db_step(db, st, "recording a runner's end");
	for (i = 0; ret == 0 && i < r->nlines; i++) {
		char *fixed;

		ret = db_prepare(db, &st, "INSERT INTO runner_lines (result_id, idx, kind, text)"
				 " VALUES (?, ?, ?, ?)");
		if (ret < 0)
			break;
		/* Stored repaired (utf8_repair); the bytes as printed stay in output. */
		fixed = utf8_repair_dup(r->lines[i].text);
		sqlite3_bind_int64(st, 1, r->id);
		sqlite3_bind_int(st, 2, (int)i);
		db_bind_text(st, 3, r->lines[i].kind);
		db_bind_text(st, 4, fixed);
		ret = db_step(db, st, "recording a runner's lines");
		free(fixed);
	}
out:
	if (ret < 0) {
		db_rollback(db);
		return ret;
	}
	return db_commit(db);
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
	sqlite3_stmt *st;
	void *v;
	int r;

	r = db_prepare(db, &st, "SELECT kind, text FROM runner_lines WHERE result_id = ?"
		       " ORDER BY idx");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, x->id);
	r = db_rows_load(db, st, &how, &v, &x->nlines);
	x->lines = v;
	return r;
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
	sqlite3_stmt *st;
	size_t n, i;
	void *v;
	int r;

	*out = NULL;
	*out_n = 0;
	r = db_prepare(db, &st, "SELECT id, runner, chunk, chunks, binary_sha256, started_at,"
		       " coalesce(ended_at, ''), coalesce(exit_code, -1), coalesce(signal, 0),"
		       " coalesce(timed_out, 0), elapsed_ms, spawn_error FROM runner_results"
		       " WHERE build_id = ? AND state = 'done' ORDER BY runner, chunk");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, build_id);
	r = db_rows_load(db, st, &how, &v, &n);
	if (r < 0)
		return r;
	res = v;
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
