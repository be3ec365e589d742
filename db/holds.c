/*
 * Holds: a commit that took its host down (a step of it left running by an
 * earlier boot), left a process that outlived SIGKILL or brought a fault
 * line, or whose change touches the host's gated paths, held on that host
 * until a person releases it (docs/hosts.md, "When the machine goes down").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

const char *const db_hold_why_words[] = {
	[DB_HOLD_WENT_DOWN] = "went-down", [DB_HOLD_UNKILLABLE] = "unkillable",
	[DB_HOLD_FAULT] = "fault", [DB_HOLD_GATE] = "gate", NULL,
};
const char *const db_hold_step_words[] = {
	[DB_HOLD_BUILD] = "build", [DB_HOLD_RUNNER] = "runner", [DB_HOLD_CASE] = "case",
	[DB_HOLD_JOB] = "job", NULL,
};

const char *db_hold_step_name(enum db_hold_step step)
{
	return db_hold_step_words[step];
}

void db_hold_release(struct db_hold *h)
{
	if (!h)
		return;
	free(h->detail);
	free(h->fault);
	free(h->log_read);
	free(h->released_by);
	h->detail = h->fault = h->log_read = h->released_by = NULL;
}

#define HOLD_COLUMNS "id, host, why, step, name, coalesce(commit_oid, ''), coalesce(tree_oid, ''),"\
	" coalesce(recipe_hash, ''), coalesce(job_id, 0), coalesce(build_id, 0),"\
	" coalesce(result_id, 0), coalesce(comparison_id, 0), coalesce(seq, 0), coalesce(arm, ''),"\
	" coalesce(boot, ''), coalesce(started_at, ''), coalesce(last_at, ''), detail, fault,"\
	" log_read, created_at, coalesce(released_at, ''), released_by"

static void hold_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_hold *h = elem;

	(void)arg;
	h->id = sqlite3_column_int64(st, 0);
	db_column_copy(h->host, sizeof(h->host), st, 1);
	/* The schema's CHECKs keep both among the names. */
	h->why = db_word_index(db_hold_why_words, ARRAY_SIZE(db_hold_why_words) - 1,
			       (const char *)sqlite3_column_text(st, 2));
	h->step = db_word_index(db_hold_step_words, ARRAY_SIZE(db_hold_step_words) - 1,
				(const char *)sqlite3_column_text(st, 3));
	db_column_copy(h->name, sizeof(h->name), st, 4);
	db_column_copy(h->commit, sizeof(h->commit), st, 5);
	db_column_copy(h->tree, sizeof(h->tree), st, 6);
	db_column_copy(h->recipe, sizeof(h->recipe), st, 7);
	h->job_id = sqlite3_column_int64(st, 8);
	h->build_id = sqlite3_column_int64(st, 9);
	h->result_id = sqlite3_column_int64(st, 10);
	h->comparison_id = sqlite3_column_int64(st, 11);
	h->seq = sqlite3_column_int(st, 12);
	db_column_copy(h->arm, sizeof(h->arm), st, 13);
	db_column_copy(h->boot, sizeof(h->boot), st, 14);
	db_column_copy(h->started_at, sizeof(h->started_at), st, 15);
	db_column_copy(h->last_at, sizeof(h->last_at), st, 16);
	h->detail = db_column_strdup(st, 17);
	h->fault = db_column_strdup(st, 18);
	h->log_read = db_column_strdup(st, 19);
	db_column_copy(h->created_at, sizeof(h->created_at), st, 20);
	db_column_copy(h->released_at, sizeof(h->released_at), st, 21);
	h->released_by = db_column_strdup(st, 22);
}

static void hold_release(void *elem)
{
	db_hold_release(elem);
}

/* The job a build or runner ran for: the one this database's agent began
 * last of those still running (an agent runs one job at a time). */
#define RUNNING_JOB "coalesce((SELECT j.id FROM jobs j WHERE j.host = '' AND" \
	" j.state = 'running' ORDER BY j.started_at DESC, j.id DESC LIMIT 1), 0)"

/*
 * Rows of host left running by a perfd of an earlier boot, as holds not yet
 * stored: a build (of its commit), a runner's chunk, a comparison (the
 * build of its last process's arm, that process and when it started), each
 * with the boot it ran in and its job. A runner's and a comparison's
 * commit is left to db_hold_add: its job's, of the arm that ran. The
 * columns are HOLD_COLUMNS' but for those a new hold has no value for yet.
 */
