/*
 * Artifact patterns expanded under a build directory; see builder.h. The
 * walk is ours, not glob(3)'s: glob follows a symbolic link at any
 * directory component, and a build that made "out" a link to /proc or to
 * the agent's own directory would have us read there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builder.h"
#include "common.h"

/* The expansion of one pattern: its components, the matches so far. */
struct walk {
	char **comps;
	size_t ncomps;
	char **paths;
	size_t n, alloc;
	size_t cap;                  /* w->n stops here: the bound, within a pattern */
	size_t max;                  /* the bound, for messages */
};

/* Entries of one directory a wildcard component may match: what a build
 * can make us hold while walking, before the bound on files applies. */
#define BUILDER_GLOB_ENTRIES_MAX 100000

static bool has_magic(const char *comp)
{
	return strpbrk(comp, "*?[\\") != NULL;
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

static int walk_dir(struct walk *w, int fd, const char *prefix, size_t depth);

/* name, in the directory fd (prefix its path, "" at the top), as the match
 * of component depth: kept when it is the last and a regular file, walked
 * into when it is a directory before the last. A symbolic link is refused,
 * at any component; a FIFO, device or socket is refused as an artifact. */
static int walk_entry(struct walk *w, int fd, const char *prefix, size_t depth,
		      const char *name)
{
	char *path = xasprintf("%s%s", prefix, name);
	bool last = depth + 1 == w->ncomps;
	struct stat st;
	char *sub_prefix;
	int r = 0, sub;

	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			r = err_set(-errno, "'%s': %s", path, strerror(errno));
		goto out;
	}
	if (S_ISLNK(st.st_mode)) {
		r = err_set(-ELOOP, "'%s' is a symbolic link: artifacts are not followed out of "
			    "the build directory", path);
	} else if (last && S_ISREG(st.st_mode)) {
		if (w->n == w->cap) {
			r = err_set(-E2BIG, "more than %zu files", w->max);
			goto out;
		}
		if (w->n == w->alloc) {
			w->alloc = w->alloc ? 2 * w->alloc : 16;
			w->paths = xrealloc(w->paths, w->alloc * sizeof(*w->paths));
		}
		w->paths[w->n++] = path;
		path = NULL;
	} else if (last && !S_ISDIR(st.st_mode)) {
		r = err_set(-EINVAL, "'%s' is %s: only regular files are artifacts", path,
			    fs_kind(st.st_mode));
	} else if (!last && S_ISDIR(st.st_mode)) {
		sub = fs_open_beneath(fd, name, true);
		if (sub < 0) {
			r = sub;
			goto out;
		}
		sub_prefix = xasprintf("%s/", path);
		r = walk_dir(w, sub, sub_prefix, depth + 1);
		free(sub_prefix);
		close(sub);
	}
out:
	free(path);
	return r;
}

/* Component depth of the pattern in the directory fd: a literal name is
 * looked up, a pattern matched (fnmatch, FNM_PERIOD as glob) against each
 * entry, in the order of their names. */
static int walk_dir(struct walk *w, int fd, const char *prefix, size_t depth)
{
	const char *comp = w->comps[depth];
	char **names = NULL;
	size_t n = 0, alloc = 0, i;
	struct dirent *de;
	DIR *d;
	int r = 0, dfd;

	if (!has_magic(comp))
		return walk_entry(w, fd, prefix, depth, comp);
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = dfd < 0 ? NULL : fdopendir(dfd);
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return err_set(-EIO, "cannot read the directory '%s'", *prefix ? prefix : ".");
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fnmatch(comp, de->d_name, FNM_PERIOD) != 0)
			continue;
		if (n == BUILDER_GLOB_ENTRIES_MAX) {
			r = err_set(-E2BIG, "more than %d entries of '%s' match '%s'",
				    BUILDER_GLOB_ENTRIES_MAX, *prefix ? prefix : ".", comp);
			break;
		}
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			names = xrealloc(names, alloc * sizeof(*names));
		}
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), path_cmp);
	for (i = 0; i < n && r == 0; i++)
		r = walk_entry(w, fd, prefix, depth, names[i]);
	free_paths(names, n);
	return r;
}

/* Appends what pattern matches under dirfd to w->paths. */
static int expand(struct walk *w, int dirfd, const char *pattern)
{
	char *copy = xstrdup(pattern), *c, *save = NULL;
	int r = 0;

	w->comps = NULL;
	w->ncomps = 0;
	for (c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			r = err_set(-EXDEV, "pattern '%s' leaves the build directory ('..')",
				    pattern);
			goto out;
		}
		w->comps = xrealloc(w->comps, (w->ncomps + 1) * sizeof(*w->comps));
		w->comps[w->ncomps++] = c;
	}
	if (w->ncomps)
		r = walk_dir(w, dirfd, "", 0);
out:
	free(w->comps);
	free(copy);
	return r;
}

/*
 * Each pattern is walked from dir, one component at a time, with openat
 * and no link followed; trailing slashes of dir do not count. Only regular
 * files are kept; a directory matched by the last component is passed
 * over. The bound applies to distinct files.
 */
int builder_glob(char ***out, size_t *out_n, const char *dir, const char *const *patterns,
		 size_t npatterns, size_t max)
{
	struct walk w = { .max = max };
	size_t i, j, before, kept;
	int dirfd, r = 0;

	*out = NULL;
	*out_n = 0;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return err_set(-errno, "cannot read '%s': %s", dir, strerror(errno));
	for (i = 0; i < npatterns && r == 0; i++) {
		before = w.n;
		/* Within one pattern matches are distinct: w.max holds for it. */
		w.cap = before + max + 1;
		r = expand(&w, dirfd, patterns[i]);
		if (r < 0) {
			r = err_set(r, "pattern '%s' under '%s': %s", patterns[i], dir, err_last());
			break;
		}
		if (w.n == before) {
			r = err_set(-ENOENT, "pattern '%s' matches no regular file under '%s'",
				    patterns[i], dir);
			break;
		}
		/* Sort and dedupe as we go, so the bound holds between patterns. */
		qsort(w.paths, w.n, sizeof(*w.paths), path_cmp);
		for (j = 1, kept = 1; j < w.n; j++) {
			if (strcmp(w.paths[j], w.paths[kept - 1]) == 0)
				free(w.paths[j]);
			else
				w.paths[kept++] = w.paths[j];
		}
		w.n = kept;
		if (w.n > max)
			r = err_set(-E2BIG, "patterns under '%s' match more than %zu files", dir,
				    max);
	}
	close(dirfd);
	if (r < 0) {
		free_paths(w.paths, w.n);
		return r;
	}
	*out = w.paths;
	*out_n = w.n;
	return 0;
}
