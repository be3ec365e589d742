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

static void build_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_build *b = elem;

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
	b->log = db_column_blobdup(st, 13, &b->log_len);
	b->log_bytes = sqlite3_column_int64(st, 14);
	b->toolchain = db_column_strdup(st, 15);
	b->fingerprint = db_column_strdup(st, 16);
	b->detail = db_column_strdup(st, 17);
}

/* The one build sql selects, with its artifacts: 0, -ENOENT with no detail
 * set, or the error; on failure *out holds nothing. */
static int build_query(struct db *db, struct db_build *out, const char *sql,
		       const struct db_arg *args, size_t nargs)
{
	static const struct db_rows how = {
		.size = sizeof(struct db_build_artifact), .max = SIZE_MAX,
		.fill = build_artifact_fill, .release = build_artifact_release,
		.doing = "loading a build's artifacts",
	};
	int r;

	memset(out, 0, sizeof(*out));
	r = db_run_row(db, build_fill, out, sql, args, nargs, "loading a build");
	if (r == 0)
		r = db_rows_select(db, "SELECT b.name, a.id, a.path, a.size, a.sha256"
				   " FROM build_artifacts b JOIN artifacts a ON a.id = b.artifact_id"
				   " WHERE b.build_id = ? ORDER BY b.name", DB_ARGS(DB_INT(out->id)),
				   &how, &out->artifacts, &out->nartifacts);
	if (r < 0)
		db_build_release(out);
	return r;
}

int db_build_find(struct db *db, struct db_build *out, const char *host, const char *tree,
		  const char *recipe_hash)
{
	return build_query(db, out, "SELECT " BUILD_COLUMNS " FROM builds WHERE host = ? AND"
			   " tree_oid = ? AND recipe_hash = ? AND state != 'abandoned'"
			   " AND id NOT IN (SELECT build_id FROM stale_builds)"
			   " ORDER BY id DESC LIMIT 1",
			   DB_ARGS(DB_TEXT(host), DB_TEXT(tree), DB_TEXT(recipe_hash)));
}

int db_build_latest(struct db *db, struct db_build *out, const char *host,
		    const char *recipe_hash)
{
	return build_query(db, out, "SELECT " BUILD_COLUMNS " FROM builds WHERE host = ? AND"
			   " recipe_hash = ? AND state = 'done'"
			   " AND id NOT IN (SELECT build_id FROM stale_builds) ORDER BY id DESC"
			   " LIMIT 1", DB_ARGS(DB_TEXT(host), DB_TEXT(recipe_hash)));
}

int db_build_ids_of_commits(struct db *db, int64_t **out, size_t *out_n, const char *commit,
			    const char *base, size_t max)
{
	return db_ids_select(db, out, out_n, max, "SELECT id FROM builds WHERE origin_id IS NULL"
			     " AND commit_oid IN (?1, nullif(?2, '')) ORDER BY id LIMIT ?3",
			     DB_ARGS(DB_TEXT(commit), DB_TEXT(base), DB_INT(max)),
			     "listing a commit's builds");
}

int db_build_load(struct db *db, struct db_build *out, int64_t id)
{
	int r = build_query(db, out, "SELECT " BUILD_COLUMNS " FROM builds WHERE id = ?",
			    DB_ARGS(DB_INT(id)));

	if (r == -ENOENT)
		r = err_set(-ENOENT, "no build %lld in '%s'", (long long)id, db->path);
	return r;
}

int db_build_insert(struct db *db, int64_t *out_id, const struct db_build *b)
{
	return db_run_insert(db, out_id, "INSERT INTO builds (host, commit_oid, tree_oid,"
			     " recipe_hash, state, dir, started_at, fingerprint, owner)"
			     " VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?)",
			     DB_ARGS(DB_TEXT(b->host), DB_TEXT(b->commit), DB_TEXT(b->tree),
				     DB_TEXT(b->recipe_hash), DB_TEXT(b->dir), DB_TEXT(b->started_at),
				     DB_TEXT(b->fingerprint), DB_TEXT(db->owner)),
			     "recording a build");
}

int db_build_finish(struct db *db, const struct db_build *b)
{
	size_t i;
	int r;

	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_run(db, "UPDATE builds SET owner = NULL, state = ?, finished_at = ?, exit_code = ?,"
		   " signal = ?, timed_out = ?, wall_ms = ?, log = ?, log_bytes = ?,"
		   " toolchain = ?, detail = ? WHERE id = ?",
		   DB_ARGS(DB_TEXT(db_build_state_name(b->state)), DB_TEXT(b->finished_at),
			   DB_INT(b->exit_code), DB_INT(b->signal), DB_INT(b->timed_out),
			   DB_REAL(b->wall_ms), DB_BLOB(b->log, b->log_len), DB_INT(b->log_bytes),
			   DB_TEXT(b->toolchain), DB_TEXT(b->detail), DB_INT(b->id)),
		   "recording a build's end");
	for (i = 0; r == 0 && i < b->nartifacts; i++)
		r = db_run(db, "INSERT OR REPLACE INTO build_artifacts (build_id, name, artifact_id)"
			   " VALUES (?, ?, ?)", DB_ARGS(DB_INT(b->id), DB_TEXT(b->artifacts[i].name),
							DB_INT(b->artifacts[i].artifact.id)),
			   "recording a build's artifacts");
	return db_end(db, r);
}

int db_build_abandon(struct db *db, int64_t id)
{
	return db_run(db, "UPDATE builds SET state = 'abandoned', owner = NULL"
		      " WHERE id = ? AND state = 'running'", DB_ARGS(DB_INT(id)),
		      "abandoning a build");
}

