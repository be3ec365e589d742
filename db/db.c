/*
 * Opening, migrating, transactions and the helpers every db/ file shares;
 * and db_count, whose counts span tables.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "db-internal.h"

int db_fail(struct db *db, int rc, const char *doing)
{
	const char *msg = db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc);

	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return err_set(-EBUSY, "database '%s' is locked by another writer "
			       "(waited %d ms while %s)", db->path,
			       db->lock_timeout_ms, doing);
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return err_set(-EPROTO, "database '%s' is corrupt or not an SQLite "
			       "file (%s, while %s)", db->path, msg, doing);
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return err_set(-EACCES, "database '%s' cannot be written (%s, while %s)",
			       db->path, msg, doing);
	case SQLITE_CANTOPEN:
		return err_set(-EACCES, "database '%s' cannot be opened (%s, while %s)",
			       db->path, msg, doing);
	case SQLITE_FULL:
		return err_set(-ENOSPC, "database '%s': disk full while %s",
			       db->path, doing);
	default:
		return err_set(-EIO, "database '%s': %s (code %d) while %s", db->path, msg,
			       db->h ? sqlite3_extended_errcode(db->h) : rc, doing);
	}
}

int db_exec(struct db *db, const char *sql, const char *doing)
{
	int rc = sqlite3_exec(db->h, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : db_fail(db, rc, doing);
}

int db_prepare(struct db *db, sqlite3_stmt **out, const char *sql)
{
	sqlite3_stmt *st;
	size_t i;
	int rc;

	*out = NULL;
	for (i = 0; i < db->ncache; i++) {
		if (db->cache[i].sql == sql) {
			*out = db->cache[i].st;
			return 0;
		}
	}
	rc = sqlite3_prepare_v3(db->h, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(db, rc, "preparing a query");
	db->cache = xrealloc(db->cache, (db->ncache + 1) * sizeof(*db->cache));
	db->cache[db->ncache].sql = sql;
	db->cache[db->ncache].st = st;
	db->ncache++;
	*out = st;
	return 0;
}

void db_finish(sqlite3_stmt *st)
{
	if (!st)
		return;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

int db_step(struct db *db, sqlite3_stmt *st, const char *doing)
{
	int rc = sqlite3_step(st);

	db_finish(st);
	return rc == SQLITE_DONE ? 0 : db_fail(db, rc, doing);
}

int db_step_insert(struct db *db, sqlite3_stmt *st, int64_t *out_id, const char *doing)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_DONE)
		*out_id = sqlite3_last_insert_rowid(db->h);
	db_finish(st);
	return rc == SQLITE_DONE ? 0 : db_fail(db, rc, doing);
}

int db_step_count(struct db *db, sqlite3_stmt *st, int64_t *out, const char *doing)
{
	int rc = sqlite3_step(st);

	*out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	db_finish(st);
	return rc == SQLITE_ROW ? 0 : db_fail(db, rc, doing);
}

int db_step_returning(sqlite3_stmt *st, int64_t *out_id)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW) {
		*out_id = sqlite3_column_int64(st, 0);
		rc = sqlite3_step(st);
	}
	return rc;
}

void db_bind_args(sqlite3_stmt *st, const struct db_arg *args, size_t nargs)
{
	size_t i;

	for (i = 0; i < nargs; i++) {
		switch (args[i].type) {
		case DB_ARG_INT:
			sqlite3_bind_int64(st, (int)i + 1, args[i].i);
			break;
		case DB_ARG_TEXT:
			db_bind_text(st, (int)i + 1, args[i].s);
			break;
		case DB_ARG_REAL:
			db_bind_real(st, (int)i + 1, args[i].d);
			break;
		case DB_ARG_BLOB:
			sqlite3_bind_blob(st, (int)i + 1, args[i].s ? args[i].s : "",
					  (int)args[i].i, SQLITE_STATIC);
			break;
		}
	}
}

int db_prepare_bound(struct db *db, sqlite3_stmt **out, const char *sql,
		     const struct db_arg *args, size_t nargs)
{
	int r = db_prepare(db, out, sql);

	if (r == 0)
		db_bind_args(*out, args, nargs);
	return r;
}

int db_run(struct db *db, const char *sql, const struct db_arg *args, size_t nargs,
	   const char *doing)
{
	sqlite3_stmt *st;
	int r = db_prepare_bound(db, &st, sql, args, nargs);

	return r < 0 ? r : db_step(db, st, doing);
}

int db_run_insert(struct db *db, int64_t *out_id, const char *sql, const struct db_arg *args,
		  size_t nargs, const char *doing)
{
	sqlite3_stmt *st;
	int r = db_prepare_bound(db, &st, sql, args, nargs);

	return r < 0 ? r : db_step_insert(db, st, out_id, doing);
}

int db_run_count(struct db *db, int64_t *out, const char *sql, const struct db_arg *args,
		 size_t nargs, const char *doing)
{
	sqlite3_stmt *st;
	int r;

	*out = 0;
	r = db_prepare_bound(db, &st, sql, args, nargs);
	return r < 0 ? r : db_step_count(db, st, out, doing);
}

int db_run_row(struct db *db, void (*fill)(void *elem, sqlite3_stmt *st, void *arg), void *elem,
	       const char *sql, const struct db_arg *args, size_t nargs, const char *doing)
{
	sqlite3_stmt *st;
	int rc, r;

	r = db_prepare_bound(db, &st, sql, args, nargs);
	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		fill(elem, st, NULL);
	else
		r = rc == SQLITE_DONE ? -ENOENT : db_fail(db, rc, doing);
	db_finish(st);
	return r;
}

int db_line_insert(struct db *db, const char *sql, int64_t owner, int64_t idx, const char *kind,
		   const char *text, const char *doing)
{
	char *fixed = utf8_repair_dup(text);
	int r;

	r = db_run(db, sql, DB_ARGS(DB_INT(owner), DB_INT(idx), DB_TEXT(kind), DB_TEXT(fixed)),
		   doing);
	free(fixed);
	return r;
}

static int step_once(struct db *db, const char *sql, const char *doing)
{
	return db_run(db, sql, NULL, 0, doing);
}

int db_begin(struct db *db)
{
	int r = 0;

	if (db->depth == 0) {
		r = step_once(db, "BEGIN IMMEDIATE", "starting a write");
		if (r < 0)
			return r;
		db->failed = false;
	}
	db->depth++;
	return r;
}

int db_commit(struct db *db)
{
	int r;

	assert(db->depth > 0);
	if (--db->depth > 0)
		return 0;
	if (db->failed) {
		db_rollback(db);
		return err_set(-EIO, "database '%s': a write in the transaction failed; "
			       "nothing of it was stored", db->path);
	}
	r = step_once(db, "COMMIT", "committing a write");
	if (r < 0)
		db_rollback(db);
	return r;
}

void db_rollback(struct db *db)
{
	if (db->depth > 1) {
		/* The outermost commit rolls the whole transaction back. */
		db->depth--;
		db->failed = true;
		return;
	}
	db->depth = 0;
	if (!sqlite3_get_autocommit(db->h))
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}

