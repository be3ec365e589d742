/*
 * comparison_origins: where each comparison the hub ingested came from (its
 * host, its id there, the sha256 of the record), and the ingest's one write
 * of a whole comparison. The raw rows go through the same writes perfd pair
 * uses (artifacts, comparisons, processes), joined into one transaction.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

static void origin_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_origin *o = elem;

	db_column_copy(o->host, sizeof(o->host), st, 0);
	o->origin_id = sqlite3_column_int64(st, 1);
	o->comparison_id = sqlite3_column_int64(st, 2);
	db_column_copy(o->sha256, sizeof(o->sha256), st, 3);
	db_column_copy(o->received_at, sizeof(o->received_at), st, 4);
}

int db_origin_get(struct db *db, struct db_origin *out, const char *host, int64_t origin_id)
{
	memset(out, 0, sizeof(*out));
	return db_run_row(db, origin_fill, out, "SELECT host, origin_id, comparison_id, sha256,"
			  " received_at FROM comparison_origins WHERE host = ? AND origin_id = ?",
			  DB_ARGS(DB_TEXT(host), DB_INT(origin_id)),
			  "looking up a comparison's origin");
}

/* The origin row. */
static int store_origin(struct db *db, int64_t id, const struct db_origin *o)
{
	char now[TIME_ISO_LEN];

	time_now_iso(now);
	return db_run(db, "INSERT INTO comparison_origins (host, origin_id, comparison_id,"
		      " sha256, received_at, origin_job, origin_base_build, origin_head_build)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, CASE WHEN ?6 > 0 THEN ?6 END, nullif(?7, 0),"
		      " nullif(?8, 0))",
		      DB_ARGS(DB_TEXT(o->host), DB_INT(o->origin_id), DB_INT(id),
			      DB_TEXT(o->sha256), DB_TEXT(now), DB_INT(o->origin_job),
			      DB_INT(o->origin_base_build), DB_INT(o->origin_head_build)),
		      "recording a comparison's origin");
}

/* The hub's row of a host's job or build (find: db_job_origin,
 * db_build_origin) into *out, or 0 when it has not come yet (or origin_id
 * is 0): db_job_ingest and db_build_ingest tie it when it comes. */
static int origin_row(struct db *db, int64_t *out, const char *host, int64_t origin_id,
		      int (*find)(struct db *, int64_t *, const char *, int64_t))
{
	int r;

	*out = 0;
	if (origin_id <= 0)
		return 0;
	r = find(db, out, host, origin_id);
	return r == -ENOENT ? 0 : r;
}

/*
 * Each row is written once, whole: the comparison with its summary, its end
 * time as the host stored it (the time of the ingest when it has none) and
 * the hub's rows of its job and builds, when they came first (else
 * db_job_ingest and db_build_ingest tie them when they come); each process
 * with its end and its validity as s has it.
 */
int db_comparison_ingest(struct db *db, int64_t *out_id, const struct db_comparison *c,
			 const struct db_summary *s, const struct db_origin *o)
{
	struct db_comparison ins = *c;   /* shallow: borrows every string of c */
	struct db_process p;
	struct db_origin had;
	int64_t id = 0, pid;
	size_t i;
	int r;

	*out_id = 0;
	assert(c->state == DB_STATE_DONE);
	assert(s->nprocesses == c->nprocesses);
	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_origin_get(db, &had, o->host, o->origin_id);
	if (r == 0) {
		r = err_set(-EEXIST, "comparison %lld of host '%s' is here already, as %lld",
			    (long long)o->origin_id, o->host, (long long)had.comparison_id);
		goto out;
	}
	if (r != -ENOENT)
		goto out;
	if (!*ins.finished_at)
		time_now_iso(ins.finished_at);
	ins.job_id = ins.base_build = ins.head_build = 0;
	r = origin_row(db, &ins.job_id, o->host, o->origin_job, db_job_origin);
	if (r == 0)
		r = origin_row(db, &ins.base_build, o->host, o->origin_base_build, db_build_origin);
	if (r == 0)
		r = origin_row(db, &ins.head_build, o->host, o->origin_head_build, db_build_origin);
	if (r < 0)
		goto out;
	r = db_artifact_put(db, &ins.old.id, &c->old);
	if (r == 0)
		r = db_artifact_put(db, &ins.new.id, &c->new);
	if (r == 0)
		r = db_comparison_store(db, &id, &ins, s);
	for (i = 0; r == 0 && i < c->nprocesses; i++) {
		p = c->processes[i];   /* shallow, as ins */
		p.comparison_id = id;
		p.valid = s->process_valid[i];
		p.invalid_reason = s->process_reason[i];
		r = db_process_store(db, &pid, &p);
	}
	if (r == 0)
		r = store_origin(db, id, o);
out:
	r = db_end(db, r);
	if (r == 0)
		*out_id = id;
	return r;
}
