/*
 * Builds with their build_artifacts: the agent's build of a commit, reused
 * per tree, recipe and host; and, at an agent's start, marking what a
 * killed one left running (builds and their runner results) as abandoned.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

static const char *const build_states[] = { "running", "done", "failed", "abandoned" };

const char *db_build_state_name(enum db_build_state s)
{
	return build_states[s];
}

static enum db_build_state build_state(const char *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(build_states); i++)
		if (s && !strcmp(s, build_states[i]))
			return (enum db_build_state)i;
	return DB_BUILD_RUNNING;
}

void db_build_release(struct db_build *b)
{
	size_t i;

	if (!b)
		return;
	free(b->dir);
	free(b->log);
	free(b->toolchain);
	free(b->fingerprint);
	free(b->detail);
	for (i = 0; i < b->nartifacts; i++) {
		free(b->artifacts[i].name);
		db_artifact_release(&b->artifacts[i].artifact);
	}
	free(b->artifacts);
	memset(b, 0, sizeof(*b));
}

#define BUILD_COLUMNS "id, host, commit_oid, tree_oid, recipe_hash, state, dir, started_at," \
	" coalesce(finished_at, ''), coalesce(exit_code, -1), coalesce(signal, 0)," \
	" coalesce(timed_out, 0), wall_ms, log, coalesce(log_bytes, 0), toolchain, fingerprint, detail"

static void build_artifact_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_build_artifact *ba = elem;

	ba->name = db_column_strdup(st, 0);
	ba->artifact.id = sqlite3_column_int64(st, 1);
	ba->artifact.path = db_column_strdup(st, 2);
	ba->artifact.size = sqlite3_column_int64(st, 3);
	db_column_copy(ba->artifact.sha256, sizeof(ba->artifact.sha256), st, 4);
}

static void build_artifact_release(void *elem)
{
	struct db_build_artifact *ba = elem;

	free(ba->name);
	db_artifact_release(&ba->artifact);
}

static int build_fill(struct db *db, struct db_build *b, sqlite3_stmt *st)
{
	static const struct db_rows how = {
		.size = sizeof(struct db_build_artifact), .max = SIZE_MAX,
		.fill = build_artifact_fill, .release = build_artifact_release,
		.doing = "loading a build's artifacts",
	};
	sqlite3_stmt *at;
	void *v;
	int r;

	memset(b, 0, sizeof(*b));
	b->id = sqlite3_column_int64(st, 0);
	db_column_copy(b->host, sizeof(b->host), st, 1);
	db_column_copy(b->commit, sizeof(b->commit), st, 2);
	db_column_copy(b->tree, sizeof(b->tree), st, 3);
	db_column_copy(b->recipe_hash, sizeof(b->recipe_hash), st, 4);
	b->state = build_state((const char *)sqlite3_column_text(st, 5));
	b->dir = db_column_strdup(st, 6);
	db_column_copy(b->started_at, sizeof(b->started_at), st, 7);
	db_column_copy(b->finished_at, sizeof(b->finished_at), st, 8);
	b->exit_code = sqlite3_column_int(st, 9);
	b->signal = sqlite3_column_int(st, 10);
	b->timed_out = sqlite3_column_int(st, 11);
	b->wall_ms = db_column_real(st, 12);
	b->log_len = (size_t)sqlite3_column_bytes(st, 13);
	b->log = xmalloc(b->log_len + 1);
	if (b->log_len)
		memcpy(b->log, sqlite3_column_blob(st, 13), b->log_len);
	b->log[b->log_len] = '\0';
	b->log_bytes = sqlite3_column_int64(st, 14);
	b->toolchain = db_column_strdup(st, 15);
	b->fingerprint = db_column_strdup(st, 16);
	b->detail = db_column_strdup(st, 17);

	r = db_prepare(db, &at, "SELECT b.name, a.id, a.path, a.size, a.sha256"
		       " FROM build_artifacts b JOIN artifacts a ON a.id = b.artifact_id"
		       " WHERE b.build_id = ? ORDER BY b.name");
	if (r < 0)
		return r;
	sqlite3_bind_int64(at, 1, b->id);
	r = db_rows_load(db, at, &how, &v, &b->nartifacts);
	b->artifacts = v;
	return r;
}

static int build_query(struct db *db, struct db_build *out, sqlite3_stmt *st)
{
	struct db_build b;
	int rc, r = 0;

	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		db_finish(st);
		return -ENOENT;
	}
	if (rc != SQLITE_ROW) {
		r = db_fail(db, rc, "loading a build");
		db_finish(st);
		return r;
	}
	/* Copy the row out before the artifact query reuses the connection. */
	r = build_fill(db, &b, st);
	db_finish(st);
	if (r < 0) {
		db_build_release(&b);
		return r;
	}
	*out = b;
	return 0;
}

int db_build_find(struct db *db, struct db_build *out, const char *host, const char *tree,
		  const char *recipe_hash)
{
	sqlite3_stmt *st;
	int r;

	memset(out, 0, sizeof(*out));
	r = db_prepare(db, &st, "SELECT " BUILD_COLUMNS " FROM builds WHERE host = ? AND"
		       " tree_oid = ? AND recipe_hash = ? AND state != 'abandoned'"
		       " ORDER BY id DESC LIMIT 1");
	if (r < 0)
		return r;
	db_bind_text(st, 1, host);
	db_bind_text(st, 2, tree);
	db_bind_text(st, 3, recipe_hash);
	return build_query(db, out, st);
}

