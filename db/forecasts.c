/*
 * The forecasts pull requests stated before they were measured, each line
 * as written and read, and when each source was read: the comment reports
 * them from these rows alone (docs/comment.md, "Forecasts").
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

void db_forecast_release(struct db_forecast *f)
{
	if (!f)
		return;
	free(f->line);
	free(f->case_name);
	free(f->problem);
	memset(f, 0, sizeof(*f));
}

/* A forecast's place, the arguments ?1 to ?4: pull request, commit and
 * source (description or commit message). */
#define PLACE_ARGS DB_TEXT(repo), DB_INT(pr), DB_TEXT(commit), DB_TEXT(source)

/* The first column's text into a char[32]. */
static void text32_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	db_column_copy(elem, 32, st, 0);
}

/* The first_seen stored for this line at this place, into seen ("" when none). */
static int seen_before(struct db *db, char seen[32], const char *repo, int pr, const char *commit,
		       const char *source, const struct db_forecast *f)
{
	int r;

	seen[0] = '\0';
	r = db_run_row(db, text32_fill, seen, "SELECT first_seen FROM forecasts WHERE repo = ?1"
		       " AND pr = ?2 AND commit_oid = ?3 AND source = ?4 AND idx = ?5 AND line = ?6",
		       DB_ARGS(PLACE_ARGS, DB_INT(f->idx), DB_TEXT(f->line)), "reading a forecast");
	return r == -ENOENT ? 0 : r;
}

static int forecast_insert(struct db *db, const char *repo, int pr, const char *commit,
			   const char *source, const struct db_forecast *f, const char *seen)
{
	return db_run(db, "INSERT INTO forecasts (repo, pr, commit_oid, source, idx, line,"
		      " case_name, direction, band_lo, band_hi, problem, first_seen)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
		      DB_ARGS(PLACE_ARGS, DB_INT(f->idx), DB_TEXT(f->line), DB_TEXT(f->case_name),
			      DB_TEXT(*f->direction ? f->direction : NULL),
			      DB_REAL(f->has_band ? f->lo : NAN), DB_REAL(f->has_band ? f->hi : NAN),
			      DB_TEXT(f->problem), DB_TEXT(seen)), "recording a forecast");
}

int db_forecasts_set(struct db *db, const char *repo, int pr, const char *commit,
		     const char *source, const char *lines_sha256, const struct db_forecast *v,
		     size_t n)
{
	char now[TIME_ISO_LEN], (*seen)[32] = NULL;
	size_t i;
	int r;

	time_now_iso(now);
	r = db_begin(db);
	if (r < 0)
		return r;
	seen = xcalloc(n + 1, sizeof(*seen));
	for (i = 0; r == 0 && i < n; i++)
		r = seen_before(db, seen[i], repo, pr, commit, source, &v[i]);
	if (r == 0)
		r = db_run(db, "DELETE FROM forecasts WHERE repo = ?1 AND pr = ?2"
			   " AND commit_oid = ?3 AND source = ?4", DB_ARGS(PLACE_ARGS),
			   "replacing forecasts");
	for (i = 0; r == 0 && i < n; i++)
		r = forecast_insert(db, repo, pr, commit, source, &v[i],
				    *seen[i] ? seen[i] : now);
	if (r == 0)
		r = db_run(db, "INSERT OR REPLACE INTO forecast_reads (repo, pr, commit_oid,"
			   " source, lines_sha256, read_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
			   DB_ARGS(PLACE_ARGS, DB_TEXT(lines_sha256), DB_TEXT(now)),
			   "recording a forecast's source");
	free(seen);
	if (r < 0) {
		db_rollback(db);
		return r;
	}
	return db_commit(db);
}

/* A forecast source's read: its sha256 into a char[65], and whether it
 * changed, when the caller asks. */
struct read {
	char *sha;
	bool *changed;
};

static void read_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct read *x = elem;

	db_column_copy(x->sha, 65, st, 0);
	if (x->changed)
		*x->changed = sqlite3_column_int(st, 1) != 0;
}

int db_forecast_read_get(struct db *db, char sha[65], bool *changed, const char *repo, int pr,
			 const char *commit, const char *source)
{
	struct read x = { sha, changed };

	sha[0] = '\0';
	if (changed)
		*changed = false;
	return db_run_row(db, read_fill, &x, "SELECT lines_sha256, changed_at IS NOT NULL"
			  " FROM forecast_reads WHERE repo = ?1 AND pr = ?2 AND commit_oid = ?3"
			  " AND source = ?4", DB_ARGS(PLACE_ARGS), "reading a forecast's source");
}

int db_forecast_changed(struct db *db, const char *repo, int pr, const char *commit,
			const char *source)
{
	char now[TIME_ISO_LEN];

	time_now_iso(now);
	return db_run(db, "UPDATE forecast_reads SET changed_at = ?5 WHERE repo = ?1"
		      " AND pr = ?2 AND commit_oid = ?3 AND source = ?4 AND changed_at IS NULL",
		      DB_ARGS(PLACE_ARGS, DB_TEXT(now)), "marking a forecast's source changed");
}

static void forecast_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_forecast *f = elem;

	(void)arg;
	f->pr = sqlite3_column_int(st, 0);
	db_column_copy(f->source, sizeof(f->source), st, 1);
	f->idx = sqlite3_column_int(st, 2);
	f->line = db_column_strdup(st, 3);
	f->case_name = db_column_strdup(st, 4);
	db_column_copy(f->direction, sizeof(f->direction), st, 5);
	f->has_band = sqlite3_column_type(st, 6) != SQLITE_NULL;
	f->lo = db_column_real(st, 6);
	f->hi = db_column_real(st, 7);
	f->problem = db_column_strdup(st, 8);
	db_column_copy(f->first_seen, sizeof(f->first_seen), st, 9);
}

static void forecast_release(void *elem)
{
	db_forecast_release(elem);
}

int db_forecasts_load(struct db *db, struct db_forecast **out, size_t *out_n, int pr,
		      const char *commit, size_t max, char changed_at[32])
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = max, .fill = forecast_fill,
		.release = forecast_release, .doing = "loading forecasts",
	};
	int r;

	*out = NULL;
	*out_n = 0;
	if (changed_at) {
		changed_at[0] = '\0';
		r = db_run_row(db, text32_fill, changed_at, "SELECT changed_at FROM forecast_reads"
			       " WHERE pr = ?1 AND commit_oid = ?2 AND source = 'description'"
			       " AND changed_at IS NOT NULL", DB_ARGS(DB_INT(pr), DB_TEXT(commit)),
			       "reading a forecast's source");
		if (r < 0 && r != -ENOENT)
			return r;
	}
	return db_rows_select(db, "SELECT pr, source, idx, line, case_name, direction, band_lo,"
			      " band_hi, problem, first_seen FROM forecasts WHERE pr = ?1"
			      " AND commit_oid = ?2 ORDER BY source = 'commit', idx LIMIT ?3",
			      DB_ARGS(DB_INT(pr), DB_TEXT(commit), DB_INT(max)), &how, out, out_n);
}

int db_commit_is_measured(struct db *db, bool *out, const char *commit)
{
	int64_t n = 0;
	int r;

	r = db_run_count(db, &n, "SELECT EXISTS (SELECT 1 FROM jobs j JOIN comparisons c"
			 " ON c.job_id = j.id WHERE j.commit_oid = ?1)", DB_ARGS(DB_TEXT(commit)),
			 "looking for a commit's comparisons");
	*out = n != 0;
	return r;
}
