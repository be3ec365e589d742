/*
 * Manifests: what one arm of a comparison ran, as a hash. An agent's arm
 * is its build (commit, tree, recipe and every artifact), a perfd pair's
 * its program and the files named for it. The hash is the sha256 of a
 * canonical text (docs/protocol.md, "Manifests"), so that two arms whose
 * case program is the same file (a wrapper script) are still told apart
 * by the rest of their builds, and the same build is one manifest wherever
 * and whenever it is hashed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

#define MANIFEST_HEADER "perfd-manifest/1\n"

void db_manifest_release(struct db_manifest *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nfiles; i++)
		free(m->files[i].name);
	free(m->files);
	memset(m, 0, sizeof(*m));
}

void db_manifest_add(struct db_manifest *m, const char *name, int64_t size, const char *sha256)
{
	struct db_manifest_file *f;

	m->files = xrealloc(m->files, (m->nfiles + 1) * sizeof(*m->files));
	f = &m->files[m->nfiles++];
	memset(f, 0, sizeof(*f));
	f->name = xstrdup(name);
	f->size = size;
	snprintf(f->sha256, sizeof(f->sha256), "%s", sha256);
}

static bool is_hex(const char *s, size_t len)
{
	return strlen(s) == len && strspn(s, "0123456789abcdef") == len;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A name in a file line: a backslash and a line feed, the only bytes that
 * could make two texts alike or a line two, are written \\ and \n. */
static void add_name(struct strbuf *sb, const char *name)
{
	for (; *name; name++) {
		if (*name == '\\')
			strbuf_adds(sb, "\\\\");
		else if (*name == '\n')
			strbuf_adds(sb, "\\n");
		else
			strbuf_addch(sb, *name);
	}
}

/* The canonical text, appended to out: the header, then a line per field
 * and per file, sorted. -EINVAL for a file without a name, size or sha256,
 * or a manifest with nothing in it. Names are checked distinct before. */