static const char suspects_sql[] =
	"SELECT 0, b.host, 'went-down', 'build', '', b.commit_oid, b.tree_oid, b.recipe_hash,"
	"  " RUNNING_JOB ", b.id, 0, 0, 0, '', perfd_owner_other_boot(b.owner), b.started_at,"
	"  b.started_at, NULL, NULL, NULL, '', '', NULL"
	" FROM builds b WHERE b.state = 'running' AND b.host = ?1"
	"  AND perfd_owner_other_boot(b.owner) IS NOT NULL"
	" UNION ALL "
	"SELECT 0, b.host, 'went-down', 'runner', r.runner, '', b.tree_oid, b.recipe_hash,"
	"  " RUNNING_JOB ", b.id, r.id, 0, 0, '', perfd_owner_other_boot(r.owner),"
	"  r.started_at, r.started_at, NULL, NULL, NULL, '', '', NULL"
	" FROM runner_results r JOIN builds b ON b.id = r.build_id"
	" WHERE r.state = 'running' AND b.host = ?1 AND perfd_owner_other_boot(r.owner) IS NOT NULL"
	" UNION ALL "
	"SELECT 0, c.host, 'went-down', 'case', c.case_name, '', coalesce(b.tree_oid, ''),"
	"  coalesce(b.recipe_hash, ''), coalesce(c.job_id, 0), coalesce(b.id, 0), 0, c.id,"
	"  coalesce(p.seq, 0), coalesce(p.arm, ''), perfd_owner_other_boot(c.owner),"
	"  c.created_at, coalesce(p.started_at, c.created_at), NULL, NULL, NULL, '', '', NULL"
	" FROM comparisons c"
	" LEFT JOIN processes p ON p.id = (SELECT id FROM processes WHERE comparison_id = c.id"
	"  ORDER BY seq DESC LIMIT 1)"
	" LEFT JOIN builds b ON b.id = CASE p.arm WHEN 'old' THEN c.base_build"
	"  ELSE c.head_build END"
	" WHERE c.state = 'running' AND c.host = ?1 AND perfd_owner_other_boot(c.owner) IS NOT NULL"
	" LIMIT 64";

int db_hold_suspects(struct db *db, struct db_hold **out, size_t *out_n, const char *host)
{
	static const struct db_rows how = {
		.size = sizeof(struct db_hold), .max = 64, .fill = hold_fill,
		.release = hold_release, .doing = "listing the steps an earlier boot left running",
	};

	return db_rows_select(db, suspects_sql, DB_ARGS(DB_TEXT(host)), &how, out, out_n);
}

int db_hold_add(struct db *db, int64_t *out_id, const struct db_hold *h)
{
	char now[TIME_ISO_LEN];
	int r;

	*out_id = 0;
	time_now_iso(now);
	r = db_begin(db);
	if (r < 0)
		return r;
	/* A step held already (a start that stopped before it abandoned the
	 * rows) keeps its one hold. */
	r = db_run_count(db, out_id, "SELECT coalesce(max(id), 0) FROM holds WHERE host = ?1"
			 " AND why = ?2 AND step = ?3 AND coalesce(build_id, 0) = ?4"
			 " AND coalesce(result_id, 0) = ?5 AND coalesce(comparison_id, 0) = ?6"
			 " AND coalesce(seq, 0) = ?7",
			 DB_ARGS(DB_TEXT(h->host), DB_TEXT(db_hold_why_words[h->why]),
				 DB_TEXT(db_hold_step_words[h->step]), DB_INT(h->build_id),
				 DB_INT(h->result_id), DB_INT(h->comparison_id), DB_INT(h->seq)),
			 "looking for a hold");
	if (r < 0 || *out_id)
		return db_end(db, r);
	/* Where the hold names no commit of its own, the commit is its job's
	 * of the arm that ran (a cached build may have been made from another
	 * commit of the same tree), else its build's; the tree and recipe are
	 * the build's. */
	r = db_run_insert(db, out_id, "INSERT INTO holds (host, why, step, name, commit_oid,"
			  " tree_oid, recipe_hash, job_id, build_id, result_id, comparison_id, seq,"
			  " arm, boot, started_at, last_at, detail, fault, log_read, created_at)"
			  " SELECT ?1, ?2, ?3, ?4, coalesce(nullif(?5, ''), (SELECT CASE WHEN ?13 = 'old'"
			  " THEN j.base_oid ELSE j.commit_oid END FROM jobs j WHERE j.id = ?8"
			  " AND ?3 <> 'build'), b.commit_oid),"
			  " coalesce(nullif(?6, ''), b.tree_oid), coalesce(nullif(?7, ''),"
			  " b.recipe_hash), nullif(?8, 0), nullif(?9, 0), nullif(?10, 0),"
			  " nullif(?11, 0), nullif(?12, 0), nullif(?13, ''), nullif(?14, ''),"
			  " nullif(?15, ''), nullif(?16, ''), ?17, ?18, ?19, ?20"
			  " FROM (SELECT 1) LEFT JOIN builds b ON b.id = ?9",
			  DB_ARGS(DB_TEXT(h->host), DB_TEXT(db_hold_why_words[h->why]),
				  DB_TEXT(db_hold_step_words[h->step]), DB_TEXT(h->name),
				  DB_TEXT(h->commit), DB_TEXT(h->tree), DB_TEXT(h->recipe),
				  DB_INT(h->job_id), DB_INT(h->build_id), DB_INT(h->result_id),
				  DB_INT(h->comparison_id), DB_INT(h->seq), DB_TEXT(h->arm),
				  DB_TEXT(h->boot), DB_TEXT(h->started_at), DB_TEXT(h->last_at),
				  DB_TEXT(h->detail), DB_TEXT(h->fault), DB_TEXT(h->log_read),
				  DB_TEXT(now)),
			  "recording a held commit");
	return db_end(db, r);
}