int db_end(struct db *db, int r)
{
	if (r == 0)
		return db_commit(db);
	db_rollback(db);
	return r;
}

int db_transaction_begin(struct db *db)
{
	return db_begin(db);
}

int db_transaction_commit(struct db *db)
{
	return db_commit(db);
}

void db_transaction_rollback(struct db *db)
{
	db_rollback(db);
}

int db_word_index(const char *const *words, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s && !strcmp(s, words[i]))
			return (int)i;
	return -1;
}

void db_bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

void db_bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

char *db_column_strdup(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	return s ? xstrdup((const char *)s) : NULL;
}

double db_column_real(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return NAN;
	return sqlite3_column_double(st, i);
}

void db_column_copy(char *dst, size_t dstlen, sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	snprintf(dst, dstlen, "%s", s ? (const char *)s : "");
}

char *db_column_blobdup(sqlite3_stmt *st, int i, size_t *out_len)
{
	const void *b = sqlite3_column_blob(st, i);
	size_t n = (size_t)sqlite3_column_bytes(st, i);
	char *s = xmalloc(n + 1);

	if (n)
		memcpy(s, b, n);
	s[n] = '\0';
	*out_len = n;
	return s;
}

int db_rows_each(struct db *db, sqlite3_stmt *st, size_t max,
		 void (*fn)(sqlite3_stmt *st, void *arg), void *arg, const char *doing)
{
	size_t n = 0;
	int rc = SQLITE_DONE, r;

	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		fn(st, arg);
		n++;
	}
	/* The last step's error is read before the reset. */
	r = n < max && rc != SQLITE_DONE ? db_fail(db, rc, doing) : (int)n;
	db_finish(st);
	return r;
}

