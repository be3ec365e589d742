/*
 * Writing history: commits made from a directory of files, without a work
 * tree or an index. perfd uses it to turn the demo's shipped steps into a
 * real repository that the agent then watches like any other.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <git2.h>

#include "builder.h"
#include "common.h"

#define HISTORY_FILE_MAX (16 * 1024 * 1024)

static int git_fail(const char *what, const char *obj)
{
	const git_error *e = git_error_last();

	return err_set(-EIO, "%s '%s': %s", what, obj, e && e->message ? e->message : "failed");
}

static int read_all(struct strbuf *sb, const char *path)
{
	char buf[65536];
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return err_set(-errno, "cannot read '%s': %s", path, strerror(errno));
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		if (sb->len + n > HISTORY_FILE_MAX) {
			fclose(f);
			return err_set(-EFBIG, "'%s' is over 16 MiB", path);
		}
		strbuf_add(sb, buf, n);
	}
	fclose(f);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Writes the tree of dir into the repository; out receives its oid. */
static int write_tree(git_oid *out, git_repository *repo, const char *dir)
{
	git_treebuilder *tb = NULL;
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, i;
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (!d)
		return err_set(-errno, "cannot read '%s': %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, ".git"))
			continue;
		names = xrealloc(names, (n + 1) * sizeof(char *));
		names[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(char *), name_cmp);
	if (git_treebuilder_new(&tb, repo, NULL) < 0) {
		r = git_fail("tree of", dir);
		goto out;
	}
	for (i = 0; i < n && r == 0; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]);
		struct stat st;
		git_oid oid;

		if (lstat(path, &st) < 0) {
			r = err_set(-errno, "'%s': %s", path, strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			r = write_tree(&oid, repo, path);
			if (r == 0 && git_treebuilder_insert(NULL, tb, names[i], &oid,
							     GIT_FILEMODE_TREE) < 0)
				r = git_fail("tree entry", path);
		} else if (S_ISREG(st.st_mode)) {
			struct strbuf sb = STRBUF_INIT;

			r = read_all(&sb, path);
			if (r == 0 && git_blob_create_from_buffer(&oid, repo, sb.buf, sb.len) < 0)
				r = git_fail("blob of", path);
			if (r == 0 && git_treebuilder_insert(NULL, tb, names[i], &oid,
							     st.st_mode & 0111 ? GIT_FILEMODE_BLOB_EXECUTABLE :
							     GIT_FILEMODE_BLOB) < 0)
				r = git_fail("tree entry", path);
			strbuf_release(&sb);
		}
		free(path);
	}
	if (r == 0 && git_treebuilder_write(out, tb) < 0)
		r = git_fail("tree of", dir);
out:
	git_treebuilder_free(tb);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

static int open_or_init(git_repository **out, const char *repo_dir)
{
	*out = NULL;
	git_libgit2_init();
	if (git_repository_open_bare(out, repo_dir) == 0)
		return 0;
	if (git_repository_init(out, repo_dir, 1) < 0)
		return git_fail("cannot create the repository", repo_dir);
	return 0;
}

int builder_history_commit(char out[BUILDER_OID_HEX], const char *repo_dir,
			   const char *branch, const char *src_dir, const char *message)
{
	git_repository *repo = NULL;
	git_signature *sig = NULL;
	git_commit *parent = NULL;
	git_tree *tree = NULL;
	git_oid tree_oid, commit_oid, parent_oid;
	char ref[300];
	int r;

	out[0] = '\0';
	snprintf(ref, sizeof(ref), "refs/heads/%s", branch);
	r = open_or_init(&repo, repo_dir);
	if (r < 0)
		return r;
	r = write_tree(&tree_oid, repo, src_dir);
	if (r < 0)
		goto out;
	if (git_tree_lookup(&tree, repo, &tree_oid) < 0 ||
	    git_signature_now(&sig, "perfd demo", "demo@perfd.invalid") < 0) {
		r = git_fail("commit on", branch);
		goto out;
	}
	if (git_reference_name_to_id(&parent_oid, repo, ref) == 0 &&
	    git_commit_lookup(&parent, repo, &parent_oid) < 0) {
		r = git_fail("parent of", branch);
		goto out;
	}
	if (git_commit_create_v(&commit_oid, repo, ref, sig, sig, NULL, message, tree,
				parent ? 1 : 0, parent) < 0) {
		r = git_fail("commit on", branch);
		goto out;
	}
	git_oid_tostr(out, BUILDER_OID_HEX, &commit_oid);
out:
	git_commit_free(parent);
	git_tree_free(tree);
	git_signature_free(sig);
	git_repository_free(repo);
	return r;
}

int builder_history_branch(const char *repo_dir, const char *branch, const char *oid)
{
	git_repository *repo = NULL;
	git_reference *ref = NULL;
	git_oid id;
	char name[300];
	int r;

	r = open_or_init(&repo, repo_dir);
	if (r < 0)
		return r;
	snprintf(name, sizeof(name), "refs/heads/%s", branch);
	if (git_oid_fromstr(&id, oid) < 0 ||
	    git_reference_create(&ref, repo, name, &id, 1, "perfd demo") < 0)
		r = git_fail("branch", branch);
	git_reference_free(ref);
	git_repository_free(repo);
	return r;
}
