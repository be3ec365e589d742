/* Shared by the files of db/ alone. */
#ifndef PERFD_DB_INTERNAL_H
#define PERFD_DB_INTERNAL_H

#include <sqlite3.h>

#include "common.h"
#include "db.h"

struct db_cached {
	const char *sql;             /* a string literal: its address is the key */
	sqlite3_stmt *st;
};

struct db {
	sqlite3 *h;
	char *path;
	int lock_timeout_ms;
	struct db_cached *cache;     /* prepared once, reused for the handle's life */
	size_t ncache;
	int depth;                   /* open db_begin calls; only the outermost commits */
	bool failed;                 /* a nested write failed: the outermost rolls back */
	bool readonly;               /* opened by db_open_readonly */
	char owner[OWNER_LEN];       /* this process, as the rows it starts name it */
};

/* perfd's mark in the SQLite header ("perf"), so a foreign file is refused. */
#define DB_APPLICATION_ID 0x70657266

struct db_migration {
	int version;
	const char *sql;
};
extern const struct db_migration db_migrations[];
extern const size_t db_nmigrations;

/* Turns an SQLite result code into a negative errno with a detail naming
 * the database file and what was being done. */
int db_fail(struct db *db, int rc, const char *doing);

int db_exec(struct db *db, const char *sql, const char *doing);
/* A prepared statement for sql, which must be a string literal: it is
 * prepared once per handle and reused, since a comparison runs the same few
 * statements for every process. Hand it back with db_finish, never
 * sqlite3_finalize. */
int db_prepare(struct db *db, sqlite3_stmt **out, const char *sql);
/* Resets a statement from db_prepare for its next use; NULL does nothing. */
void db_finish(sqlite3_stmt *st);
/* Steps a statement that returns no row and resets it: 0 or the error,
 * with doing in its detail. */
int db_step(struct db *db, sqlite3_stmt *st, const char *doing);
/* The same for an INSERT, with the new row's id in *out_id. */
int db_step_insert(struct db *db, sqlite3_stmt *st, int64_t *out_id, const char *doing);
/* Steps a statement that returns one row of one integer (a count) into
 * *out and resets it. */
int db_step_count(struct db *db, sqlite3_stmt *st, int64_t *out, const char *doing);
/*
 * Running one statement whole: sql (a string literal, as for db_prepare) is
 * prepared, args are bound to its parameters 1, 2, ... in order, and it is
 * stepped and reset, on success and failure alike. args and nargs are
 * written DB_ARGS(DB_INT(id), DB_TEXT(name)), or NULL and 0 for none. An
 * error's detail names doing.
 */
enum db_arg_type { DB_ARG_INT, DB_ARG_TEXT, DB_ARG_REAL, DB_ARG_BLOB };
struct db_arg {
	enum db_arg_type type;
	int64_t i;                   /* an integer, or a blob's length */
	const char *s;               /* text (NULL binds SQL NULL) or a blob's bytes */
	double d;                    /* a non-finite value binds SQL NULL */
};
#define DB_INT(v) { .type = DB_ARG_INT, .i = (int64_t)(v) }
#define DB_TEXT(v) { .type = DB_ARG_TEXT, .s = (v) }
#define DB_REAL(v) { .type = DB_ARG_REAL, .d = (v) }
/* Bound without a copy, so the bytes must outlive the statement's use:
 * db_run and its kin clear the bindings before they return. A NULL p
 * binds an empty blob. */
#define DB_BLOB(p, n) { .type = DB_ARG_BLOB, .s = (p), .i = (int64_t)(n) }
#define DB_ARGS(...) (const struct db_arg[]){ __VA_ARGS__ }, \
	sizeof((const struct db_arg[]){ __VA_ARGS__ }) / sizeof(struct db_arg)
void db_bind_args(sqlite3_stmt *st, const struct db_arg *args, size_t nargs);
/* db_prepare, then db_bind_args: for a statement stepped by hand. */
int db_prepare_bound(struct db *db, sqlite3_stmt **out, const char *sql,
		     const struct db_arg *args, size_t nargs);
/* A statement that returns no row: 0 or the error. */
int db_run(struct db *db, const char *sql, const struct db_arg *args, size_t nargs,
	   const char *doing);
/* The same for an INSERT, with the new row's id in *out_id. */
int db_run_insert(struct db *db, int64_t *out_id, const char *sql, const struct db_arg *args,
		  size_t nargs, const char *doing);
