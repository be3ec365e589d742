/*
 * A commit's tree written into a fresh directory; see builder.h.
 *
 * The tree is walked here rather than through git_checkout_tree, which on a
 * bare repository refuses a tree with a submodule. Every name is created
 * relative to its parent's descriptor with O_EXCL and O_NOFOLLOW (mkdirat,
 * openat, symlinkat), so a hostile tree (a duplicate name, a symbolic link
 * followed by a directory of the same name, "..", ".git") fails instead of
 * writing outside dir. Blobs go through the filters .gitattributes asks for
 * (eol, ident), with the attributes read from the commit itself, as git
 * archive does; symbolic link targets are written as they are.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "builder.h"
#include "common.h"
#include "git-internal.h"

struct walk {
	git_repository *repo;
	git_blob_filter_options filter;
	struct strbuf path;          /* of the entry, relative to dir */
	const char *rev;
	const char *dir;
};

static bool is_safe_name(const char *name)
{
	return *name && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
	       strcasecmp(name, ".git") != 0 && !strchr(name, '/');
}

static int write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* code is a negative errno from creating or writing the current path. A
 * name that exists already can only be one the tree holds twice. */
static int os_fail(struct walk *w, int code, const char *what)
{
	if (code == -EEXIST)
		return err_set(-EPROTO, "checkout of '%s': '%s' appears twice in the tree",
			       w->rev, w->path.buf);
	return err_set(code, "checkout of '%s' into '%s': %s '%s': %s", w->rev, w->dir,
		       what, w->path.buf, strerror(-code));
}

static int write_blob(struct walk *w, int dfd, const char *name, const git_oid *id,
		      bool exec)
{
	git_buf buf = { NULL, 0, 0 };
	git_blob *blob = NULL;
	int fd = -1, e, ret = 0;

	e = git_blob_lookup(&blob, w->repo, id);
	if (e == 0)
		e = git_blob_filter(&buf, blob, w->path.buf, &w->filter);
	if (e < 0) {
		ret = err_set(-EIO, "git: checkout of '%s': blob '%s': %s", w->rev,
			      w->path.buf, builder_git_msg());
		goto out;
	}
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    exec ? 0777 : 0666);
	if (fd < 0) {
		ret = os_fail(w, -errno, "cannot create");
		goto out;
	}
	ret = write_all(fd, buf.ptr, buf.size);
	if (ret == 0 && close(fd) < 0)
		ret = -errno;
	else if (ret < 0)
		close(fd);
	if (ret < 0)
		ret = os_fail(w, ret, "cannot write");
out:
	git_buf_dispose(&buf);
	git_blob_free(blob);
	return ret;
}

static int write_link(struct walk *w, int dfd, const char *name, const git_oid *id)
{
	git_blob *blob = NULL;
	char *target = NULL;
	git_object_size_t size;
	int e, ret = 0;

	e = git_blob_lookup(&blob, w->repo, id);
	if (e < 0) {
		ret = err_set(-EIO, "git: checkout of '%s': link '%s': %s", w->rev,
			      w->path.buf, builder_git_msg());
		goto out;
	}
	size = git_blob_rawsize(blob);
	if (size == 0 || size >= PATH_MAX ||
	    memchr(git_blob_rawcontent(blob), '\0', (size_t)size)) {
		ret = err_set(-EPROTO, "checkout of '%s': link '%s' has no valid target",
			      w->rev, w->path.buf);
		goto out;
	}
	target = xstrndup(git_blob_rawcontent(blob), (size_t)size);
	if (symlinkat(target, dfd, name) < 0)
		ret = os_fail(w, -errno, "cannot create link");
out:
	free(target);
	git_blob_free(blob);
	return ret;
}