/* The list db_rows_load and db_rows_fill make: v holds alloc elements,
 * grown here when grow is set, else the caller's array of how->max. */
struct rows {
	const struct db_rows *how;
	char *v;
	size_t n, alloc;
	bool grow;
};

static void rows_add(sqlite3_stmt *st, void *arg)
{
	struct rows *l = arg;
	char *elem;

	if (l->grow && l->n == l->alloc) {
		l->alloc = l->alloc ? l->alloc * 2 : 16;
		l->v = xrealloc(l->v, l->alloc * l->how->size);
	}
	elem = l->v + l->n * l->how->size;
	memset(elem, 0, l->how->size);
	l->how->fill(elem, st, l->how->arg);
	l->n++;
}

static int rows_step(struct db *db, sqlite3_stmt *st, struct rows *l)
{
	size_t i;
	int r;

	r = db_rows_each(db, st, l->how->max, rows_add, l, l->how->doing);
	if (r < 0 && l->how->release) {
		for (i = 0; i < l->n; i++)
			l->how->release(l->v + i * l->how->size);
	}
	return r;
}

int db_rows_select(struct db *db, const char *sql, const struct db_arg *args, size_t nargs,
		   const struct db_rows *how, void *out, size_t *out_n)
{
	sqlite3_stmt *st = NULL;
	void *v = NULL;
	int r;

	/* out holds a T *: copied, not assigned through a void **. */
	memcpy(out, &v, sizeof(v));
	*out_n = 0;
	r = db_prepare_bound(db, &st, sql, args, nargs);
	if (r < 0)
		return r;
	r = db_rows_load(db, st, how, &v, out_n);
	memcpy(out, &v, sizeof(v));
	return r;
}

int db_rows_select_fill(struct db *db, const char *sql, const struct db_arg *args, size_t nargs,
			const struct db_rows *how, void *out)
{
	sqlite3_stmt *st = NULL;
	int r = db_prepare_bound(db, &st, sql, args, nargs);

	return r < 0 ? r : db_rows_fill(db, st, how, out);
}

int db_rows_load(struct db *db, sqlite3_stmt *st, const struct db_rows *how, void **out,
		 size_t *out_n)
{
	struct rows l = { how, NULL, 0, 0, true };
	int r;

	*out = NULL;
	*out_n = 0;
	r = rows_step(db, st, &l);
	if (r < 0) {
		free(l.v);
		return r;
	}
	*out = l.v;
	*out_n = l.n;
	return 0;
}

int db_rows_fill(struct db *db, sqlite3_stmt *st, const struct db_rows *how, void *out)
{
	struct rows l = { how, out, 0, how->max, false };

	return rows_step(db, st, &l);
}

void db_fill_string(void *elem, sqlite3_stmt *st, void *arg)
{
	*(char **)elem = db_column_strdup(st, 0);
}

void db_release_string(void *elem)
{
	free(*(char **)elem);
}

void db_fill_int64(void *elem, sqlite3_stmt *st, void *arg)
{
	*(int64_t *)elem = sqlite3_column_int64(st, 0);
}

int db_ids_select(struct db *db, int64_t **out, size_t *out_n, size_t max, const char *sql,
		  const struct db_arg *args, size_t nargs, const char *doing)
{
	const struct db_rows how = {
		.size = sizeof(int64_t), .max = max, .fill = db_fill_int64, .doing = doing,
	};

	return db_rows_select(db, sql, args, nargs, &how, out, out_n);
}

static int pragma_int(struct db *db, const char *sql, int *out)
{
	sqlite3_stmt *st = NULL;
	int rc, r;

	rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		r = db_fail(db, rc, "reading the header");
		goto out;
	}
	*out = sqlite3_column_int(st, 0);
	r = 0;
out:
	sqlite3_finalize(st);
	return r;
}

/* The file's schema version, after refusing a foreign file or a newer
 * schema; *out_tables counts its tables (none in a file just created). */