int db_build_mark_stale(struct db *db, int64_t id, const char *reason)
{
	char at[TIME_ISO_LEN];

	time_now_iso(at);
	return db_run(db, "INSERT OR IGNORE INTO stale_builds (build_id, reason, found_at)"
		      " VALUES (?, ?, ?)", DB_ARGS(DB_INT(id), DB_TEXT(reason), DB_TEXT(at)),
		      "marking a build stale");
}

int db_build_stale_reason(struct db *db, char **out, int64_t id)
{
	return db_run_row(db, db_fill_string, out, "SELECT reason FROM stale_builds"
			  " WHERE build_id = ?", DB_ARGS(DB_INT(id)),
			  "reading a build's staleness");
}

int db_build_count(struct db *db, enum db_build_state state)
{
	int64_t n;
	int r;

	r = db_run_count(db, &n, "SELECT count(*) FROM builds WHERE state = ?",
			 DB_ARGS(DB_TEXT(db_build_state_name(state))), "counting builds");
	return r < 0 ? r : (int)n;
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

int db_builds_unpushed(struct db *db, int64_t **out, size_t *out_n, size_t max)
{
	return db_ids_select(db, out, out_n, max, "SELECT b.id" DB_BUILDS_UNSENT
			     " ORDER BY b.id LIMIT ?", DB_ARGS(DB_INT(max)),
			     "listing the builds not yet pushed");
}

/* The results the hub acknowledged stand in the seq's place. */
int db_build_pushed(struct db *db, int64_t id, size_t results, int status, const char *message)
{
	return db_pushed_put(db, "INSERT OR REPLACE INTO pushed_builds (build_id, results, status,"
			     " message, pushed_at) VALUES (?, ?, ?, ?, ?)", id, (int64_t)results,
			     status, message, "recording a build pushed");
}

int db_build_origin(struct db *db, int64_t *out_id, const char *host, int64_t origin_id)
{
	*out_id = 0;
	return db_run_row(db, db_fill_int64, out_id, "SELECT id FROM builds WHERE host = ? AND"
			  " origin_id = ?", DB_ARGS(DB_TEXT(host), DB_INT(origin_id)),
			  "finding a host's build");
}

/* A host's runner result at the hub, unless it is there already. */
static int result_ingest(struct db *db, int64_t build_id, const struct db_runner_result *x,
			 int64_t origin_id, bool *stored)
{
	struct db_runner_result copy = *x;   /* shallow */
	int64_t n;
	int r;

	r = db_run_count(db, &n, "SELECT count(*) FROM runner_results WHERE build_id = ? AND"
			 " origin_id = ?", DB_ARGS(DB_INT(build_id), DB_INT(origin_id)),
			 "reading results");
	if (r < 0 || n != 0)
		return r;
	copy.build_id = build_id;
	r = db_runner_result_insert(db, &copy.id, &copy);
	if (r == 0)
		r = db_runner_result_finish(db, &copy);
	if (r == 0)
		r = db_run(db, "UPDATE runner_results SET origin_id = ? WHERE id = ?",
			   DB_ARGS(DB_INT(origin_id), DB_INT(copy.id)),
			   "recording a runner result's origin");
	if (r == 0)
		*stored = true;
	return r;
}

/* The host's comparisons ingested before build id came get it as their
 * base or head build; their receipts, which name their builds, are
 * rendered anew. Each statement binds ?1 to id, ?2 to host and ?3 to
 * origin_id. */
static int build_link(struct db *db, const char *host, int64_t origin_id, int64_t id)
{
	static const char *const sql[] = {
		"DELETE FROM receipts WHERE comparison_id IN (SELECT comparison_id"
		" FROM comparison_origins WHERE host = ?2 AND (origin_base_build = ?3 OR"
		" origin_head_build = ?3)) AND ?1 = ?1",
		"UPDATE comparisons SET base_build = ?1 WHERE base_build IS"
		" NULL AND id IN (SELECT comparison_id FROM comparison_origins"
		" WHERE host = ?2 AND origin_base_build = ?3)",
		"UPDATE comparisons SET head_build = ?1 WHERE head_build IS"
		" NULL AND id IN (SELECT comparison_id FROM comparison_origins"
		" WHERE host = ?2 AND origin_head_build = ?3)",
	};
	size_t i;
	int r = 0;

	for (i = 0; r == 0 && i < ARRAY_SIZE(sql); i++)
		r = db_run(db, sql[i], DB_ARGS(DB_INT(id), DB_TEXT(host), DB_INT(origin_id)),
			   "linking a build's comparisons");
	return r;
}

static int build_insert(struct db *db, int64_t *out_id, const struct db_build *b,
			int64_t origin_id, const char *sha256)
{
	struct db_build copy = *b;   /* shallow, but for its artifacts' ids */
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
		r = db_run(db, "UPDATE builds SET origin_id = ?, sha256 = ? WHERE id = ?",
			   DB_ARGS(DB_INT(origin_id), DB_TEXT(sha256), DB_INT(copy.id)),
			   "recording a build's origin");
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
	char *held = NULL;
	int64_t id = 0;
	size_t i;
	int r;

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
		r = db_run_row(db, db_fill_string, &held, "SELECT coalesce(sha256, '') FROM builds"
			       " WHERE id = ?", DB_ARGS(DB_INT(id)), "reading a host's build");
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

	return db_rows_select(db, "SELECT dir FROM builds WHERE dir IS NOT NULL AND"
			      " (state = 'abandoned' OR id IN (SELECT build_id FROM stale_builds))"
			      " ORDER BY id", NULL, 0, &how, out, out_n);
}
