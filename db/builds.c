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
		       " AND id NOT IN (SELECT build_id FROM stale_builds)"
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
		       " recipe_hash = ? AND state = 'done'"
		       " AND id NOT IN (SELECT build_id FROM stale_builds) ORDER BY id DESC LIMIT 1");
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
		       " state, dir, started_at, fingerprint, owner)"
		       " VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?)");
	if (r < 0)
		return r;
	db_bind_text(st, 1, b->host);
	db_bind_text(st, 2, b->commit);
	db_bind_text(st, 3, b->tree);
	db_bind_text(st, 4, b->recipe_hash);
	db_bind_text(st, 5, b->dir);
	db_bind_text(st, 6, b->started_at);
	db_bind_text(st, 7, b->fingerprint);
	db_bind_text(st, 8, db->owner);
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
	r = db_prepare(db, &st, "UPDATE builds SET owner = NULL, state = ?, finished_at = ?,"
		       " exit_code = ?,"
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

	r = db_prepare(db, &st, "UPDATE builds SET state = 'abandoned', owner = NULL"
		       " WHERE id = ? AND state = 'running'");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	return db_step(db, st, "abandoning a build");
}

int db_build_mark_stale(struct db *db, int64_t id, const char *reason)
{
	sqlite3_stmt *st;
	char at[TIME_ISO_LEN];
	int r;

	time_now_iso(at);
	r = db_prepare(db, &st, "INSERT OR IGNORE INTO stale_builds (build_id, reason, found_at)"
		       " VALUES (?, ?, ?)");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	db_bind_text(st, 2, reason);
	db_bind_text(st, 3, at);
	return db_step(db, st, "marking a build stale");
}

int db_build_stale_reason(struct db *db, char **out, int64_t id)
{
	sqlite3_stmt *st;
	int rc, r;

	r = db_prepare(db, &st, "SELECT reason FROM stale_builds WHERE build_id = ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = db_column_strdup(st, 0);
	r = rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT :
	    db_fail(db, rc, "reading a build's staleness");
	db_finish(st);
	return r;
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

int db_abandon_running(struct db *db, bool unowned)
{
	static const char *const sql[] = {
		"UPDATE builds SET state = 'abandoned', owner = NULL, detail = coalesce(detail,"
		" 'abandoned: the perfd that ran it (pid ' || coalesce(perfd_owner_pid(owner), '?')"
		" || ') ended before it finished') WHERE state = 'running' AND"
		" (perfd_owner_gone(owner) OR (?1 AND owner IS NULL))",
		"UPDATE runner_results SET state = 'abandoned', owner = NULL WHERE state = 'running' AND"
		" (perfd_owner_gone(owner) OR (?1 AND owner IS NULL))",
	};
	sqlite3_stmt *st = NULL;
	size_t i;
	int r, n = 0;

	r = db_begin(db);
	if (r < 0)
		return r;
	for (i = 0; i < ARRAY_SIZE(sql) && r == 0; i++) {
		r = db_prepare(db, &st, sql[i]);
		if (r < 0)
			break;
		sqlite3_bind_int(st, 1, unowned);
		r = db_step(db, st, "abandoning what a stopped perfd left running");
		n += sqlite3_changes(db->h);
	}
	if (r < 0) {
		db_rollback(db);
		return r;
	}
	r = db_commit(db);
	return r < 0 ? r : n;
}

/* ---- the agent's push of its builds, and the hub's ingest of them ---- */

/* This agent's finished builds with runner results the hub has not
 * acknowledged (or none acknowledged at all). */
#define BUILDS_UNSENT " FROM builds b WHERE b.origin_id IS NULL AND b.state IN ('done', 'failed')" \
	" AND coalesce((SELECT p.results FROM pushed_builds p WHERE p.build_id = b.id), -1) <" \
	" (SELECT count(*) FROM runner_results r WHERE r.build_id = b.id AND r.state = 'done')"

static void id_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	*(int64_t *)elem = sqlite3_column_int64(st, 0);
}

int db_builds_unpushed(struct db *db, int64_t **out, size_t *out_n, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(int64_t), .max = max, .fill = id_fill,
		.doing = "listing the builds not yet pushed",
	};
	sqlite3_stmt *st = NULL;
	void *v = NULL;
	int r;

	*out = NULL;
	*out_n = 0;
	r = db_prepare(db, &st, "SELECT b.id" BUILDS_UNSENT " ORDER BY b.id LIMIT ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)max);
	r = db_rows_load(db, st, &how, &v, out_n);
	*out = v;
	return r;
}

int db_builds_unpushed_count(struct db *db, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	int r;

	*out = 0;
	r = db_prepare(db, &st, "SELECT count(*)" BUILDS_UNSENT);
	if (r < 0)
		return r;
	r = db_step_count(db, st, out, "counting the builds not yet pushed");
	return r;
}

int db_build_pushed(struct db *db, int64_t id, size_t results, int status, const char *message)
{
	sqlite3_stmt *st = NULL;
	char now[TIME_ISO_LEN];
	int r;

	time_now_iso(now);
	r = db_prepare(db, &st, "INSERT OR REPLACE INTO pushed_builds (build_id, results, status,"
		       " message, pushed_at) VALUES (?, ?, ?, ?, ?)");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)results);
	sqlite3_bind_int(st, 3, status);
	db_bind_text(st, 4, message);
	db_bind_text(st, 5, now);
	r = db_step(db, st, "recording a build pushed");
	db_finish(st);
	return r;
}