/* A statement that selects at most one row, handed to fill (a db_rows fill,
 * given elem and a NULL arg): 0, -ENOENT with no detail set when there is
 * no row, or the error. */
int db_run_row(struct db *db, void (*fill)(void *elem, sqlite3_stmt *st, void *arg), void *elem,
	       const char *sql, const struct db_arg *args, size_t nargs, const char *doing);
/* A statement that returns one row of one integer (a count, an aggregate),
 * into *out (0 on failure). */
int db_run_count(struct db *db, int64_t *out, const char *sql, const struct db_arg *args,
		 size_t nargs, const char *doing);
/* A process's or a runner's line: sql inserts (owner, idx, kind, text).
 * The text is stored repaired (utf8_repair), so that every reader may
 * render it as text; the bytes as printed stay in the captured output. */
int db_line_insert(struct db *db, const char *sql, int64_t owner, int64_t idx, const char *kind,
		   const char *text, const char *doing);
/* Steps an INSERT or UPDATE ... RETURNING id (one row at the most) to its
 * end, without resetting it: its last sqlite3_step result, SQLITE_DONE on
 * success, with the id in *out_id when a row came back (else *out_id is
 * left as it was). The end must be reached and checked: in autocommit the
 * write is committed only there, and a failed commit (a full disk) undoes
 * the row whose id came back. */
int db_step_returning(sqlite3_stmt *st, int64_t *out_id);

/* BEGIN IMMEDIATE, or joining the transaction already open: every write
 * function is one transaction, or one part of a caller's
 * db_transaction_begin ... db_transaction_commit. */
int db_begin(struct db *db);
int db_commit(struct db *db);
void db_rollback(struct db *db);
/* Ends a write begun with db_begin: commits when r is 0, else rolls back.
 * Returns r, or the commit's error. */
int db_end(struct db *db, int r);

/* The index of s among the n words (an enum's names), or -1 when it is
 * none of them (or NULL). */
int db_word_index(const char *const *words, size_t n, const char *s);

/* Binding helpers: NULL strings and non-finite reals bind as SQL NULL. */
void db_bind_text(sqlite3_stmt *st, int i, const char *s);
void db_bind_real(sqlite3_stmt *st, int i, double v);
/* Column helpers: a NULL column gives NULL / NAN / 0. */
char *db_column_strdup(sqlite3_stmt *st, int i);
double db_column_real(sqlite3_stmt *st, int i);
void db_column_copy(char *dst, size_t dstlen, sqlite3_stmt *st, int i);
/* A blob column's bytes with a NUL after them (the caller's to free), its
 * length in *out_len; a NULL column gives "". */
char *db_column_blobdup(sqlite3_stmt *st, int i, size_t *out_len);

/*
 * Loading a list of rows, the one loop of db/. The caller prepares st and
 * binds it; these step it to its end or to max rows and reset it, on
 * success and failure alike. Each row is handed to fill, which reads it and
 * cannot fail: a loader whose rows need further queries runs them once the
 * list is loaded. On failure the error names doing, and release (NULL when
 * an element owns nothing) is called on every element filled, so nothing
 * of a failed list is the caller's.
 */
struct db_rows {
	size_t size;                 /* bytes per element */
	size_t max;                  /* at most this many rows; SIZE_MAX: no bound */
	/* Fills one element, zeroed before, from the current row of st. */
	void (*fill)(void *elem, sqlite3_stmt *st, void *arg);
	void (*release)(void *elem);
	void *arg;                   /* handed to fill */
	const char *doing;           /* "listing hosts", for the error's detail */
};
/* Into a new array: 0, with *out (NULL when no row) and *out_n the
 * caller's; or a negative errno with *out NULL and *out_n 0. */
int db_rows_load(struct db *db, sqlite3_stmt *st, const struct db_rows *how, void **out,
		 size_t *out_n);
/* db_rows_load of sql (a string literal) with args bound, as db_run does.
 * out is the address of the caller's T * (void * to spare every caller a
 * cast). */
int db_rows_select(struct db *db, const char *sql, const struct db_arg *args, size_t nargs,
		   const struct db_rows *how, void *out, size_t *out_n);
/* db_rows_fill of sql with args bound: the count filled, or a negative
 * errno. */
int db_rows_select_fill(struct db *db, const char *sql, const struct db_arg *args, size_t nargs,
			const struct db_rows *how, void *out);
/* Into the caller's array out, of how->max elements: the count filled, or
 * a negative errno with none of out left filled. */
