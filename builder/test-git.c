/*
 * Tests of the git part of builder/ and of builder_glob, on repositories the
 * git command line makes in a scratch directory: mirrors of file:// URLs and
 * plain paths, heads and pull heads, force-push and prune, what a handle
 * keeps open across fetches (the refresh), commit facts,
 * merge bases, checkout against git archive, the error codes and the bounds.
 *
 * With PERFD_TEST_GIT_URL set (tests/t0150-git-http.sh) it runs the HTTP
 * group instead: a fetch from that URL, whose heads must be
 * PERFD_TEST_GIT_HEADS ("name oid" lines) and whose commit
 * PERFD_TEST_GIT_REV is checked out into PERFD_TEST_GIT_CHECKOUT for the
 * script to compare with git archive.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "builder.h"
#include "common.h"
#include "git-internal.h"

static char tmp[] = "/tmp/perfd-test-git-XXXXXX";

/* Like assert_int_equal(e, want), showing err_last() when it fails. */
#define assert_ret(e, want) do { \
		int r_ = (e); \
		if (r_ != (want)) \
			print_error("%s = %d (%s)\n", #e, r_, err_last()); \
		assert_int_equal(r_, (want)); \
	} while (0)

/* Runs a shell command in tmp; returns its exit status. */
static int sh(const char *fmt, ...) PRINTF_LIKE(1, 2);
static int sh(const char *fmt, ...)
{
	struct strbuf cmd = STRBUF_INIT;
	va_list ap;
	int st;

	strbuf_addf(&cmd, "cd '%s' && { ", tmp);
	va_start(ap, fmt);
	strbuf_vaddf(&cmd, fmt, ap);
	va_end(ap);
	/* stdin from /dev/null: some git commands read it when it is open. */
	strbuf_adds(&cmd, "; } </dev/null");
	st = system(cmd.buf);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		print_error("command failed (status %d): %s\n", st, cmd.buf);
	strbuf_release(&cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The first line a shell command prints in tmp, the caller's. */
static char *sh_out(const char *fmt, ...) PRINTF_LIKE(1, 2);
static char *sh_out(const char *fmt, ...)
{
	struct strbuf cmd = STRBUF_INIT;
	char line[4096] = "";
	va_list ap;
	FILE *f;

	strbuf_addf(&cmd, "cd '%s' && { ", tmp);
	va_start(ap, fmt);
	strbuf_vaddf(&cmd, fmt, ap);
	va_end(ap);
	strbuf_adds(&cmd, "; } </dev/null");
	f = popen(cmd.buf, "r");
	assert_non_null(f);
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	assert_int_equal(pclose(f), 0);
	strbuf_release(&cmd);
	line[strcspn(line, "\n")] = '\0';
	return xstrdup(line);
}

static char *path(const char *name)
{
	return xasprintf("%s/%s", tmp, name);
}

static char *src_rev(const char *rev)
{
	return sh_out("git -C src rev-parse '%s'", rev);
}

static void assert_rev(const char *oid, const char *repo, const char *rev)
{
	char *want = sh_out("git -C %s rev-parse '%s'", repo, rev);

	assert_string_equal(oid, want);
	free(want);
}

static void set_identity(void)
{
	setenv("HOME", tmp, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "Ada Lovelace", 1);
	setenv("GIT_AUTHOR_EMAIL", "ada@example.org", 1);
	setenv("GIT_COMMITTER_NAME", "Charles Babbage", 1);
	setenv("GIT_COMMITTER_EMAIL", "cb@example.org", 1);
}

/*
 * src: main (c1 -> c2, c2 with a gitlink), release/1.0 (c1 -> c3),
 * release/2.0 at c2, feature/x (c2 -> c4), refs/pull/7/head at c4, and
 * lonely, a root commit of its own. c1 has an executable, a symlink, a
 * nested directory, a file .gitattributes asks to filter (ident) and a
 * binary file (NUL bytes: libgit2 skips filters on it).
 */
static int setup_repos(void **state)
{
	/* Relative paths below are relative to tmp, in the shell and here. */
	if (!mkdtemp(tmp) || chdir(tmp) < 0)
		return -1;
	set_identity();
	return sh("git init -q -b main src && cd src && "
		  "printf 'hello\\n' >a.txt && mkdir -p bin dir/deep && "
		  "printf '#!/bin/sh\\necho hi\\n' >bin/run.sh && chmod 755 bin/run.sh && "
		  "printf 'x' >dir/deep/f && ln -s a.txt link && "
		  "printf '$Id$\\n' >v.id && printf '*.id ident\\n' >.gitattributes && "
		  "printf 'ELF\\000\\001\\377 a binary\\n' >prog.bin && "
		  "git add -A && GIT_COMMITTER_DATE='1700000000 +0000' "
		  "git commit -q -m 'first commit' -m 'body of the first' && "
		  "git branch release/1.0 && git branch feature/x && "
		  "printf 'hello again\\n' >a.txt && git add a.txt && "
		  "git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),sub && "
		  "git commit -q -m 'second: change a' -m 'more' && "
		  "git branch -f release/2.0 && git branch -f feature/x && "
		  "git checkout -q release/1.0 && printf 'r\\n' >r.txt && git add r.txt && "
		  "git commit -q -m 'release fix' && "
		  "git checkout -q feature/x && printf 'f\\n' >f.txt && git add f.txt && "
		  "git commit -q -m 'feature work' && "
		  "git update-ref refs/pull/7/head feature/x && "
		  "git update-ref refs/heads/lonely $(git commit-tree -m lonely "
		  "$(git mktree </dev/null)) && git checkout -q main") == 0 ? 0 : -1;
}

static int teardown_repos(void **state)
{
	sh("cd / && rm -rf '%s'", tmp);
	return 0;
}

static struct builder_repo *mirror(const char *name, const char *url)
{
	struct builder_repo *r = NULL;
	char *dir = path(name);

	assert_ret(builder_repo_open(&r, dir, url), 0);
	assert_non_null(r);
	free(dir);
	return r;
}

/* The heads as "name oid[ pull N]" lines, to compare in one assertion. */
static char *heads_text(struct builder_repo *r, const char *const *patterns, size_t n,
			bool pulls)
{
	struct strbuf sb = STRBUF_INIT;
	struct builder_head *h = NULL;
	size_t nh = 0, i;

	assert_ret(builder_repo_heads(r, &h, &nh, patterns, n, pulls), 0);
	for (i = 0; i < nh; i++) {
		strbuf_addf(&sb, "%s %s", h[i].name, h[i].oid);
		if (h[i].is_pull)
			strbuf_addf(&sb, " pull %d", h[i].pull);
		strbuf_addch(&sb, '\n');
	}
	builder_heads_free(h, nh);
	return strbuf_detach(&sb);
}

static char *expect_heads(const char *repo, const char *const *refs, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	for (i = 0; i < n; i++) {
		char *oid = sh_out("git -C %s rev-parse 'refs/%s'", repo, refs[i]);
		const char *name = strncmp(refs[i], "heads/", 6) == 0 ? refs[i] + 6 : refs[i];
		int pull;

		if (sscanf(refs[i], "pull/%d/head", &pull) == 1)
			strbuf_addf(&sb, "pull/%d %s pull %d\n", pull, oid, pull);
		else
			strbuf_addf(&sb, "%s %s\n", name, oid);
		free(oid);
	}
	return strbuf_detach(&sb);
}

static void assert_heads(struct builder_repo *r, const char *const *patterns, size_t np,
			 bool pulls, const char *repo, const char *const *want, size_t nw)
{
	char *got = heads_text(r, patterns, np, pulls);
	char *exp = expect_heads(repo, want, nw);

	assert_string_equal(got, exp);
	free(got);
	free(exp);
}

static void test_file_url_heads(void **state)
{
	const char *pats[] = { "main", "release/*" };
	const char *want[] = { "heads/main", "heads/release/1.0", "heads/release/2.0" };
	char *url = xasprintf("file://%s/src", tmp);
	struct builder_repo *r = mirror("m-file", url);

	assert_ret(builder_repo_fetch(r, 0), 0);
	assert_heads(r, pats, 2, false, "src", want, 3);
	assert_int_equal(sh("test \"$(git -C m-file rev-parse --is-bare-repository)\" = true"), 0);
	builder_repo_free(r);
	free(url);
}

static void test_plain_path_and_reopen(void **state)
{
	const char *all[] = { "*" };
	const char *want[] = { "heads/feature/x", "heads/lonely", "heads/main",
			       "heads/release/1.0", "heads/release/2.0" };
	char *src = path("src"), *url, *want_url = xasprintf("file://%s/src", tmp);
	struct builder_repo *r = mirror("m-path", src);

	assert_ret(builder_repo_fetch(r, 0), 0);
	assert_heads(r, all, 1, false, "src", want, 5);
	builder_repo_free(r);

	/* Reopening with another URL updates origin; the plain path is kept
	 * as a file:// URL. */
	r = mirror("m-path", "http://127.0.0.1:1/other.git");
	builder_repo_free(r);
	url = sh_out("git -C m-path config remote.origin.url");
	assert_string_equal(url, "http://127.0.0.1:1/other.git");
	free(url);
	r = mirror("m-path", src);
	url = sh_out("git -C m-path config remote.origin.url");
	assert_string_equal(url, want_url);
	assert_heads(r, all, 1, false, "src", want, 5);
	builder_repo_free(r);
	free(url);
	free(want_url);
	free(src);
}

static void test_pull_heads(void **state)
{
	const char *pats[] = { "main" };
	const char *only_main[] = { "heads/main" };
	const char *with_pull[] = { "heads/main", "pull/7/head" };
	char *src = path("src");
	struct builder_repo *r = mirror("m-pull", src);

	assert_ret(builder_repo_fetch(r, 0), 0);
	assert_heads(r, pats, 1, true, "src", only_main, 1);
	assert_ret(builder_repo_fetch(r, BUILDER_FETCH_PULLS), 0);
	assert_heads(r, pats, 1, true, "src", with_pull, 2);
	assert_heads(r, pats, 1, false, "src", only_main, 1);
	builder_repo_free(r);
	free(src);
}

static void test_force_push_and_prune(void **state)
{
	const char *all[] = { "*" };
	const char *before[] = { "heads/feature/x", "heads/lonely", "heads/main",
				 "pull/7/head", "heads/release/1.0", "heads/release/2.0" };
	const char *after[] = { "heads/lonely", "heads/main", "heads/release/1.0",
				"heads/release/2.0" };
	struct builder_repo *r;
	char *old, *new;

	assert_int_equal(sh("git clone -q --mirror src src2"), 0);
	r = mirror("m-prune", "src2");
	assert_ret(builder_repo_fetch(r, BUILDER_FETCH_PULLS), 0);
	assert_heads(r, all, 1, true, "src2", before, 6);
	old = sh_out("git -C src2 rev-parse release/2.0");

	assert_int_equal(sh("git -C src2 update-ref refs/heads/release/2.0 release/1.0 && "
			    "git -C src2 update-ref -d refs/heads/feature/x && "
			    "git -C src2 update-ref -d refs/pull/7/head"), 0);
	assert_ret(builder_repo_fetch(r, BUILDER_FETCH_PULLS), 0);
	assert_heads(r, all, 1, true, "src2", after, 4);
	new = sh_out("git -C src2 rev-parse release/2.0");
	assert_string_not_equal(old, new);
	builder_repo_free(r);
	free(old);
	free(new);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* How many files of the m-refresh mirror's packs end in ext. */
static int packs(const char *ext)
{
	char *n = sh_out("ls m-refresh/objects/pack | grep -c '\\.%s$'", ext);
	int v = atoi(n);

	free(n);
	return v;
}

/* The agent's handle on the mirror reads it after each fetch, which a
 * process of its own makes (a handle opened and freed here): with
 * builder_repo_refresh after each, what the handle keeps open does not grow
 * with the packs the fetches add. */
static void test_refresh(void **state)
{
	struct builder_repo *r, *w;
	int i, fds5 = 0;

	assert_int_equal(sh("git clone -q --mirror src src3"), 0);
	w = mirror("m-refresh", "src3");
	assert_ret(builder_repo_fetch(w, false), 0);
	builder_repo_free(w);
	r = mirror("m-refresh", "src3");
	for (i = 1; i <= 20; i++) {
		struct builder_commit c;
		char *oid;

		assert_int_equal(sh("git -C src3 update-ref refs/heads/main $(git -C src3 "
				    "commit-tree -p main -m 'round %d' main^{tree})", i), 0);
		w = mirror("m-refresh", "src3");
		assert_ret(builder_repo_fetch(w, false), 0);
		builder_repo_free(w);
		assert_ret(builder_repo_refresh(r), 0);
		assert_ret(builder_commit_load(r, &c, "refs/remotes/origin/main"), 0);
		oid = sh_out("git -C src3 rev-parse main");
		assert_string_equal(c.oid, oid);
		builder_commit_release(&c);
		free(oid);
		if (i == 5)
			fds5 = open_fds();
	}
	/* One descriptor a pack without the refresh: 15 more. */
	assert_in_range(open_fds(), 0, fds5 + 2);

	/* 21 packs: under the bound nothing is done; over it the fetches'
	 * packs become one beside the clone's, and every object is there. */
	assert_ret(builder_repo_consolidate(r, 32), 0);
	assert_int_equal(packs("pack"), 21);
	assert_ret(builder_repo_consolidate(r, 4), 20);
	assert_ret(builder_repo_refresh(r), 0);
	assert_int_equal(packs("pack"), 2);
	assert_int_equal(packs("idx"), 2);
	assert_int_equal(sh("git -C m-refresh fsck --connectivity-only --no-dangling --no-progress"), 0);
	{
		struct builder_commit c;
		char *oid = sh_out("git -C src3 rev-parse main~19");

		assert_ret(builder_commit_load(r, &c, oid), 0);
		assert_string_equal(c.oid, oid);
		builder_commit_release(&c);
		free(oid);
	}
	builder_repo_free(r);
}

static void test_commit_facts(void **state)
{
	struct builder_repo *r = mirror("m-commit", "src");
	struct builder_commit c = { .subject = NULL };
	char *c1 = src_rev("main^"), *tree;

	assert_ret(builder_repo_fetch(r, 0), 0);
	assert_ret(builder_commit_load(r, &c, "origin/main"), 0);
	assert_rev(c.oid, "src", "main");
	assert_rev(c.tree, "src", "main^{tree}");
	assert_string_equal(c.first_parent, c1);
	assert_string_equal(c.subject, "second: change a");
	assert_string_equal(c.author, "Ada Lovelace <ada@example.org>");
	builder_commit_release(&c);

	assert_ret(builder_commit_load(r, &c, c1), 0);
	assert_string_equal(c.oid, c1);
	assert_string_equal(c.first_parent, "");
	assert_string_equal(c.subject, "first commit");
	assert_int_equal(c.time, 1700000000);
	builder_commit_release(&c);

	builder_git_limits.text = 5;
	assert_ret(builder_commit_load(r, &c, c1), 0);
	builder_git_limits.text = 1024;
	assert_string_equal(c.subject, "first");
	assert_string_equal(c.author, "Ada L");
	builder_commit_release(&c);

	/* A failed load leaves c zeroed, whatever it held: safe to release. */
	memset(&c, 0xA5, sizeof(c));
	assert_ret(builder_commit_load(r, &c, "0123456789abcdef0123456789abcdef01234567"),
			 -ENOENT);
	assert_non_null(strstr(err_last(), "0123456789abcdef0123456789abcdef01234567"));
	assert_null(c.subject);
	assert_null(c.author);
	assert_string_equal(c.oid, "");
	builder_commit_release(&c);
	assert_ret(builder_commit_load(r, &c, "origin/nope"), -ENOENT);
	tree = src_rev("main^{tree}");
	assert_ret(builder_commit_load(r, &c, tree), -EINVAL);
	assert_non_null(strstr(err_last(), "tree"));
	builder_repo_free(r);
	free(tree);
	free(c1);
}

static void test_merge_base(void **state)
{
	struct builder_repo *r = mirror("m-base", "src");
	char base[BUILDER_OID_HEX] = "";

	assert_ret(builder_repo_fetch(r, 0), 0);
	assert_ret(builder_merge_base(r, base, "origin/feature/x", "origin/release/1.0"), 0);
	assert_rev(base, "src", "main^");
	assert_ret(builder_merge_base(r, base, "origin/feature/x", "origin/main"), 0);
	assert_rev(base, "src", "main");
	memset(base, 0xA5, sizeof(base));
	assert_ret(builder_merge_base(r, base, "origin/main", "origin/lonely"), -ENOENT);
	assert_non_null(strstr(err_last(), "origin/lonely"));
	assert_string_equal(base, "");
	assert_ret(builder_merge_base(r, base, "origin/main", "origin/nope"), -ENOENT);
	builder_repo_free(r);
}

/* Checks out rev and compares it with git archive of the same commit. */
static void check_against_archive(struct builder_repo *r, const char *rev, const char *name)
{
	char *oid = src_rev(rev), *co = path(name), *mode_co, *mode_ar;

	assert_ret(builder_checkout(r, oid, co), 0);
	assert_int_equal(sh("mkdir -p ar/%s && git -C src archive %s | tar -x -C ar/%s",
			    name, oid, name), 0);
	assert_int_equal(sh("diff -r --no-dereference %s ar/%s", name, name), 0);
	/* The same files are executable (permission bits below that follow
	 * the umask, in tar as in checkout). */
	mode_co = sh_out("cd %s && find . -type f -perm -u+x | sort | paste -sd,", name);
	mode_ar = sh_out("cd ar/%s && find . -type f -perm -u+x | sort | paste -sd,", name);
	assert_string_equal(mode_co, mode_ar);
	assert_string_equal(mode_co, "./bin/run.sh");
	free(mode_co);
	free(mode_ar);
	assert_int_equal(sh("test -L %s/link && test \"$(readlink %s/link)\" = a.txt && "
			    "test ! -e %s/.git", name, name, name), 0);
	free(co);
	free(oid);
}

static void test_checkout(void **state)
{
	struct builder_repo *r = mirror("m-co", "src");
	char *co;

	assert_ret(builder_repo_fetch(r, 0), 0);
	check_against_archive(r, "main^", "co/first");
	/* main has a gitlink: an empty directory, as in git archive */
	check_against_archive(r, "main", "co/second");
	assert_int_equal(sh("test -d co/second/sub && test -z \"$(ls -A co/second/sub)\""), 0);
	assert_int_equal(sh("test \"$(cat co/second/a.txt)\" = 'hello again'"), 0);
	/* the attributes came from the commit: $Id$ was expanded */
	assert_int_equal(sh("grep -q '^\\$Id: [0-9a-f]\\{40\\} \\$$' co/second/v.id"), 0);
	/* the mirror stays bare: checkout wrote no index into it */
	assert_int_equal(sh("test ! -e m-co/index"), 0);

	co = path("co/first");
	assert_ret(builder_checkout(r, "origin/main", co), -EEXIST);
	assert_non_null(strstr(err_last(), co));
	free(co);
	co = path("co/unknown");
	assert_ret(builder_checkout(r, "0123456789abcdef0123456789abcdef01234567", co),
			 -ENOENT);
	assert_int_equal(access(co, F_OK), -1);
	free(co);
	builder_repo_free(r);
}

/* Trees git fsck would refuse: checkout fails, writes nothing outside its
 * directory and leaves no directory behind. */
static void test_checkout_hostile_trees(void **state)
{
	const char *refs[] = { "dotdot", "dotgit", "dup" };
	struct builder_repo *r;
	char *co;
	size_t i;

	assert_int_equal(sh("mkdir outside && git init -q --bare evil && cd evil && "
			    "b=$(echo hi | git hash-object -w --stdin) && "
			    "l=$(printf %%s \"$PWD/../outside\" | git hash-object -w --stdin) && "
			    "t=$(printf \"100644 blob $b\\tpwn\\n\" | git mktree) && "
			    "mk() { git update-ref refs/heads/$1 $(git commit-tree -m $1 "
			    "$(printf \"$2\" | git mktree)); } && "
			    "mk dotdot \"100644 blob $b\\t..\\n\" && "
			    "mk dotgit \"100644 blob $b\\tok\\n040000 tree $t\\t.GIT\\n\" && "
			    "mk dup \"120000 blob $l\\tx\\n040000 tree $t\\tx\\n\""), 0);
	r = mirror("m-evil", "evil");
	assert_ret(builder_repo_fetch(r, 0), 0);
	for (i = 0; i < ARRAY_SIZE(refs); i++) {
		char *rev = xasprintf("origin/%s", refs[i]);

		co = xasprintf("%s/co-evil/%s", tmp, refs[i]);
		assert_ret(builder_checkout(r, rev, co), -EPROTO);
		assert_non_null(strstr(err_last(), i == 2 ? "appears twice" : "unsafe path"));
		assert_int_equal(access(co, F_OK), -1);
		free(rev);
		free(co);
	}
	assert_int_equal(sh("test -z \"$(ls -A outside)\""), 0);
	builder_repo_free(r);
}

static void test_fetch_errors(void **state)
{
	const char *url = "http://127.0.0.1:1/x.git";
	struct builder_repo *r = mirror("m-unreach", url);
	char *u;

	assert_ret(builder_repo_fetch(r, 0), -EHOSTUNREACH);
	assert_non_null(strstr(err_last(), url));
	builder_repo_free(r);

	/* a password in the URL stays out of messages */
	r = mirror("m-secret", "http://perfd:s3cret@127.0.0.1:1/x.git");
	assert_ret(builder_repo_fetch(r, 0), -EHOSTUNREACH);
	assert_non_null(strstr(err_last(), "'http://127.0.0.1:1/x.git'"));
	assert_null(strstr(err_last(), "s3cret"));
	builder_repo_free(r);

	/* a directory that is not a repository answers, wrongly */
	assert_int_equal(sh("mkdir -p notarepo && echo x >notarepo/x"), 0);
	u = xasprintf("file://%s/notarepo", tmp);
	r = mirror("m-notarepo", u);
	assert_ret(builder_repo_fetch(r, 0), -EPROTO);
	assert_non_null(strstr(err_last(), u));
	builder_repo_free(r);
	free(u);

	u = xasprintf("%s/missing", tmp);
	r = mirror("m-missing", u);
	assert_ret(builder_repo_fetch(r, 0), -ENOENT);
	assert_non_null(strstr(err_last(), u));
	builder_repo_free(r);
	free(u);

	/* the mirror's own directory is not a repository */
	u = path("notarepo");
	r = NULL;
	assert_ret(builder_repo_open(&r, u, "src"), -EPROTO);
	assert_null(r);
	assert_non_null(strstr(err_last(), u));
	free(u);
}

static void test_bounds(void **state)
{
	const char *all[] = { "*" };
	struct builder_repo *r = mirror("m-bound", "src");
	struct builder_head *h = NULL;
	size_t n = 0;

	builder_git_limits.fetch_bytes = 100;
	assert_ret(builder_repo_fetch(r, 0), -EFBIG);
	builder_git_limits.fetch_bytes = (size_t)16 << 30;
	assert_ret(builder_repo_fetch(r, 0), 0);

	builder_git_limits.heads = 4;
	assert_ret(builder_repo_heads(r, &h, &n, all, 1, false), -E2BIG);
	assert_null(h);
	builder_git_limits.heads = 5;
	assert_ret(builder_repo_heads(r, &h, &n, all, 1, false), 0);
	assert_int_equal(n, 5);
	builder_git_limits.heads = 100000;
	builder_heads_free(h, n);
	builder_repo_free(r);
}

static void test_glob(void **state)
{
	const char *pats[] = { "*.so", "sub/*.so", "a.so" };
	const char *none[] = { "*.so", "*.none" };
	char **out = NULL;
	size_t n = 0, i;
	char *dir, *slash;

	/* glob characters in dir itself do not expand */
	assert_int_equal(sh("mkdir -p 'g[1]/sub' 'g[1]/x.so' g1 && cd 'g[1]' && "
			    "touch a.so b.so sub/c.so sub/d.txt && "
			    "touch ../g1/a.so"), 0);
	dir = path("g[1]");
	assert_ret(builder_glob(&out, &n, dir, pats, 3, 10), 0);
	assert_int_equal(n, 3);
	assert_string_equal(out[0], "a.so");
	assert_string_equal(out[1], "b.so");
	assert_string_equal(out[2], "sub/c.so");
	for (i = 0; i < n; i++)
		free(out[i]);
	free(out);

	slash = xasprintf("%s/", dir);
	out = NULL;
	assert_ret(builder_glob(&out, &n, slash, pats + 1, 1, 10), 0);
	assert_int_equal(n, 1);
	assert_string_equal(out[0], "sub/c.so");
	free(out[0]);
	free(out);
	free(slash);

	memset(&out, 0xA5, sizeof(out));
	memset(&n, 0xA5, sizeof(n));
	assert_ret(builder_glob(&out, &n, dir, none, 2, 10), -ENOENT);
	assert_non_null(strstr(err_last(), "'*.none'"));
	assert_null(out);
	assert_int_equal(n, 0);
	/* x.so is a directory: it does not count; a symbolic link is refused */
	assert_ret(builder_glob(&out, &n, dir, (const char *[]){ "[lx].so" }, 1, 10),
			 -ENOENT);
	assert_int_equal(sh("ln -s a.so 'g[1]/l.so'"), 0);
	assert_ret(builder_glob(&out, &n, dir, (const char *[]){ "[lx].so" }, 1, 10),
			 -ELOOP);
	assert_non_null(strstr(err_last(), "'l.so' is a symbolic link"));
	assert_int_equal(sh("rm 'g[1]/l.so'"), 0);
	assert_ret(builder_glob(&out, &n, dir, pats, 3, 2), -E2BIG);
	assert_non_null(strstr(err_last(), "more than 2"));
	assert_null(out);
	free(dir);
}

/* A program that cannot be resolved leaves *out NULL, whatever it held. */
static void test_program_resolve_missing(void **state)
{
	char *p;

	memset(&p, 0xA5, sizeof(p));
	assert_ret(builder_program_resolve(&p, "perfd-no-such-program"), -ENOENT);
	assert_null(p);
	memset(&p, 0xA5, sizeof(p));
	assert_ret(builder_program_resolve(&p, ""), -EINVAL);
	assert_null(p);
	free(p);
}

/* ---- over HTTP, driven by tests/t0150-git-http.sh ---- */

static const char *env(const char *name)
{
	const char *v = getenv(name);

	if (!v)
		fail_msg("%s is not set", name);
	return v;
}

static void test_http_fetch(void **state)
{
	const char *all[] = { "*" };
	struct builder_repo *r = NULL;
	char *got;

	assert_ret(builder_repo_open(&r, env("PERFD_TEST_GIT_MIRROR"),
					   env("PERFD_TEST_GIT_URL")), 0);
	assert_ret(builder_repo_fetch(r, BUILDER_FETCH_PULLS), 0);
	/* the shell drops the last newline */
	got = heads_text(r, all, 1, true);
	if (*got)
		got[strlen(got) - 1] = '\0';
	assert_string_equal(got, env("PERFD_TEST_GIT_HEADS"));
	free(got);
	assert_ret(builder_checkout(r, env("PERFD_TEST_GIT_REV"),
					  env("PERFD_TEST_GIT_CHECKOUT")), 0);
	builder_repo_free(r);
}

static void test_http_errors(void **state)
{
	struct builder_repo *r = NULL;
	char *dir = xasprintf("%s-missing", env("PERFD_TEST_GIT_MIRROR"));
	char *url = xasprintf("%s-missing", env("PERFD_TEST_GIT_URL"));

	assert_ret(builder_repo_open(&r, dir, url), 0);
	assert_ret(builder_repo_fetch(r, 0), -EPROTO);
	assert_non_null(strstr(err_last(), url));
	builder_repo_free(r);
	free(dir);

	/* the bound on what a fetch may receive holds over the network */
	dir = xasprintf("%s-bound", env("PERFD_TEST_GIT_MIRROR"));
	r = NULL;
	assert_ret(builder_repo_open(&r, dir, env("PERFD_TEST_GIT_URL")), 0);
	builder_git_limits.fetch_bytes = 100;
	assert_ret(builder_repo_fetch(r, 0), -EFBIG);
	builder_git_limits.fetch_bytes = (size_t)16 << 30;
	builder_repo_free(r);
	free(dir);
	free(url);
}

int main(void)
{
	const struct CMUnitTest local[] = {
		cmocka_unit_test(test_file_url_heads),
		cmocka_unit_test(test_plain_path_and_reopen),
		cmocka_unit_test(test_pull_heads),
		cmocka_unit_test(test_force_push_and_prune),
		cmocka_unit_test(test_refresh),
		cmocka_unit_test(test_commit_facts),
		cmocka_unit_test(test_merge_base),
		cmocka_unit_test(test_checkout),
		cmocka_unit_test(test_checkout_hostile_trees),
		cmocka_unit_test(test_fetch_errors),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_glob),
		cmocka_unit_test(test_program_resolve_missing),
	};
	const struct CMUnitTest http[] = {
		cmocka_unit_test(test_http_fetch),
		cmocka_unit_test(test_http_errors),
	};

	if (getenv("PERFD_TEST_GIT_URL"))
		return cmocka_run_group_tests_name("git-http", http, NULL, NULL);
	return cmocka_run_group_tests_name("git", local, setup_repos, teardown_repos);
}