static int manifest_text(struct strbuf *out, const struct db_manifest *m)
{
	char **lines = xcalloc(m->nfiles + 3, sizeof(*lines));
	struct strbuf line = STRBUF_INIT;
	size_t n = 0, i;
	int r = 0;

	if (*m->commit)
		lines[n++] = xasprintf("commit %s\n", m->commit);
	if (*m->tree)
		lines[n++] = xasprintf("tree %s\n", m->tree);
	if (*m->recipe_hash)
		lines[n++] = xasprintf("recipe %s\n", m->recipe_hash);
	for (i = 0; i < m->nfiles; i++) {
		const struct db_manifest_file *f = &m->files[i];

		if (!f->name || !*f->name || f->size < 0 || !is_hex(f->sha256, 64)) {
			r = err_set(-EINVAL, "manifest: file '%s': a name, a size and a sha256 of "
				    "64 hex digits are expected", f->name ? f->name : "");
			goto out;
		}
		strbuf_reset(&line);
		strbuf_adds(&line, "file ");
		add_name(&line, f->name);
		strbuf_addf(&line, " %lld %s\n", (long long)f->size, f->sha256);
		lines[n++] = strbuf_detach(&line);
	}
	if (n == 0) {
		r = err_set(-EINVAL, "manifest: no build and no file");
		goto out;
	}
	qsort(lines, n, sizeof(*lines), cmp_line);
	strbuf_adds(out, MANIFEST_HEADER);
	for (i = 0; i < n; i++)
		strbuf_adds(out, lines[i]);
out:
	for (i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	strbuf_release(&line);
	return r;
}

/* Two files of one name, whatever their bytes. */
static int check_names(const struct db_manifest *m)
{
	size_t i, k;

	for (i = 0; i < m->nfiles; i++) {
		for (k = 0; k < i; k++) {
			if (m->files[i].name && m->files[k].name &&
			    !strcmp(m->files[i].name, m->files[k].name))
				return err_set(-EINVAL, "manifest: two files named '%s'",
					       m->files[i].name);
		}
	}
	return 0;
}

int db_manifest_hash(char out[65], const struct db_manifest *m)
{
	struct strbuf text = STRBUF_INIT;
	int r;

	out[0] = '\0';
	if (*m->commit && !is_hex(m->commit, 40))
		return err_set(-EINVAL, "manifest: commit '%s' is not 40 hex digits", m->commit);
	if (*m->tree && !is_hex(m->tree, 40))
		return err_set(-EINVAL, "manifest: tree '%s' is not 40 hex digits", m->tree);
	if (*m->recipe_hash && !is_hex(m->recipe_hash, 64))
		return err_set(-EINVAL, "manifest: recipe '%s' is not 64 hex digits",
			       m->recipe_hash);
	r = check_names(m);
	if (r == 0)
		r = manifest_text(&text, m);
	if (r == 0)
		r = sha256_hex(out, text.buf, text.len);
	strbuf_release(&text);
	return r;
}

int db_manifest_of_build(struct db_manifest *out, const struct db_build *b)
{
	struct db_manifest m;
	size_t i;
	int r;

	memset(out, 0, sizeof(*out));
	memset(&m, 0, sizeof(m));
	m.build_id = b->id;
	snprintf(m.commit, sizeof(m.commit), "%s", b->commit);
	snprintf(m.tree, sizeof(m.tree), "%s", b->tree);
	snprintf(m.recipe_hash, sizeof(m.recipe_hash), "%s", b->recipe_hash);
	for (i = 0; i < b->nartifacts; i++)
		db_manifest_add(&m, b->artifacts[i].name, b->artifacts[i].artifact.size,
				b->artifacts[i].artifact.sha256);
	r = db_manifest_hash(m.hash, &m);
	if (r < 0) {
		r = err_set(r, "build %lld: %s", (long long)b->id, err_last());
		db_manifest_release(&m);
		return r;
	}
	*out = m;
	return 0;
}

int db_manifest_put(struct db *db, const struct db_manifest *m)
{
	char hash[65], now[TIME_ISO_LEN];
	size_t i;
	int r;

	r = db_manifest_hash(hash, m);
	if (r < 0)
		return r;
	if (strcmp(hash, m->hash))
		return err_set(-EINVAL, "manifest '%s': its files and build hash to '%s'",
			       m->hash, hash);
	time_now_iso(now);
	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_run(db, "INSERT INTO manifests (hash, build_id, commit_oid, tree_oid,"
		   " recipe_hash, created_at) VALUES (?, nullif(?, 0), ?, ?, ?, ?)"
		   " ON CONFLICT (hash) DO NOTHING",
		   DB_ARGS(DB_TEXT(m->hash), DB_INT(m->build_id),
			   DB_TEXT(*m->commit ? m->commit : NULL), DB_TEXT(*m->tree ? m->tree : NULL),
			   DB_TEXT(*m->recipe_hash ? m->recipe_hash : NULL), DB_TEXT(now)),
		   "recording a manifest");
	for (i = 0; i < m->nfiles && r == 0; i++)
		r = db_run(db, "INSERT INTO manifest_files (manifest, name, size, sha256)"
			   " VALUES (?, ?, ?, ?) ON CONFLICT (manifest, name) DO NOTHING",
			   DB_ARGS(DB_TEXT(m->hash), DB_TEXT(m->files[i].name),
				   DB_INT(m->files[i].size), DB_TEXT(m->files[i].sha256)),
			   "recording a manifest's files");
	return db_end(db, r);
}

static void file_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_manifest_file *f = elem;

	f->name = db_column_strdup(st, 0);
	f->size = sqlite3_column_int64(st, 1);
	db_column_copy(f->sha256, sizeof(f->sha256), st, 2);
}

static void file_release(void *elem)
{
	free(((struct db_manifest_file *)elem)->name);
}

static void manifest_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_manifest *m = elem;

	m->build_id = sqlite3_column_int64(st, 0);
	db_column_copy(m->commit, sizeof(m->commit), st, 1);
	db_column_copy(m->tree, sizeof(m->tree), st, 2);
	db_column_copy(m->recipe_hash, sizeof(m->recipe_hash), st, 3);
	db_column_copy(m->created_at, sizeof(m->created_at), st, 4);
}

int db_manifest_load(struct db *db, struct db_manifest *out, const char *hash)
{
	static const struct db_rows how = {
		.size = sizeof(struct db_manifest_file), .max = SIZE_MAX, .fill = file_fill,
		.release = file_release, .doing = "loading a manifest's files",
	};
	struct db_manifest m;
	int r;

	memset(out, 0, sizeof(*out));
	memset(&m, 0, sizeof(m));
	r = db_run_row(db, manifest_fill, &m, "SELECT coalesce(build_id, 0),"
		       " coalesce(commit_oid, ''), coalesce(tree_oid, ''),"
		       " coalesce(recipe_hash, ''), created_at FROM manifests WHERE hash = ?",
		       DB_ARGS(DB_TEXT(hash)), "loading a manifest");
	if (r == -ENOENT)
		return err_set(-ENOENT, "no manifest '%s' in '%s'", hash, db->path);
	if (r < 0)
		return r;
	snprintf(m.hash, sizeof(m.hash), "%s", hash);
	r = db_rows_select(db, "SELECT name, size, sha256 FROM manifest_files"
			   " WHERE manifest = ? ORDER BY name", DB_ARGS(DB_TEXT(hash)), &how,
			   &m.files, &m.nfiles);
	if (r < 0)
		return r;
	*out = m;
	return 0;
}