static int write_tree(struct walk *w, int dfd, const git_tree *tree, size_t depth)
{
	size_t i, n = git_tree_entrycount(tree), len = w->path.len;
	git_tree *sub = NULL;
	int fd = -1, e, ret = 0;

	if (depth > builder_git_limits.depth)
		return err_set(-EPROTO, "checkout of '%s': '%s' is nested deeper than %zu "
			       "directories", w->rev, w->path.buf, builder_git_limits.depth);
	for (i = 0; i < n && ret == 0; i++) {
		const git_tree_entry *te = git_tree_entry_byindex(tree, i);
		const char *name = git_tree_entry_name(te);

		w->path.len = len;
		w->path.buf[len] = '\0';
		if (len)
			strbuf_addch(&w->path, '/');
		strbuf_adds(&w->path, name);
		if (!is_safe_name(name)) {
			ret = err_set(-EPROTO, "checkout of '%s': unsafe path '%s'", w->rev,
				      w->path.buf);
			break;
		}
		switch (git_tree_entry_filemode(te)) {
		case GIT_FILEMODE_BLOB:
		case GIT_FILEMODE_BLOB_EXECUTABLE:
			ret = write_blob(w, dfd, name, git_tree_entry_id(te),
					 git_tree_entry_filemode(te) == GIT_FILEMODE_BLOB_EXECUTABLE);
			break;
		case GIT_FILEMODE_LINK:
			ret = write_link(w, dfd, name, git_tree_entry_id(te));
			break;
		case GIT_FILEMODE_COMMIT:
			/* a submodule: an empty directory, as in git archive */
			if (mkdirat(dfd, name, 0777) < 0)
				ret = os_fail(w, -errno, "cannot create");
			break;
		case GIT_FILEMODE_TREE:
			e = git_tree_lookup(&sub, w->repo, git_tree_entry_id(te));
			if (e < 0) {
				ret = err_set(-EIO, "git: checkout of '%s': tree '%s': %s",
					      w->rev, w->path.buf, builder_git_msg());
				break;
			}
			if (mkdirat(dfd, name, 0777) < 0 ||
			    (fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC)) < 0) {
				ret = os_fail(w, -errno, "cannot create");
			} else {
				ret = write_tree(w, fd, sub, depth + 1);
				close(fd);
				fd = -1;
			}
			git_tree_free(sub);
			sub = NULL;
			break;
		default:
			ret = err_set(-EPROTO, "checkout of '%s': '%s' has mode %06o",
				      w->rev, w->path.buf, git_tree_entry_filemode(te));
			break;
		}
	}
	w->path.len = len;
	w->path.buf[len] = '\0';
	return ret;
}

/* mkdir -p of every directory above path. */
static int mkdir_parents(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *parent;
	int r;

	if (!slash || slash == path)
		return 0;
	parent = xstrndup(path, (size_t)(slash - path));
	r = fs_mkdir_p(parent);
	free(parent);
	return r;
}

int builder_checkout(struct builder_repo *r, const char *oid, const char *dir)
{
	struct walk w = { .repo = r->repo, .path = STRBUF_INIT, .rev = oid, .dir = dir };
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	bool created = false;
	int fd = -1, e, ret;

	ret = builder_git_commit_lookup(&commit, r->repo, oid);
	if (ret < 0)
		goto out;
	e = git_commit_tree(&tree, commit);
	if (e < 0) {
		ret = err_set(-EIO, "git: tree of '%s': %s", oid, builder_git_msg());
		goto out;
	}
	ret = mkdir_parents(dir);
	if (ret < 0)
		goto out;
	if (mkdir(dir, 0777) < 0) {
		ret = err_set(-errno, "checkout directory '%s': %s", dir, strerror(errno));
		goto out;
	}
	created = true;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = err_set(-errno, "checkout directory '%s': %s", dir, strerror(errno));
		goto out;
	}
	strbuf_grow(&w.path, 256);
	git_blob_filter_options_init(&w.filter, GIT_BLOB_FILTER_OPTIONS_VERSION);
	/* The default flags hold CHECK_FOR_BINARY, with which git_blob_filter
	 * gives a binary blob (a NUL in its first 8000 bytes) as nothing at
	 * all: every committed binary would be checked out empty. Without it
	 * the filters decide, as git's own checkout does (text=auto passes a
	 * binary through). */
	w.filter.flags &= ~(uint32_t)GIT_BLOB_FILTER_CHECK_FOR_BINARY;
	w.filter.flags |= GIT_BLOB_FILTER_ATTRIBUTES_FROM_COMMIT;
	git_oid_cpy(&w.filter.attr_commit_id, git_commit_id(commit));
	ret = write_tree(&w, fd, tree, 0);
out:
	if (fd >= 0)
		close(fd);
	if (ret < 0 && created)
		fs_rm_rf(dir);
	strbuf_release(&w.path);
	git_tree_free(tree);
	git_commit_free(commit);
	return ret;
}