int db_build_origin(struct db *db, int64_t *out_id, const char *host, int64_t origin_id)
{
	sqlite3_stmt *st = NULL;
	int rc, r;

	*out_id = 0;
	r = db_prepare(db, &st, "SELECT id FROM builds WHERE host = ? AND origin_id = ?");
	if (r < 0)
		return r;
	db_bind_text(st, 1, host);
	sqlite3_bind_int64(st, 2, origin_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out_id = sqlite3_column_int64(st, 0);
	else
		r = rc == SQLITE_DONE ? -ENOENT : db_fail(db, rc, "finding a host's build");
	db_finish(st);
	return r;
}

/* A host's runner result at the hub, unless it is there already. */
static int result_ingest(struct db *db, int64_t build_id, const struct db_runner_result *x,
			 int64_t origin_id, bool *stored)
{
	struct db_runner_result copy = *x;   /* shallow */
	sqlite3_stmt *st = NULL;
	int rc, r;

	r = db_prepare(db, &st, "SELECT count(*) FROM runner_results WHERE build_id = ? AND"
		       " origin_id = ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, build_id);
	sqlite3_bind_int64(st, 2, origin_id);
	rc = sqlite3_step(st);
	r = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : db_fail(db, rc, "reading results");
	db_finish(st);
	if (r != 0)
		return r < 0 ? r : 0;
	copy.build_id = build_id;
	r = db_runner_result_insert(db, &copy.id, &copy);
	if (r == 0)
		r = db_runner_result_finish(db, &copy);
	if (r < 0)
		return r;
	r = db_prepare(db, &st, "UPDATE runner_results SET origin_id = ? WHERE id = ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, origin_id);
	sqlite3_bind_int64(st, 2, copy.id);
	r = db_step(db, st, "recording a runner result's origin");
	*stored = r == 0;
	return r;
}

/* The host's comparisons ingested before build id came get it as their
 * base or head build; their receipts, which name their builds, are
 * rendered anew. */
static int link_step(struct db *db, sqlite3_stmt *st, int64_t id, const char *host,
		     int64_t origin_id)
{
	sqlite3_bind_int64(st, 1, id);
	db_bind_text(st, 2, host);
	sqlite3_bind_int64(st, 3, origin_id);
	return db_step(db, st, "linking a build's comparisons");
}

static int build_link(struct db *db, const char *host, int64_t origin_id, int64_t id)
{
	sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st, "DELETE FROM receipts WHERE comparison_id IN (SELECT comparison_id"
		       " FROM comparison_origins WHERE host = ?2 AND (origin_base_build = ?3 OR"
		       " origin_head_build = ?3)) AND ?1 = ?1");
	if (r == 0)
		r = link_step(db, st, id, host, origin_id);
	if (r == 0)
		r = db_prepare(db, &st, "UPDATE comparisons SET base_build = ?1 WHERE base_build IS"
			       " NULL AND id IN (SELECT comparison_id FROM comparison_origins"
			       " WHERE host = ?2 AND origin_base_build = ?3)");
	if (r == 0)
		r = link_step(db, st, id, host, origin_id);
	if (r == 0)
		r = db_prepare(db, &st, "UPDATE comparisons SET head_build = ?1 WHERE head_build IS"
			       " NULL AND id IN (SELECT comparison_id FROM comparison_origins"
			       " WHERE host = ?2 AND origin_head_build = ?3)");
	if (r == 0)
		r = link_step(db, st, id, host, origin_id);
	return r;
}

static int build_insert(struct db *db, int64_t *out_id, const struct db_build *b,
			int64_t origin_id, const char *sha256)
{
	struct db_build copy = *b;   /* shallow, but for its artifacts' ids */
	sqlite3_stmt *st = NULL;
	size_t i;
	int r;

	copy.artifacts = xcalloc(b->nartifacts + 1, sizeof(*copy.artifacts));
	memcpy(copy.artifacts, b->artifacts, b->nartifacts * sizeof(*copy.artifacts));
	r = db_build_insert(db, &copy.id, &copy);
	for (i = 0; r == 0 && i < b->nartifacts; i++)
		r = db_artifact_put(db, &copy.artifacts[i].artifact.id, &b->artifacts[i].artifact);
	if (r == 0)
		r = db_build_finish(db, &copy);
	if (r == 0)
		r = db_prepare(db, &st, "UPDATE builds SET origin_id = ?, sha256 = ? WHERE id = ?");
	if (r == 0) {
		sqlite3_bind_int64(st, 1, origin_id);
		db_bind_text(st, 2, sha256);
		sqlite3_bind_int64(st, 3, copy.id);
		r = db_step(db, st, "recording a build's origin");
	}
	*out_id = copy.id;
	if (r == 0 && b->state == DB_BUILD_DONE) {
		/* Its manifest, as the agent hashed it for the comparisons that
		 * name it: the same text gives the same hash here. */
		struct db_manifest m;

		r = db_manifest_of_build(&m, &copy);
		if (r == 0)
			r = db_manifest_put(db, &m);
		db_manifest_release(&m);
	}
	free(copy.artifacts);
	return r;
}

int db_build_ingest(struct db *db, const struct db_build *b, int64_t origin_id,
		    const char *build_sha256, const struct db_runner_result *rs,
		    const int64_t *rs_origin, size_t n, int64_t *out_id, bool *out_stored)
{
	sqlite3_stmt *st = NULL;
	char *held = NULL;
	int64_t id = 0;
	size_t i;
	int rc, r;

	*out_id = 0;
	*out_stored = false;
	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_build_origin(db, &id, b->host, origin_id);
	if (r == -ENOENT) {
		r = build_insert(db, &id, b, origin_id, build_sha256);
		if (r == 0)
			r = build_link(db, b->host, origin_id, id);
		if (r == 0)
			*out_stored = true;
	} else if (r == 0) {
		r = db_prepare(db, &st, "SELECT coalesce(sha256, '') FROM builds WHERE id = ?");
		if (r == 0) {
			sqlite3_bind_int64(st, 1, id);
			rc = sqlite3_step(st);
			if (rc == SQLITE_ROW)
				held = db_column_strdup(st, 0);
			else
				r = db_fail(db, rc, "reading a host's build");
			db_finish(st);
		}
		if (r == 0 && strcmp(held ? held : "", build_sha256))
			r = err_set(-EEXIST, "build %lld of host '%s' is here already with other "
				    "content: sha256 %.12s, this one %.12s; a finished build never "
				    "changes, only its runner results are added to",
				    (long long)origin_id, b->host, held ? held : "", build_sha256);
		free(held);
	}
	for (i = 0; r == 0 && i < n; i++)
		r = result_ingest(db, id, &rs[i], rs_origin[i], out_stored);
	if (r < 0) {
		db_rollback(db);
		*out_stored = false;
		return r;
	}
	r = db_commit(db);
	if (r == 0)
		*out_id = id;
	return r;
}

int db_build_dead_dirs(struct db *db, char ***out, size_t *out_n, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(char *), .max = max, .fill = db_fill_string,
		.release = db_release_string,
		.doing = "listing the builds not used again",
	};
	sqlite3_stmt *st = NULL;
	void *v = NULL;
	int r;

	*out = NULL;
	*out_n = 0;
	r = db_prepare(db, &st, "SELECT dir FROM builds WHERE dir IS NOT NULL AND (state = 'abandoned'"
		       " OR id IN (SELECT build_id FROM stale_builds)) ORDER BY id");
	if (r < 0)
		return r;
	r = db_rows_load(db, st, &how, &v, out_n);
	*out = v;
	return r;
}
