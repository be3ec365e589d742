/* Artifact patterns expanded under a build directory; see builder.h. */
#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builder.h"
#include "common.h"

/* The first len bytes of dir with glob's special characters escaped, so
 * only the patterns expand. */
static char *escape_dir(const char *dir, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;

	for (p = dir; p < dir + len; p++) {
		if (strchr("*?[]\\", *p))
			strbuf_addch(&sb, '\\');
		strbuf_addch(&sb, *p);
	}
	return strbuf_detach(&sb);
}

static int path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_paths(char **paths, size_t n)
{
	size_t i;

	if (!paths)
		return;
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

/*
 * glob(3) runs on "dir/pattern" and the prefix "dir/" is cut from what it
 * returns, so nothing depends on the working directory; trailing slashes
 * of dir do not count. Symbolic links are
 * not artifacts: only what lstat calls a regular file is kept. The bound
 * applies to distinct files.
 */
int builder_glob(char ***out, size_t *out_n, const char *dir, const char *const *patterns,
		 size_t npatterns, size_t max)
{
	char *edir, *full = NULL, **paths = NULL;
	size_t n = 0, alloc = 0, dlen = strlen(dir), i, j, kept;
	glob_t g;
	bool have_g = false;
	struct stat st;
	int e, ret = 0;

	*out = NULL;
	*out_n = 0;
	while (dlen > 0 && dir[dlen - 1] == '/')
		dlen--;
	edir = escape_dir(dir, dlen);
	for (i = 0; i < npatterns; i++) {
		full = xasprintf("%s/%s", edir, patterns[i]);
		e = glob(full, 0, NULL, &g);
		have_g = true;
		if (e == GLOB_NOSPACE)
			xalloc_die();       /* glob's word for out of memory */
		if (e != 0 && e != GLOB_NOMATCH) {
			ret = err_set(-EIO, "pattern '%s' under '%s': cannot read a directory",
				      patterns[i], dir);
			goto out;
		}
		kept = 0;
		for (j = 0; e == 0 && j < g.gl_pathc; j++) {
			const char *p = g.gl_pathv[j];

			if (strncmp(p, dir, dlen) != 0 || p[dlen] != '/')
				continue;
			if (lstat(p, &st) < 0 || !S_ISREG(st.st_mode))
				continue;
			if (n == alloc) {
				alloc = alloc ? 2 * alloc : 16;
				paths = xrealloc(paths, alloc * sizeof(*paths));
			}
			paths[n++] = xstrdup(p + dlen + 1);
			kept++;
		}
		if (kept == 0) {
			ret = err_set(-ENOENT, "pattern '%s' matches no regular file under '%s'",
				      patterns[i], dir);
			goto out;
		}
		globfree(&g);
		have_g = false;
		free(full);
		full = NULL;

		/* Sort and dedupe as we go, so the bound holds between patterns. */
		qsort(paths, n, sizeof(*paths), path_cmp);
		for (j = 1, kept = n ? 1 : 0; j < n; j++) {
			if (strcmp(paths[j], paths[kept - 1]) == 0)
				free(paths[j]);
			else
				paths[kept++] = paths[j];
		}
		n = kept;
		if (n > max) {
			ret = err_set(-E2BIG, "patterns under '%s' match more than %zu files",
				      dir, max);
			goto out;
		}
	}
	*out = paths;
	*out_n = n;
	paths = NULL;
	n = 0;
out:
	if (have_g)
		globfree(&g);
	free_paths(paths, n);
	free(full);
	free(edir);
	return ret;
}