static int header_check(struct db *db, int *out_version, int *out_tables)
{
	int version, app_id, tables;
	int r;

	r = pragma_int(db, "PRAGMA application_id", &app_id);
	if (r < 0)
		return r;
	r = pragma_int(db, "PRAGMA user_version", &version);
	if (r < 0)
		return r;
	r = pragma_int(db, "SELECT count(*) FROM sqlite_schema", &tables);
	if (r < 0)
		return r;
	if (app_id != DB_APPLICATION_ID && (app_id != 0 || tables > 0))
		return err_set(-EPROTO, "database '%s' is an SQLite file but not a "
			       "perfd database", db->path);
	if (version > DB_SCHEMA_VERSION)
		return err_set(-EPROTONOSUPPORT, "database '%s' has schema version "
			       "%d; this perfd knows versions up to %d: use a newer "
			       "perfd", db->path, version, DB_SCHEMA_VERSION);
	*out_version = version;
	*out_tables = tables;
	return 0;
}

static int migrate(struct db *db)
{
	int version, tables;
	size_t i;
	int r;

	r = header_check(db, &version, &tables);
	if (r < 0)
		return r;
	if (version == DB_SCHEMA_VERSION)
		return 0;

	r = db_begin(db);
	if (r < 0)
		return r;
	/* Another process may have migrated the file between the check and
	 * the write lock: read the version again under the lock. */
	r = pragma_int(db, "PRAGMA user_version", &version);
	if (r < 0)
		goto out;
	for (i = 0; i < db_nmigrations; i++) {
		char sql[96];

		if (db_migrations[i].version <= version)
			continue;
		r = db_exec(db, db_migrations[i].sql, "migrating the schema");
		if (r < 0)
			goto out;
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
			 db_migrations[i].version);
		r = db_exec(db, sql, "migrating the schema");
		if (r < 0)
			goto out;
	}
	r = db_exec(db, "PRAGMA application_id = 1885696614", "marking the file");
	if (r < 0)
		goto out;
	r = db_commit(db);
out:
	if (r < 0)
		db_rollback(db);
	return r;
}

/* perfd_owner_gone(owner): 1 when the perfd a row names is surely gone
 * (owner_is_gone), else 0; perfd_owner_pid(owner): its pid, NULL when none. */
static void sql_owner_gone(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const unsigned char *owner = sqlite3_value_text(argv[0]);

	(void)argc;
	sqlite3_result_int(ctx, owner_is_gone((const char *)owner));
}

/* perfd_owner_other_boot(owner): the boot a row's perfd ran in when that
 * is another than this one (owner_is_other_boot), else NULL. */
static void sql_owner_other_boot(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	char boot[40];

	(void)argc;
	if (owner_is_other_boot((const char *)sqlite3_value_text(argv[0]), boot))
		sqlite3_result_text(ctx, boot, -1, SQLITE_TRANSIENT);
	else
		sqlite3_result_null(ctx);
}

static void sql_owner_pid(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	long pid = owner_pid((const char *)sqlite3_value_text(argv[0]));

	(void)argc;
	if (pid)
		sqlite3_result_int64(ctx, pid);
	else
		sqlite3_result_null(ctx);
}

/* A handle on path, opened with flags (as the URI uri when not NULL), or
 * the reason none could be. */
static int handle_open(struct db **out, const char *path, const char *uri, int lock_timeout_ms,
		       int flags)
{
	struct db *db;
	int rc, r;

	*out = NULL;
	/* SQLite takes "" (and ":memory:") for a database of no file, which
	 * would keep nothing, and Debian's reads a name that begins "file:" as
	 * a URI, where "file::memory:" or "?mode=memory" keep nothing either:
	 * a path names a file. */
	if (!*path || !strcmp(path, ":memory:"))
		return err_set(-EINVAL, "database '%s': not a file's path (an empty path, or "
			       "':memory:', would keep nothing)", path);
	if (!strncmp(path, "file:", 5))
		return err_set(-EINVAL, "database '%s': not a file's path (SQLite reads a name "
			       "that begins 'file:' as a URI; write ./%s for a file of that name)",
			       path, path);
	db = xcalloc(1, sizeof(*db));
	db->path = xstrdup(path);
	db->lock_timeout_ms = lock_timeout_ms;
	rc = sqlite3_open_v2(uri ? uri : path, &db->h,
			     flags | SQLITE_OPEN_NOMUTEX | (uri ? SQLITE_OPEN_URI : 0), NULL);
	if (rc != SQLITE_OK) {
		if (!(flags & SQLITE_OPEN_CREATE) && (rc & 0xff) == SQLITE_CANTOPEN &&
		    sqlite3_system_errno(db->h) == ENOENT)
			r = err_set(-ENOENT, "no database at '%s': no such file", path);
		else
			r = db_fail(db, rc, "opening");
		db_close(db);
		return r;
	}
	sqlite3_extended_result_codes(db->h, 1);
	sqlite3_busy_timeout(db->h, lock_timeout_ms);
	/* Not SQLITE_DETERMINISTIC: a process may end between two calls. */
	sqlite3_create_function(db->h, "perfd_owner_gone", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY,
				NULL, sql_owner_gone, NULL, NULL);
	sqlite3_create_function(db->h, "perfd_owner_pid", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY,
				NULL, sql_owner_pid, NULL, NULL);
	sqlite3_create_function(db->h, "perfd_owner_other_boot", 1,
				SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL, sql_owner_other_boot, NULL, NULL);
	owner_self(db->owner);
	*out = db;
	return 0;
}