int db_hold_load(struct db *db, struct db_hold *out, int64_t id)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = db_run_row(db, hold_fill, out, "SELECT " HOLD_COLUMNS " FROM holds WHERE id = ?",
		       DB_ARGS(DB_INT(id)), "loading a hold");
	return r == -ENOENT ? err_set(-ENOENT, "no hold %lld in '%s'", (long long)id, db->path) : r;
}

int db_hold_list(struct db *db, struct db_hold **out, size_t *out_n, const char *host,
		 bool held_only)
{
	static const struct db_rows how = {
		.size = sizeof(struct db_hold), .max = DB_HOLDS_MAX, .fill = hold_fill,
		.release = hold_release, .doing = "listing holds",
	};

	return db_rows_select(db, "SELECT " HOLD_COLUMNS " FROM holds WHERE (?1 IS NULL OR"
			      " host = ?1) AND (?2 = 0 OR released_at IS NULL)"
			      " ORDER BY id DESC LIMIT ?3",
			      DB_ARGS(DB_TEXT(host), DB_INT(held_only), DB_INT(DB_HOLDS_MAX)),
			      &how, out, out_n);
}

int db_hold_find(struct db *db, struct db_hold *out, const char *host, const char *commit,
		 const char *tree, const char *recipe)
{
	memset(out, 0, sizeof(*out));
	return db_run_row(db, hold_fill, out, "SELECT " HOLD_COLUMNS " FROM holds"
			  " WHERE host = ?1 AND released_at IS NULL AND (commit_oid = ?2 OR"
			  " (tree_oid = ?3 AND recipe_hash = ?4)) ORDER BY id LIMIT 1",
			  DB_ARGS(DB_TEXT(host), DB_TEXT(commit), DB_TEXT(tree), DB_TEXT(recipe)),
			  "looking for a held commit");
}

int db_hold_last(struct db *db, struct db_hold *out, const char *host, const char *commit,
		 enum db_hold_why why)
{
	memset(out, 0, sizeof(*out));
	return db_run_row(db, hold_fill, out, "SELECT " HOLD_COLUMNS " FROM holds"
			  " WHERE host = ?1 AND commit_oid = ?2 AND why = ?3 ORDER BY id DESC LIMIT 1",
			  DB_ARGS(DB_TEXT(host), DB_TEXT(commit), DB_TEXT(db_hold_why_words[why])),
			  "looking for a commit's hold");
}

int db_hold_lift(struct db *db, const char *host, int64_t id, const char *by)
{
	char now[TIME_ISO_LEN];
	int r;

	time_now_iso(now);
	r = db_run(db, "UPDATE holds SET released_at = ?1, released_by = ?2 WHERE host = ?3 AND"
		   " released_at IS NULL AND (?4 = 0 OR id = ?4)",
		   DB_ARGS(DB_TEXT(now), DB_TEXT(by), DB_TEXT(host), DB_INT(id)),
		   "releasing a held commit");
	return r < 0 ? r : sqlite3_changes(db->h);
}

int db_job_hold(struct db *db, int64_t job_id, int64_t hold_id)
{
	return db_run(db, "UPDATE jobs SET hold_id = nullif(?1, 0) WHERE id = ?2",
		      DB_ARGS(DB_INT(hold_id), DB_INT(job_id)), "holding a job");
}
