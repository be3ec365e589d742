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

/* The first_seen stored for this line at this place, into seen ("" when none). */
static int seen_before(struct db *db, char seen[32], const char *repo, int pr, const char *commit,
		       const char *source, const struct db_forecast *f)
{
	sqlite3_stmt *st;
	int rc, r;

	seen[0] = '\0';
	r = db_prepare(db, &st, "SELECT first_seen FROM forecasts WHERE repo = ?1 AND pr = ?2"
		       " AND commit_oid = ?3 AND source = ?4 AND idx = ?5 AND line = ?6");
	if (r < 0)
		return r;
	db_bind_text(st, 1, repo);
	sqlite3_bind_int(st, 2, pr);
	db_bind_text(st, 3, commit);
	db_bind_text(st, 4, source);
	sqlite3_bind_int(st, 5, f->idx);
	db_bind_text(st, 6, f->line);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		db_column_copy(seen, 32, st, 0);
	else if (rc != SQLITE_DONE)
		r = db_fail(db, rc, "reading a forecast");
	db_finish(st);
	return r;
}

int db_forecasts_set(struct db *db, const char *repo, int pr, const char *commit,
		     const char *source, const char *lines_sha256, const struct db_forecast *v,
		     size_t n)
{
	char now[TIME_ISO_LEN], (*seen)[32] = NULL;
	sqlite3_stmt *st;
	size_t i;
	int r;

	time_now_iso(now);
	r = db_begin(db);
	if (r < 0)
		return r;
	seen = xcalloc(n + 1, sizeof(*seen));
	for (i = 0; r == 0 && i < n; i++)
		r = seen_before(db, seen[i], repo, pr, commit, source, &v[i]);
	if (r < 0)
		goto fail;
	r = db_prepare(db, &st, "DELETE FROM forecasts WHERE repo = ?1 AND pr = ?2"
		       " AND commit_oid = ?3 AND source = ?4");
	if (r < 0)
		goto fail;
	db_bind_text(st, 1, repo);
	sqlite3_bind_int(st, 2, pr);
	db_bind_text(st, 3, commit);
	db_bind_text(st, 4, source);
	r = db_step(db, st, "replacing forecasts");
	for (i = 0; r == 0 && i < n; i++) {
		r = db_prepare(db, &st, "INSERT INTO forecasts (repo, pr, commit_oid, source, idx,"
			       " line, case_name, direction, band_lo, band_hi, problem, first_seen)"
			       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
		if (r < 0)
			break;
		db_bind_text(st, 1, repo);
		sqlite3_bind_int(st, 2, pr);
		db_bind_text(st, 3, commit);
		db_bind_text(st, 4, source);
		sqlite3_bind_int(st, 5, v[i].idx);
		db_bind_text(st, 6, v[i].line);
		db_bind_text(st, 7, v[i].case_name);
		db_bind_text(st, 8, *v[i].direction ? v[i].direction : NULL);
		db_bind_real(st, 9, v[i].has_band ? v[i].lo : NAN);
		db_bind_real(st, 10, v[i].has_band ? v[i].hi : NAN);
		db_bind_text(st, 11, v[i].problem);
		db_bind_text(st, 12, *seen[i] ? seen[i] : now);
		r = db_step(db, st, "recording a forecast");
	}
	if (r < 0)
		goto fail;
	r = db_prepare(db, &st, "INSERT OR REPLACE INTO forecast_reads (repo, pr, commit_oid,"
		       " source, lines_sha256, read_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	if (r < 0)
		goto fail;
	db_bind_text(st, 1, repo);
	sqlite3_bind_int(st, 2, pr);
	db_bind_text(st, 3, commit);
	db_bind_text(st, 4, source);
	db_bind_text(st, 5, lines_sha256);
	db_bind_text(st, 6, now);
	r = db_step(db, st, "recording a forecast's source");
	if (r < 0)
		goto fail;
	free(seen);
	return db_commit(db);
fail:
	free(seen);
	db_rollback(db);
	return r;
}

int db_forecast_read_get(struct db *db, char sha[65], bool *changed, const char *repo, int pr,
			 const char *commit, const char *source)
{
	sqlite3_stmt *st;
	int rc, r;

	sha[0] = '\0';
	if (changed)
		*changed = false;
	r = db_prepare(db, &st, "SELECT lines_sha256, changed_at IS NOT NULL FROM forecast_reads"
		       " WHERE repo = ?1 AND pr = ?2 AND commit_oid = ?3 AND source = ?4");
	if (r < 0)
		return r;
	db_bind_text(st, 1, repo);
	sqlite3_bind_int(st, 2, pr);
	db_bind_text(st, 3, commit);
	db_bind_text(st, 4, source);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		db_column_copy(sha, 65, st, 0);
		if (changed)
			*changed = sqlite3_column_int(st, 1) != 0;
	} else if (rc == SQLITE_DONE) {
		r = -ENOENT;
	} else {
		r = db_fail(db, rc, "reading a forecast's source");
	}
	db_finish(st);
	return r;
}

int db_forecast_changed(struct db *db, const char *repo, int pr, const char *commit,
			const char *source)
{
	char now[TIME_ISO_LEN];
	sqlite3_stmt *st;
	int r;

	time_now_iso(now);
	r = db_prepare(db, &st, "UPDATE forecast_reads SET changed_at = ?5 WHERE repo = ?1"
		       " AND pr = ?2 AND commit_oid = ?3 AND source = ?4 AND changed_at IS NULL");
	if (r < 0)
		return r;
	db_bind_text(st, 1, repo);
	sqlite3_bind_int(st, 2, pr);
	db_bind_text(st, 3, commit);
	db_bind_text(st, 4, source);
	db_bind_text(st, 5, now);
	return db_step(db, st, "marking a forecast's source changed");
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
	sqlite3_stmt *st;
	int rc, r;

	*out = NULL;
	*out_n = 0;
	if (changed_at) {
		changed_at[0] = '\0';
		r = db_prepare(db, &st, "SELECT changed_at FROM forecast_reads WHERE pr = ?1"
			       " AND commit_oid = ?2 AND source = 'description'"
			       " AND changed_at IS NOT NULL");
		if (r < 0)
			return r;
		sqlite3_bind_int(st, 1, pr);
		db_bind_text(st, 2, commit);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			db_column_copy(changed_at, 32, st, 0);
		else if (rc != SQLITE_DONE)
			r = db_fail(db, rc, "reading a forecast's source");
		db_finish(st);
		if (r < 0)
			return r;
	}
	r = db_prepare(db, &st, "SELECT pr, source, idx, line, case_name, direction, band_lo,"
		       " band_hi, problem, first_seen FROM forecasts WHERE pr = ?1"
		       " AND commit_oid = ?2 ORDER BY source = 'commit', idx LIMIT ?3");
	if (r < 0)
		return r;
	sqlite3_bind_int(st, 1, pr);
	db_bind_text(st, 2, commit);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)max);
	return db_rows_load(db, st, &how, (void **)out, out_n);
}

int db_commit_is_measured(struct db *db, bool *out, const char *commit)
{
	sqlite3_stmt *st;
	int64_t n = 0;
	int r;

	*out = false;
	r = db_prepare(db, &st, "SELECT EXISTS (SELECT 1 FROM jobs j JOIN comparisons c"
		       " ON c.job_id = j.id WHERE j.commit_oid = ?1)");
	if (r < 0)
		return r;
	db_bind_text(st, 1, commit);
	r = db_step_count(db, st, &n, "looking for a commit's comparisons");
	if (r == 0)
		*out = n != 0;
	return r;
}