int db_open(struct db **out, const char *path, int lock_timeout_ms)
{
	struct db *db;
	int r;

	*out = NULL;
	r = handle_open(&db, path, NULL, lock_timeout_ms, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
	if (r < 0)
		return r;
	r = migrate(db);
	if (r < 0)
		goto out;
	r = db_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
		    " PRAGMA wal_autocheckpoint = 8192;"
		    " PRAGMA foreign_keys = ON;", "setting the journal mode");
out:
	if (r < 0) {
		db_close(db);
		return r;
	}
	*out = db;
	return 0;
}

/* "file:PATH?immutable=1", with the characters a URI gives a meaning to
 * escaped. The caller frees it. */
static char *immutable_uri(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;

	strbuf_adds(&sb, "file:");
	/* "file://..." would name a host: an absolute path keeps one '/'. */
	for (p = path; *p; p++) {
		if (*p == '%' || *p == '?' || *p == '#' || (unsigned char)*p < 0x20)
			strbuf_addf(&sb, "%%%02X", (unsigned char)*p);
		else if (*p == '/' && p[1] == '/')
			continue;
		else
			strbuf_add(&sb, p, 1);
	}
	strbuf_adds(&sb, "?immutable=1");
	return strbuf_detach(&sb);
}

/* How many bytes the file at path holds: 0 when it is absent, -1 when it
 * cannot be told. */
static long long file_size(const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0)
		return (long long)st.st_size;
	return errno == ENOENT ? 0 : -1;
}

/* Whether the directory holding path is on a filesystem mounted
 * read-only, where no process writes the database through this mount. (A
 * directory only this user may not write is not: its owner may write the
 * database meanwhile, which an immutable read would not see coming.) */
static bool dir_is_read_only(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrndup(path, (size_t)(slash - path) + 1) : xstrdup(".");
	struct statvfs sv;
	bool ro = statvfs(dir, &sv) == 0 && (sv.f_flag & ST_RDONLY);

	free(dir);
	return ro;
}

/*
 * Where SQLite cannot make the -shm file of a WAL database because its
 * directory is on a read-only filesystem, the database opened immutable:
 * read as the file stands, with no lock and no -shm. That is exact only
 * while no -wal holds writes the file lacks and nothing writes it
 * meanwhile, which the read-only mount assures; with a -wal that holds
 * writes, -EACCES saying so.
 */
static int open_immutable(struct db **out, const char *path, int lock_timeout_ms)
{
	char *wal = xasprintf("%s-wal", path);
	long long wal_size = file_size(wal);
	char *uri;
	int r;

	*out = NULL;
	if (wal_size != 0) {
		r = err_set(-EACCES, "database '%s' cannot be read: in WAL mode SQLite needs "
			    "a '%s-shm' file beside it, there is none and its directory cannot "
			    "be written, and '%s' holds writes not yet in the database (open it "
			    "once where it can be written)", path, path, wal);
		free(wal);
		return r;
	}
	free(wal);
	uri = immutable_uri(path);
	r = handle_open(out, path, uri, lock_timeout_ms, SQLITE_OPEN_READONLY);
	free(uri);
	return r;
}

/*
 * Not SQLITE_OPEN_READONLY: a read-only connection to a WAL database makes
 * the -wal and -shm files as any other does, but cannot remove them at its
 * close, so every read would leave two files beside the database. Opened
 * read-write without CREATE, the handle never makes the database itself,
 * removes those files at the last close like a writer, and falls back to
 * reading alone where the file is write-protected; query_only stops every
 * write perfd could issue through it.
 */