int db_rows_fill(struct db *db, sqlite3_stmt *st, const struct db_rows *how, void *out);
/* The loop itself, for rows that are not one list but go to the lists of
 * several parents (the metrics of every process of a comparison, in one
 * query): fn is called on each of at most max rows. Returns the count of
 * rows, or a negative errno. */
int db_rows_each(struct db *db, sqlite3_stmt *st, size_t max,
		 void (*fn)(sqlite3_stmt *st, void *arg), void *arg, const char *doing);
/* A fill and a release for a list of strings (char * elements, the first
 * column's text). */
void db_fill_string(void *elem, sqlite3_stmt *st, void *arg);
void db_release_string(void *elem);
/* A fill for a list of int64_t, the first column (ids). */
void db_fill_int64(void *elem, sqlite3_stmt *st, void *arg);
/* db_rows_select of a list of ids, at most max: *out is the caller's. */
/* An SQL condition: comparison CMP is one the hub may speak for, of
 * HOST, case CASE and verdict VERDICT, from LO to HI: stored and done, of
 * that host, with its job and its two builds held (all of that host), the
 * base build made from LO and the head build from HI. Each argument is an
 * SQL expression. */
#define DB_COMPARISON_CHECKED(CMP, HOST, CASE, VERDICT, LO, HI) \
	"EXISTS (SELECT 1 FROM comparisons cc" \
	" JOIN comparison_origins co ON co.comparison_id = cc.id" \
	" JOIN jobs cj ON cj.id = cc.job_id" \
	" JOIN builds cb ON cb.id = cc.base_build JOIN builds ch ON ch.id = cc.head_build" \
	" WHERE cc.id = " CMP " AND cc.state = 'done' AND cc.host = " HOST \
	" AND cc.case_name = " CASE " AND cc.verdict = " VERDICT \
	" AND co.host = " HOST " AND cj.host = " HOST " AND cb.host = " HOST \
	" AND ch.host = " HOST " AND cb.commit_oid = " LO " AND ch.commit_oid = " HI ")"

int db_ids_select(struct db *db, int64_t **out, size_t *out_n, size_t max, const char *sql,
		  const struct db_arg *args, size_t nargs, const char *doing);

/*
 * What this agent has not pushed, each the FROM ... WHERE of a query (its
 * lists in jobs.c, builds.c, alerts.c and pushed.c; db_push_backlog counts
 * them all). A done comparison of its own (not one a hub ingested) the hub
 * has not answered for; a job or an alert whose newest change (seq) the hub
 * has not answered for; a finished build with more done runner results
 * than the hub acknowledged (none acknowledged: -1).
 */
#define DB_COMPARISONS_UNSENT " FROM comparisons c WHERE c.state = 'done'" \
	" AND NOT EXISTS (SELECT 1 FROM pushed p WHERE p.comparison_id = c.id)" \
	" AND NOT EXISTS (SELECT 1 FROM comparison_origins o WHERE o.comparison_id = c.id)"
#define DB_JOBS_UNSENT " FROM jobs j WHERE j.host = '' AND NOT EXISTS" \
	" (SELECT 1 FROM pushed_jobs p WHERE p.job_id = j.id AND p.seq >= j.seq)"
#define DB_ALERTS_UNSENT " FROM alerts a WHERE a.host = '' AND NOT EXISTS" \
	" (SELECT 1 FROM pushed_alerts p WHERE p.alert_id = a.id AND p.seq >= a.seq)"
#define DB_BUILDS_UNSENT " FROM builds b WHERE b.origin_id IS NULL" \
	" AND b.state IN ('done', 'failed')" \
	" AND coalesce((SELECT p.results FROM pushed_builds p WHERE p.build_id = b.id), -1) <" \
	" (SELECT count(*) FROM runner_results r WHERE r.build_id = b.id AND r.state = 'done')"

/* Records the hub's answer for one of this agent's rows: sql is the INSERT
 * OR REPLACE of that row's id, seq, status, message and pushed_at, in this
 * order, into its pushed table (pushed.c). */
int db_pushed_put(struct db *db, const char *sql, int64_t id, int64_t seq, int status,
		  const char *message, const char *doing);

enum db_state db_state_from_name(const char *s);
/* Loads every process of a comparison in execution order, with metrics and
 * lines but without captured output; *out is the caller's. */
int db_processes_load(struct db *db, struct db_process **out, size_t *out_n,
		      int64_t comparison_id);

#endif