int db_build_latest(struct db *db, struct db_build *out, const char *host,
		    const char *recipe_hash)
{
	sqlite3_stmt *st;
	int r;

	memset(out, 0, sizeof(*out));
	r = db_prepare(db, &st, "SELECT " BUILD_COLUMNS " FROM builds WHERE host = ? AND"
		       " recipe_hash = ? AND state = 'done' ORDER BY id DESC LIMIT 1");
	if (r < 0)
		return r;
	db_bind_text(st, 1, host);
	db_bind_text(st, 2, recipe_hash);
	return build_query(db, out, st);
}

int db_build_load(struct db *db, struct db_build *out, int64_t id)
{
	sqlite3_stmt *st;
	int r;

	memset(out, 0, sizeof(*out));
	r = db_prepare(db, &st, "SELECT " BUILD_COLUMNS " FROM builds WHERE id = ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	r = build_query(db, out, st);
	if (r == -ENOENT)
		r = err_set(-ENOENT, "no build %lld in '%s'", (long long)id, db->path);
	return r;
}

int db_build_insert(struct db *db, int64_t *out_id, const struct db_build *b)
{
	sqlite3_stmt *st;
	int r;

	r = db_prepare(db, &st, "INSERT INTO builds (host, commit_oid, tree_oid, recipe_hash,"
		       " state, dir, started_at, fingerprint) VALUES (?, ?, ?, ?, 'running', ?, ?, ?)");
	if (r < 0)
		return r;
	db_bind_text(st, 1, b->host);
	db_bind_text(st, 2, b->commit);
	db_bind_text(st, 3, b->tree);
	db_bind_text(st, 4, b->recipe_hash);
	db_bind_text(st, 5, b->dir);
	db_bind_text(st, 6, b->started_at);
	db_bind_text(st, 7, b->fingerprint);
	return db_step_insert(db, st, out_id, "recording a build");
}

int db_build_finish(struct db *db, const struct db_build *b)
{
	sqlite3_stmt *st;
	size_t i;
	int r;

	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_prepare(db, &st, "UPDATE builds SET state = ?, finished_at = ?, exit_code = ?,"
		       " signal = ?, timed_out = ?, wall_ms = ?, log = ?, log_bytes = ?,"
		       " toolchain = ?, detail = ? WHERE id = ?");
	if (r < 0)
		goto out;
	db_bind_text(st, 1, db_build_state_name(b->state));
	db_bind_text(st, 2, b->finished_at);
	sqlite3_bind_int(st, 3, b->exit_code);
	sqlite3_bind_int(st, 4, b->signal);
	sqlite3_bind_int(st, 5, b->timed_out);
	db_bind_real(st, 6, b->wall_ms);
	sqlite3_bind_blob(st, 7, b->log ? b->log : "", (int)b->log_len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 8, b->log_bytes);
	db_bind_text(st, 9, b->toolchain);
	db_bind_text(st, 10, b->detail);
	sqlite3_bind_int64(st, 11, b->id);
	r = db_step(db, st, "recording a build's end");
	for (i = 0; r == 0 && i < b->nartifacts; i++) {
		r = db_prepare(db, &st, "INSERT OR REPLACE INTO build_artifacts (build_id, name,"
			       " artifact_id) VALUES (?, ?, ?)");
		if (r < 0)
			break;
		sqlite3_bind_int64(st, 1, b->id);
		db_bind_text(st, 2, b->artifacts[i].name);
		sqlite3_bind_int64(st, 3, b->artifacts[i].artifact.id);
		r = db_step(db, st, "recording a build's artifacts");
	}
out:
	if (r < 0) {
		db_rollback(db);
		return r;
	}
	return db_commit(db);
}

int db_build_abandon(struct db *db, int64_t id)
{
	sqlite3_stmt *st;
	int r;

	r = db_prepare(db, &st, "UPDATE builds SET state = 'abandoned' WHERE id = ? AND state = 'running'");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	return db_step(db, st, "abandoning a build");
}

int db_build_count(struct db *db, enum db_build_state state)
{
	sqlite3_stmt *st;
	int rc, r;

	r = db_prepare(db, &st, "SELECT count(*) FROM builds WHERE state = ?");
	if (r < 0)
		return r;
	db_bind_text(st, 1, db_build_state_name(state));
	rc = sqlite3_step(st);
	r = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : db_fail(db, rc, "counting builds");
	db_finish(st);
	return r;
}

int db_abandon_running(struct db *db)
{
	int r, n = 0;

	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_exec(db, "UPDATE builds SET state = 'abandoned' WHERE state = 'running'",
		    "abandoning builds");
	n += sqlite3_changes(db->h);
	if (r == 0) {
		r = db_exec(db, "UPDATE runner_results SET state = 'abandoned' WHERE state = 'running'",
			    "abandoning runner results");
		n += sqlite3_changes(db->h);
	}
	if (r < 0) {
		db_rollback(db);
		return r;
	}
	r = db_commit(db);
	return r < 0 ? r : n;
}