int db_open_readonly(struct db **out, const char *path, int lock_timeout_ms)
{
	struct db *db;
	int version, tables, r;

	*out = NULL;
	r = handle_open(&db, path, NULL, lock_timeout_ms, SQLITE_OPEN_READWRITE);
	if (r < 0)
		return r;
	db->readonly = true;
	r = db_exec(db, "PRAGMA query_only = ON", "opening for reading");
	if (r < 0)
		goto out;
	r = header_check(db, &version, &tables);
	if (r < 0) {
		int ext = sqlite3_extended_errcode(db->h);

		if (ext != SQLITE_READONLY_DIRECTORY && ext != SQLITE_CANTOPEN &&
		    ext != SQLITE_READONLY_CANTINIT)
			goto out;
		if (!dir_is_read_only(path)) {
			if (ext == SQLITE_READONLY_DIRECTORY)
				r = err_set(-EACCES, "database '%s' cannot be read: in WAL mode "
					    "SQLite needs a '%s-shm' file beside it, and there is "
					    "none and its directory cannot be written", path, path);
			goto out;
		}
		/* No -shm could be made: read the file as it stands. */
		db_close(db);
		db = NULL;
		r = open_immutable(&db, path, lock_timeout_ms);
		if (r < 0)
			return r;
		db->readonly = true;
		r = db_exec(db, "PRAGMA query_only = ON", "opening for reading");
		if (r == 0)
			r = header_check(db, &version, &tables);
		if (r < 0)
			goto out;
	}
	if (version == 0 && tables == 0) {
		r = err_set(-ENOENT, "database '%s' is empty: nothing was ever stored in it",
			    path);
	} else if (version < DB_SCHEMA_VERSION) {
		r = err_set(-EPROTONOSUPPORT, "database '%s' has schema version %d, older "
			    "than this perfd's %d, and a verb that only reads does not "
			    "migrate it: run one that writes to it first (perfd pair, perfd "
			    "agent or perfd host clear NAME)", path, version,
			    DB_SCHEMA_VERSION);
	}
out:
	if (r < 0) {
		db_close(db);
		return r;
	}
	*out = db;
	return 0;
}

void db_close(struct db *db)
{
	size_t i;

	if (!db)
		return;
	for (i = 0; i < db->ncache; i++)
		sqlite3_finalize(db->cache[i].st);
	free(db->cache);
	sqlite3_close_v2(db->h);
	free(db->path);
	free(db);
}

int db_schema_version(struct db *db)
{
	int v = -1;

	if (pragma_int(db, "PRAGMA user_version", &v) < 0)
		return -1;
	return v;
}

const char *db_state_name(enum db_state s)
{
	switch (s) {
	case DB_STATE_RUNNING:
		return "running";
	case DB_STATE_DONE:
		return "done";
	case DB_STATE_ABANDONED:
		return "abandoned";
	}
	return "running";
}

static void count_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_count *c = elem;

	db_column_copy(c->key, sizeof(c->key), st, 0);
	c->n = sqlite3_column_int64(st, 1);
}

int db_count(struct db *db, struct db_count *out, size_t max, enum db_count_kind kind)
{
	static const char *const sql[] = {
		[DB_COUNT_VERDICTS] = "SELECT coalesce(verdict, 'none'), count(*) FROM comparisons"
			" GROUP BY 1 ORDER BY 1",
		[DB_COUNT_JOBS] = "SELECT state, count(*) FROM jobs GROUP BY 1 ORDER BY 1",
		[DB_COUNT_BUILDS] = "SELECT state, count(*) FROM builds GROUP BY 1 ORDER BY 1",
		[DB_COUNT_QUARANTINED] = "SELECT 'quarantined', count(*) FROM hosts"
			" WHERE quarantined != 0",
		[DB_COUNT_ALERT_COMMANDS] = "SELECT outcome, count(*) FROM alert_commands"
			" GROUP BY 1 ORDER BY 1",
		[DB_COUNT_UNSANDBOXED] = "SELECT 'unsandboxed', count(*) FROM host_status"
			" WHERE sandbox = 'none' OR sandbox GLOB 'none: *'",
		[DB_COUNT_HELD] = "SELECT why, count(*) FROM (SELECT why FROM holds"
			" WHERE released_at IS NULL UNION ALL SELECT why FROM hub_holds"
			" WHERE in_force) GROUP BY 1 ORDER BY 1",
	};
	const struct db_rows how = {
		.size = sizeof(*out), .max = max, .fill = count_fill, .doing = "counting rows",
	};

	return db_rows_select_fill(db, sql[kind], NULL, 0, &how, out);
}
