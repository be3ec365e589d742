/*
 * The mirror of a watched repository, through libgit2; see builder.h.
 *
 * The mirror is a bare repository whose remote "origin" is the watched URL.
 * Branches are fetched into refs/remotes/origin/NAME, pull-request heads
 * into refs/remotes/pull/N/head. The mirror has no index, no work tree and
 * no local branches of its own; checkout.c writes trees elsewhere.
 *
 * A struct builder_repo is used by one thread at a time.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>

#include "builder.h"
#include "common.h"
#include "git-internal.h"

#define REMOTE_NAME "origin"
#define ORIGIN_PREFIX "refs/remotes/origin/"
#define PULL_PREFIX "refs/remotes/pull/"
#define PULL_SUFFIX "/head"

struct builder_git_limits builder_git_limits = {
	.fetch_bytes = (size_t)16 << 30,
	.heads = 100000,
	.text = 1024,
	.depth = 256,
};

static pthread_once_t git_once = PTHREAD_ONCE_INIT;
static int git_init_result;

static void git_init(void)
{
	git_init_result = git_libgit2_init();
}

const char *builder_git_msg(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "unknown error";
}

/* A library error outside the network: the detail names what we did. */
static int git_fail(int gerr, const char *what, const char *name)
{
	int code = gerr == GIT_ENOTFOUND ? -ENOENT : -EIO;

	return err_set(code, "git: %s '%s': %s", what, name, builder_git_msg());
}

/*
 * A failed fetch becomes -EHOSTUNREACH, -EPROTO, -ENOENT, -EACCES or -EIO.
 * libgit2 1.5 reports a refused connection as an OS error and a failed name
 * lookup as a network error, and uses the network class for protocol
 * errors too, so the message is what tells them apart.
 */
static int fetch_error(int gerr, const char *url, bool too_big)
{
	static const char *const unreachable[] = {
		"failed to connect", "failed to resolve address", "Connection refused",
		"timed out", "Network is unreachable", "No route to host",
		"Connection reset",
	};
	const git_error *e = git_error_last();
	const char *msg = builder_git_msg();
	int klass = e ? e->klass : GIT_ERROR_NONE;
	size_t i;

	if (too_big)
		return err_set(-EFBIG, "git: fetch from '%s' sent more than %zu bytes",
			       url, builder_git_limits.fetch_bytes);
	if (gerr == GIT_EAUTH)
		return err_set(-EACCES, "git: '%s' wants credentials: %s", url, msg);
	if (gerr == GIT_ECERTIFICATE || klass == GIT_ERROR_SSL)
		return err_set(-EHOSTUNREACH, "git: no trusted connection to '%s': %s",
			       url, msg);
	for (i = 0; i < ARRAY_SIZE(unreachable); i++)
		if (strstr(msg, unreachable[i]))
			return err_set(-EHOSTUNREACH, "git: cannot reach '%s': %s", url, msg);
	if (klass == GIT_ERROR_OS && strstr(msg, "failed to resolve path"))
		return err_set(-ENOENT, "git: no repository at '%s': %s", url, msg);
	if (klass == GIT_ERROR_REPOSITORY || klass == GIT_ERROR_HTTP ||
	    klass == GIT_ERROR_NET || klass == GIT_ERROR_SSH)
		return err_set(-EPROTO, "git: '%s' is not a git repository we can "
			       "fetch: %s", url, msg);
	return err_set(-EIO, "git: fetch from '%s': %s", url, msg);
}

static void add_encoded(struct strbuf *sb, const char *s)
{
	const char *p;

	for (p = s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/._~-", *p))
			strbuf_addch(sb, *p);
		else
			strbuf_addf(sb, "%%%02X", (unsigned char)*p);
	}
}

/* url for a message or a log: "scheme://user:secret@host/..." loses
 * "user:secret@", which may hold a token. */
static char *url_shown(const char *url)
{
	const char *host = strstr(url, "://"), *at, *end;

	if (!host)
		return xstrdup(url);
	host += 3;
	end = host + strcspn(host, "/");
	at = memchr(host, '@', (size_t)(end - host));
	if (!at)
		return xstrdup(url);
	return xasprintf("%.*s%s", (int)(host - url), url, at + 1);
}

/* "scheme://host[:port]" of an http(s) URL, without user or password; NULL
 * for any other URL. */
static char *url_origin(const char *url)
{
	const char *host, *end, *at;

	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		return NULL;
	host = strstr(url, "://") + 3;
	end = host + strcspn(host, "/?#");
	at = memchr(host, '@', (size_t)(end - host));
	if (at)
		host = at + 1;
	return xasprintf("%.*s%.*s", (int)(strstr(url, "://") + 3 - url), url,
			 (int)(end - host), host);
}

/*
 * *out is the URL origin gets for url, the caller's. A plain path becomes a
 * file:// URL: libgit2 takes a bare path only when it exists, and a file://
 * URL tells "missing" from "not a repository". Bytes other than unreserved
 * ones are percent-encoded because libgit2 decodes them. A URL (scheme://
 * or scp-like host:path) is kept as it is.
 */
static int remote_url(char **out, const char *url)
{
	struct strbuf sb = STRBUF_INIT;
	const char *colon = strchr(url, ':'), *slash = strchr(url, '/');
	char cwd[PATH_MAX];

	*out = NULL;
	if (strstr(url, "://") || (colon && (!slash || colon < slash))) {
		*out = xstrdup(url);
		return 0;
	}
	strbuf_adds(&sb, "file://");
	if (url[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd))) {
			strbuf_release(&sb);
			return err_set(-errno, "git: cannot make '%s' absolute: %s", url,
				       strerror(errno));
		}
		add_encoded(&sb, cwd);
		strbuf_addch(&sb, '/');
	}
	add_encoded(&sb, url);
	*out = strbuf_detach(&sb);
	return 0;
}

/* nftw's callback takes no context: the count, per thread. */
static __thread int locks_removed;

static int clear_lock(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	size_t n = strlen(path);

	if (type != FTW_F || n < 5 || strcmp(path + n - 5, ".lock"))
		return 0;
	if (unlink(path) < 0 && errno != ENOENT)
		return -1;
	locks_removed++;
	return 0;
}

int builder_repo_clear_locks(const char *dir)
{
	locks_removed = 0;
	if (access(dir, F_OK) < 0)
		return 0;
	if (nftw(dir, clear_lock, 16, FTW_PHYS) < 0)
		return err_set(-errno, "git: mirror '%s': cannot remove a lock file: %s", dir,
			       strerror(errno));
	return locks_removed;
}

int builder_repo_open(struct builder_repo **out, const char *dir, const char *url)
{
	struct builder_repo *r = NULL;
	git_repository *repo = NULL;
	git_remote *remote = NULL;
	char *fetch_url = NULL, *shown = NULL;
	struct stat st;
	int e, ret = 0;

	*out = NULL;
	pthread_once(&git_once, git_init);
	if (git_init_result < 0)
		return err_set(-EIO, "git: cannot initialise libgit2: %s", builder_git_msg());
	if (!*url)
		return err_set(-EINVAL, "git: empty repository URL for '%s'", dir);
	ret = remote_url(&fetch_url, url);
	if (ret < 0)
		return ret;
	shown = url_shown(fetch_url);

	if (stat(dir, &st) == 0) {
		e = git_repository_open_bare(&repo, dir);
	} else if (errno == ENOENT) {
		/* Made beside it and renamed into place, so that a perfd killed
		 * while it is being made leaves no half-made mirror behind. */
		char *tmp = xasprintf("%s.new-%ld", dir, (long)getpid());

		e = git_repository_init(&repo, tmp, 1);
		git_repository_free(repo);
		repo = NULL;
		if (e == 0 && rename(tmp, dir) < 0 && errno != EEXIST && errno != ENOTEMPTY) {
			ret = err_set(-errno, "git: mirror '%s': %s", dir, strerror(errno));
			free(tmp);
			goto out;
		}
		free(tmp);
		if (e == 0)
			e = git_repository_open_bare(&repo, dir);
	} else {
		ret = err_set(-errno, "git: mirror '%s': %s", dir, strerror(errno));
		goto out;
	}
	if (e < 0) {
		ret = err_set(e == GIT_ENOTFOUND ? -EPROTO : -EIO,
			      "git: mirror '%s' is not a bare repository: %s", dir, builder_git_msg());
		goto out;
	}

	e = git_remote_lookup(&remote, repo, REMOTE_NAME);
	if (e == GIT_ENOTFOUND)
		e = git_remote_create(&remote, repo, REMOTE_NAME, fetch_url);
	else if (e == 0 && (!git_remote_url(remote) ||
			    strcmp(git_remote_url(remote), fetch_url) != 0)) {
		/* The loaded remote keeps the old URL: look it up again. */
		e = git_remote_set_url(repo, REMOTE_NAME, fetch_url);
		git_remote_free(remote);
		remote = NULL;
		if (e == 0)
			e = git_remote_lookup(&remote, repo, REMOTE_NAME);
	}
	if (e < 0) {
		ret = err_set(e == GIT_EINVALIDSPEC ? -EINVAL : -EIO,
			      "git: remote '%s' of mirror '%s': %s", shown, dir, builder_git_msg());
		goto out;
	}

	r = xcalloc(1, sizeof(*r));
	r->repo = repo;
	r->remote = remote;
	r->dir = xstrdup(dir);
	r->url = shown;
	r->origin = url_origin(fetch_url);
	repo = NULL;
	remote = NULL;
	shown = NULL;
	*out = r;
out:
	git_remote_free(remote);
	git_repository_free(repo);
	free(fetch_url);
	free(shown);
	return ret;
}

static void forget_credentials(struct builder_repo *r)
{
	if (r->cred_password)
		explicit_bzero(r->cred_password, strlen(r->cred_password));
	free(r->cred_user);
	free(r->cred_password);
	r->cred_user = r->cred_password = NULL;
}

void builder_repo_free(struct builder_repo *r)
{
	if (!r)
		return;
	forget_credentials(r);
	git_remote_free(r->remote);
	git_repository_free(r->repo);
	free(r->dir);
	free(r->url);
	free(r->origin);
	free(r);
}

/* A pack of the mirror: its path without ".pack" and its size. */
struct pack_file {
	char *base;
	long long size;
};

/* The packs in dir that have an index, without those a .keep protects;
 * *out is the caller's. */
static int packs_list(struct pack_file **out, size_t *out_n, const char *dir)
{
	struct pack_file *v = NULL;
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	*out = NULL;
	*out_n = 0;
	d = opendir(dir);
	if (!d)
		return err_set(-errno, "git: '%s': %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		struct stat st;
		char *keep;

		if (len <= 5 || strcmp(e->d_name + len - 5, ".pack"))
			continue;
		v = xrealloc(v, (n + 1) * sizeof(*v));
		v[n].base = xasprintf("%s/%.*s", dir, (int)(len - 5), e->d_name);
		/* A pack a .keep protects is not ours to join; one with no index
		 * (written halfway by a fetch that was killed) is not read. */
		keep = xasprintf("%s.idx", v[n].base);
		if (stat(keep, &st) < 0) {
			free(keep);
			free(v[n].base);
			continue;
		}
		free(keep);
		keep = xasprintf("%s.keep", v[n].base);
		if (stat(keep, &st) == 0) {
			free(keep);
			free(v[n].base);
			continue;
		}
		free(keep);
		keep = xasprintf("%s.pack", v[n].base);
		v[n].size = stat(keep, &st) == 0 ? (long long)st.st_size : 0;
		free(keep);
		n++;
	}
	closedir(d);
	*out = v;
	*out_n = n;
	return 0;
}

static int insert_object(const git_oid *oid, void *payload)
{
	return git_packbuilder_insert(payload, oid, NULL);
}

int builder_repo_consolidate(struct builder_repo *r, size_t max_packs)
{
	char *dir = xasprintf("%s/objects/pack", r->dir);
	git_packbuilder *pb = NULL;
	struct pack_file *v = NULL;
	size_t n = 0, i, big = 0, merged = 0;
	char *made = NULL;
	int e, ret;

	ret = packs_list(&v, &n, dir);
	if (ret < 0 || n <= max_packs)
		goto out;
	for (i = 1; i < n; i++)
		if (v[i].size > v[big].size)
			big = i;
	/* The largest pack stays as it is (a clone's, usually): only what
	 * the fetches since added is written again, into one pack. */
	e = git_packbuilder_new(&pb, r->repo);
	for (i = 0; e == 0 && i < n; i++) {
		git_odb_backend *one = NULL;
		char *idx;

		if (i == big)
			continue;
		idx = xasprintf("%s.idx", v[i].base);
		e = git_odb_backend_one_pack(&one, idx);
		if (e == 0)
			e = one->foreach(one, insert_object, pb);
		if (one)
			one->free(one);
		free(idx);
	}
	if (e == 0)
		e = git_packbuilder_write(pb, dir, 0, NULL, NULL);
	if (e < 0) {
		ret = err_set(-EIO, "git: mirror '%s': joining its packs: %s", r->dir,
			      builder_git_msg());
		goto out;
	}
	made = xasprintf("%s/pack-%s", dir, git_packbuilder_name(pb));
	/* The new pack holds every object of the others: they go, each
	 * index before its pack, so that no index names a missing pack. */
	for (i = 0; i < n; i++) {
		char *idx, *pack;

		if (i == big || !strcmp(v[i].base, made))
			continue;
		idx = xasprintf("%s.idx", v[i].base);
		pack = xasprintf("%s.pack", v[i].base);
		if (unlink(idx) == 0 || errno == ENOENT)
			unlink(pack);
		free(idx);
		free(pack);
		merged++;
	}
	ret = (int)merged;
out:
	git_packbuilder_free(pb);
	for (i = 0; i < n; i++)
		free(v[i].base);
	free(v);
	free(made);
	free(dir);
	return ret;
}

int builder_repo_refresh(struct builder_repo *r)
{
	/* Drops the object database (every pack's index map, window and
	 * descriptor), the object cache, the reference database and the
	 * configuration; each is loaded again when next used. The remote
	 * keeps what it read at the open. */
	if (git_repository__cleanup(r->repo) < 0)
		return err_set(-EIO, "git: mirror '%s': %s", r->dir, builder_git_msg());
	return 0;
}

const char *builder_repo_url(const struct builder_repo *r)
{
	return r->url;
}

int builder_repo_set_credentials(struct builder_repo *r, const char *user, const char *password)
{
	if (!r->origin)
		return err_set(-EINVAL, "git: credentials are for http(s) remotes, not '%s'",
			       r->url);
	forget_credentials(r);
	r->cred_user = xstrdup(user);
	r->cred_password = xstrdup(password);
	return 0;
}

struct fetch_state {
	bool too_big;
	const struct builder_repo *r;
	int asked;                   /* times the server asked for credentials */
};

/* The credentials, for origin's server alone and once: a second request
 * means they were refused. */
static int on_credentials(git_credential **out, const char *url, const char *user_from_url,
			  unsigned int allowed, void *payload)
{
	struct fetch_state *fs = payload;
	const struct builder_repo *r = fs->r;
	char *origin = url ? url_origin(url) : NULL;
	bool same = origin && !strcmp(origin, r->origin);

	free(origin);
	if (!r->cred_user || !same || !(allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT))
		return GIT_PASSTHROUGH;
	if (fs->asked++) {
		git_error_set_str(GIT_ERROR_NET, "the credentials given were refused");
		return GIT_EAUTH;
	}
	return git_credential_userpass_plaintext_new(out, r->cred_user, r->cred_password);
}

static int fetch_progress(const git_indexer_progress *stats, void *payload)
{
	struct fetch_state *fs = payload;

	if (stats->received_bytes > builder_git_limits.fetch_bytes) {
		fs->too_big = true;
		return -1;
	}
	return 0;
}

/*
 * libgit2 1.5 has no timeout for a server that accepts the connection and
 * then stops answering: such a fetch blocks until the kernel gives up on
 * the socket. A caller that needs a bound runs the fetch where it can be
 * abandoned (a thread of its own or a child process).
 */
int builder_repo_fetch(struct builder_repo *r, unsigned what)
{
	char heads_spec[] = "+refs/heads/*:" ORIGIN_PREFIX "*";
	char pulls_spec[] = "+refs/pull/*/head:" PULL_PREFIX "*" PULL_SUFFIX;
	char tags_spec[] = "+refs/tags/*:refs/tags/*";
	char *specs[3] = { heads_spec };
	git_strarray refspecs = { specs, 1 };
	git_fetch_options opts;
	struct fetch_state fs = { .too_big = false, .r = r };
	int e, ret = 0;

	if (what & BUILDER_FETCH_PULLS)
		specs[refspecs.count++] = pulls_spec;
	if (what & BUILDER_FETCH_TAGS)
		specs[refspecs.count++] = tags_spec;
	git_fetch_options_init(&opts, GIT_FETCH_OPTIONS_VERSION);
	opts.callbacks.transfer_progress = fetch_progress;
	opts.callbacks.credentials = on_credentials;
	opts.callbacks.payload = &fs;
	opts.prune = GIT_FETCH_PRUNE;
	opts.update_fetchhead = 0;
	opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	e = git_remote_fetch(r->remote, &refspecs, &opts, "perfd: fetch");
	if (e < 0)
		ret = fetch_error(e, r->url, fs.too_big);
	return ret;
}

/* Parses "N/head" after PULL_PREFIX; N is a decimal without leading zero. */
static bool parse_pull(const char *s, int *out)
{
	long n = 0;
	const char *p;

	if (s[0] < '1' || s[0] > '9')
		return false;
	for (p = s; *p >= '0' && *p <= '9'; p++) {
		n = n * 10 + (*p - '0');
		if (n > INT_MAX)
			return false;
	}
	if (strcmp(p, PULL_SUFFIX) != 0)
		return false;
	*out = (int)n;
	return true;
}

static bool matches_any(const char *name, const char *const *patterns, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fnmatch(patterns[i], name, 0) == 0)
			return true;
	return false;
}

static int head_cmp(const void *a, const void *b)
{
	const struct builder_head *x = a, *y = b;

	return strcmp(x->name, y->name);
}

int builder_repo_heads(struct builder_repo *r, struct builder_head **out, size_t *out_n,
		       const char *const *patterns, size_t npatterns, bool pulls)
{
	git_reference_iterator *it = NULL;
	struct builder_head *heads = NULL, *h;
	size_t n = 0, alloc = 0;
	const char *ref;
	git_oid oid;
	int e, pull, ret = 0;

	*out = NULL;
	*out_n = 0;
	e = git_reference_iterator_new(&it, r->repo);
	if (e < 0) {
		ret = git_fail(e, "references of mirror", r->dir);
		goto out;
	}
	while ((e = git_reference_next_name(&ref, it)) == 0) {
		const char *name = NULL;
		bool is_pull = false;

		pull = 0;
		if (!strncmp(ref, ORIGIN_PREFIX, strlen(ORIGIN_PREFIX))) {
			name = ref + strlen(ORIGIN_PREFIX);
			if (!strcmp(name, "HEAD") || !matches_any(name, patterns, npatterns))
				continue;
		} else if (pulls && !strncmp(ref, PULL_PREFIX, strlen(PULL_PREFIX))) {
			if (!parse_pull(ref + strlen(PULL_PREFIX), &pull))
				continue;
			is_pull = true;
		} else {
			continue;
		}
		if (n == builder_git_limits.heads) {
			ret = err_set(-E2BIG, "git: mirror '%s' has more than %zu matching "
				      "heads", r->dir, builder_git_limits.heads);
			goto out;
		}
		e = git_reference_name_to_id(&oid, r->repo, ref);
		if (e < 0) {
			ret = git_fail(e, "reference", ref);
			goto out;
		}
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			heads = xrealloc(heads, alloc * sizeof(*heads));
		}
		h = &heads[n++];
		memset(h, 0, sizeof(*h));
		h->name = is_pull ? xasprintf("pull/%d", pull) : xstrdup(name);
		h->is_pull = is_pull;
		h->pull = pull;
		git_oid_tostr(h->oid, sizeof(h->oid), &oid);
	}
	if (e != GIT_ITEROVER) {
		ret = git_fail(e, "references of mirror", r->dir);
		goto out;
	}
	if (n)
		qsort(heads, n, sizeof(*heads), head_cmp);
	*out = heads;
	*out_n = n;
	heads = NULL;
	n = 0;
out:
	builder_heads_free(heads, n);
	git_reference_iterator_free(it);
	return ret;
}

void builder_heads_free(struct builder_head *heads, size_t n)
{
	size_t i;

	if (!heads)
		return;
	for (i = 0; i < n; i++)
		free(heads[i].name);
	free(heads);
}

int builder_git_commit_lookup(git_commit **out, git_repository *repo, const char *rev)
{
	git_object *obj = NULL, *peeled = NULL;
	int e, ret = 0;

	*out = NULL;
	e = git_revparse_single(&obj, repo, rev);
	if (e == GIT_ENOTFOUND) {
		ret = err_set(-ENOENT, "git: unknown commit or ref '%s'", rev);
		goto out;
	}
	if (e == GIT_EAMBIGUOUS || e == GIT_EINVALIDSPEC) {
		ret = err_set(-EINVAL, "git: '%s' does not name one commit: %s", rev,
			      builder_git_msg());
		goto out;
	}
	if (e < 0) {
		ret = git_fail(e, "revision", rev);
		goto out;
	}
	e = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
	if (e < 0) {
		ret = err_set(-EINVAL, "git: '%s' names a %s, not a commit", rev,
			      git_object_type2string(git_object_type(obj)));
		goto out;
	}
	*out = (git_commit *)peeled;
out:
	git_object_free(obj);
	return ret;
}

/* At most builder_git_limits.text bytes of s up to its first newline, cut
 * at a UTF-8 character boundary. */
static char *bounded_line(const char *s)
{
	size_t n = strcspn(s, "\n");

	if (n > 0 && s[n - 1] == '\r')
		n--;
	return xstrndup(s, utf8_cut(s, n, builder_git_limits.text));
}

int builder_commit_load(struct builder_repo *r, struct builder_commit *out, const char *rev)
{
	struct builder_commit c;
	const git_signature *sig;
	git_commit *commit = NULL;
	char *author;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = builder_git_commit_lookup(&commit, r->repo, rev);
	if (ret < 0)
		return ret;
	memset(&c, 0, sizeof(c));
	git_oid_tostr(c.oid, sizeof(c.oid), git_commit_id(commit));
	git_oid_tostr(c.tree, sizeof(c.tree), git_commit_tree_id(commit));
	if (git_commit_parentcount(commit) > 0)
		git_oid_tostr(c.first_parent, sizeof(c.first_parent),
			      git_commit_parent_id(commit, 0));
	if (git_commit_parentcount(commit) > 1)
		git_oid_tostr(c.second_parent, sizeof(c.second_parent),
			      git_commit_parent_id(commit, 1));
	c.subject = bounded_line(git_commit_message(commit) ? git_commit_message(commit) : "");
	sig = git_commit_author(commit);
	author = xasprintf("%s <%s>", sig->name, sig->email);
	c.author = bounded_line(author);
	free(author);
	c.time = (int64_t)git_commit_time(commit);
	*out = c;
	git_commit_free(commit);
	return 0;
}

int builder_commit_message(struct builder_repo *r, struct strbuf *out, const char *rev,
			   size_t max)
{
	git_commit *commit = NULL;
	const char *msg;
	size_t len;
	int ret;

	ret = builder_git_commit_lookup(&commit, r->repo, rev);
	if (ret < 0)
		return ret;
	msg = git_commit_message(commit);
	len = msg ? strlen(msg) : 0;
	strbuf_add(out, msg ? msg : "", len < max ? len : max);
	git_commit_free(commit);
	return 0;
}

int builder_first_parent_back(struct builder_repo *r, char out[BUILDER_OID_HEX], const char *rev,
			      size_t n)
{
	git_commit *commit = NULL;
	size_t i;
	int ret;

	out[0] = '\0';
	ret = builder_git_commit_lookup(&commit, r->repo, rev);
	for (i = 0; ret == 0 && i < n; i++) {
		git_commit *parent = NULL;

		if (git_commit_parentcount(commit) == 0)
			ret = err_set(-ENOENT, "%s has %zu first parents, fewer than %zu", rev, i, n);
		else if (git_commit_parent(&parent, commit, 0) < 0)
			ret = err_set(-EIO, "first parent in '%s': %s", rev, builder_git_msg());
		git_commit_free(commit);
		commit = parent;
	}
	if (ret == 0)
		git_oid_tostr(out, BUILDER_OID_HEX, git_commit_id(commit));
	git_commit_free(commit);
	return ret;
}

int builder_first_parents(struct builder_repo *r, char (**out)[BUILDER_OID_HEX], size_t *out_n,
			  const char *hi, const char *lo, size_t max)
{
	char (*chain)[BUILDER_OID_HEX] = NULL;
	git_commit *commit = NULL;
	git_oid lo_oid;
	size_t n = 0, i;
	int ret;

	*out = NULL;
	*out_n = 0;
	if (git_oid_fromstr(&lo_oid, lo) < 0)
		return err_set(-EINVAL, "'%s' is not a commit id", lo);
	ret = builder_git_commit_lookup(&commit, r->repo, hi);
	while (ret == 0 && !git_oid_equal(git_commit_id(commit), &lo_oid)) {
		git_commit *parent = NULL;

		if (n == max) {
			ret = err_set(-ERANGE, "%.12s is more than %zu first parents before %.12s",
				      lo, max, hi);
			break;
		}
		chain = xrealloc(chain, (n + 1) * sizeof(*chain));
		git_oid_tostr(chain[n++], BUILDER_OID_HEX, git_commit_id(commit));
		if (git_commit_parentcount(commit) == 0) {
			ret = err_set(-ENOENT, "%.12s is not among the first parents of %.12s",
				      lo, hi);
			break;
		}
		if (git_commit_parent(&parent, commit, 0) < 0)
			ret = err_set(-EIO, "first parent of %.12s: %s", chain[n - 1],
				      builder_git_msg());
		git_commit_free(commit);
		commit = parent;
	}
	git_commit_free(commit);
	if (ret < 0) {
		free(chain);
		return ret;
	}
	/* Oldest first. */
	for (i = 0; i < n / 2; i++) {
		char t[BUILDER_OID_HEX];

		memcpy(t, chain[i], sizeof(t));
		memcpy(chain[i], chain[n - 1 - i], sizeof(t));
		memcpy(chain[n - 1 - i], t, sizeof(t));
	}
	*out = chain;
	*out_n = n;
	return 0;
}

struct tagged {
	git_oid commit;
	char *name;
};

static int tagged_cmp(const void *x, const void *y)
{
	const struct tagged *a = x, *b = y;
	int c = git_oid_cmp(&a->commit, &b->commit);

	/* Of several tags on one commit, the newest name first. */
	return c ? c : -strcmp(a->name, b->name);
}

static int tagged_oid_cmp(const void *x, const void *y)
{
	return git_oid_cmp(&((const struct tagged *)x)->commit, &((const struct tagged *)y)->commit);
}

/* The fetched tags matching pattern, with the commits they point to,
 * sorted by commit. */
static int tags_matching(struct builder_repo *r, struct tagged **out, size_t *out_n,
			 const char *pattern)
{
	git_reference_iterator *it = NULL;
	struct tagged *tags = NULL;
	size_t n = 0, i;
	const char *ref;
	int e, ret = 0;

	e = git_reference_iterator_glob_new(&it, r->repo, "refs/tags/*");
	if (e < 0)
		return git_fail(e, "tags of mirror", r->dir);
	while ((e = git_reference_next_name(&ref, it)) == 0) {
		const char *name = ref + strlen("refs/tags/");
		git_object *obj = NULL, *commit = NULL;

		if (fnmatch(pattern, name, 0) != 0)
			continue;
		if (n == builder_git_limits.heads) {
			ret = err_set(-E2BIG, "git: mirror '%s' has more than %zu tags matching "
				      "'%s'", r->dir, builder_git_limits.heads, pattern);
			break;
		}
		/* A tag of something other than a commit marks no commit. */
		if (git_revparse_single(&obj, r->repo, ref) == 0 &&
		    git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) == 0) {
			tags = xrealloc(tags, (n + 1) * sizeof(*tags));
			git_oid_cpy(&tags[n].commit, git_object_id(commit));
			tags[n++].name = xstrdup(name);
		}
		git_object_free(commit);
		git_object_free(obj);
	}
	if (ret == 0 && e != GIT_ITEROVER)
		ret = git_fail(e, "tags of mirror", r->dir);
	git_reference_iterator_free(it);
	if (ret < 0) {
		for (i = 0; i < n; i++)
			free(tags[i].name);
		free(tags);
		return ret;
	}
	if (n)
		qsort(tags, n, sizeof(*tags), tagged_cmp);
	*out = tags;
	*out_n = n;
	return 0;
}

int builder_tag_back(struct builder_repo *r, char out[BUILDER_OID_HEX], char *name, size_t name_n,
		     const char *rev, const char *pattern, size_t max)
{
	struct tagged *tags = NULL, *hit = NULL, key = { .name = NULL };
	git_commit *commit = NULL;
	size_t n = 0, i, k;
	int ret;

	out[0] = '\0';
	ret = tags_matching(r, &tags, &n, pattern);
	if (ret == 0)
		ret = builder_git_commit_lookup(&commit, r->repo, rev);
	for (i = 0; ret == 0 && !hit && i < max; i++) {
		git_commit *parent = NULL;

		if (git_commit_parentcount(commit) == 0)
			break;
		if (git_commit_parent(&parent, commit, 0) < 0) {
			ret = err_set(-EIO, "first parent in '%s': %s", rev, builder_git_msg());
			break;
		}
		git_commit_free(commit);
		commit = parent;
		git_oid_cpy(&key.commit, git_commit_id(commit));
		hit = n ? bsearch(&key, tags, n, sizeof(*tags), tagged_oid_cmp) : NULL;
		/* The first of the commit's tags: the newest name. */
		while (hit && hit > tags && git_oid_equal(&hit[-1].commit, &hit->commit))
			hit--;
	}
	if (ret == 0 && !hit)
		ret = err_set(-ENOENT, "no tag matching '%s' within %zu first parents of %.12s",
			      pattern, max, rev);
	if (ret == 0) {
		git_oid_tostr(out, BUILDER_OID_HEX, &hit->commit);
		snprintf(name, name_n, "%s", hit->name);
	}
	git_commit_free(commit);
	for (k = 0; k < n; k++)
		free(tags[k].name);
	free(tags);
	return ret;
}

int builder_file_read(struct strbuf *out, struct builder_repo *r, const char *rev,
		      const char *path, size_t max)
{
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	git_object_size_t size;
	int ret;

	ret = builder_git_commit_lookup(&commit, r->repo, rev);
	if (ret < 0)
		return ret;
	if (git_commit_tree(&tree, commit) < 0) {
		ret = err_set(-EIO, "tree of '%s': %s", rev, builder_git_msg());
		goto out;
	}
	if (git_tree_entry_bypath(&entry, tree, path) < 0 ||
	    git_tree_entry_type(entry) != GIT_OBJECT_BLOB) {
		ret = err_set(-ENOENT, "'%s' has no file '%s'", rev, path);
		goto out;
	}
	if (git_blob_lookup(&blob, r->repo, git_tree_entry_id(entry)) < 0) {
		ret = err_set(-EIO, "'%s:%s': %s", rev, path, builder_git_msg());
		goto out;
	}
	size = git_blob_rawsize(blob);
	if (size > max) {
		ret = err_set(-EFBIG, "'%s:%s' is over %zu bytes", rev, path, max);
		goto out;
	}
	strbuf_add(out, git_blob_rawcontent(blob), (size_t)size);
	ret = 0;
out:
	git_blob_free(blob);
	git_tree_entry_free(entry);
	git_tree_free(tree);
	git_commit_free(commit);
	return ret;
}

void builder_commit_release(struct builder_commit *c)
{
	if (!c)
		return;
	free(c->subject);
	free(c->author);
	c->subject = NULL;
	c->author = NULL;
}

int builder_merge_base(struct builder_repo *r, char out[BUILDER_OID_HEX], const char *a,
		       const char *b)
{
	git_commit *ca = NULL, *cb = NULL;
	git_oid base;
	int e, ret;

	out[0] = '\0';
	ret = builder_git_commit_lookup(&ca, r->repo, a);
	if (ret < 0)
		goto out;
	ret = builder_git_commit_lookup(&cb, r->repo, b);
	if (ret < 0)
		goto out;
	e = git_merge_base(&base, r->repo, git_commit_id(ca), git_commit_id(cb));
	if (e == GIT_ENOTFOUND) {
		ret = err_set(-ENOENT, "git: '%s' and '%s' share no history", a, b);
		goto out;
	}
	if (e < 0) {
		ret = err_set(-EIO, "git: merge base of '%s' and '%s': %s", a, b, builder_git_msg());
		goto out;
	}
	git_oid_tostr(out, BUILDER_OID_HEX, &base);
out:
	git_commit_free(ca);
	git_commit_free(cb);
	return ret;
}

/* The trees of base (NULL when base is "": the empty tree) and head. */
static int diff_trees(git_tree **out_base, git_tree **out_head, struct builder_repo *r,
		      const char *base, const char *head)
{
	git_commit *cb = NULL, *ch = NULL;
	int ret = 0;

	*out_base = *out_head = NULL;
	if (*base)
		ret = builder_git_commit_lookup(&cb, r->repo, base);
	if (ret == 0)
		ret = builder_git_commit_lookup(&ch, r->repo, head);
	if (ret == 0 && cb && git_commit_tree(out_base, cb) < 0)
		ret = git_fail(-1, "tree of", base);
	if (ret == 0 && git_commit_tree(out_head, ch) < 0)
		ret = git_fail(-1, "tree of", head);
	git_commit_free(cb);
	git_commit_free(ch);
	return ret;
}

int builder_diff_touches(struct builder_repo *r, char **out_path, const char *base,
			 const char *head, const char *const *patterns, size_t npatterns)
{
	git_tree *tb = NULL, *th = NULL;
	git_diff *diff = NULL;
	size_t i, k, n;
	int ret;

	*out_path = NULL;
	ret = diff_trees(&tb, &th, r, base, head);
	if (ret == 0 && git_diff_tree_to_tree(&diff, r->repo, tb, th, NULL) < 0)
		ret = err_set(-EIO, "git: the change from '%s' to '%s': %s", *base ? base : "nothing",
			      head, builder_git_msg());
	n = diff ? git_diff_num_deltas(diff) : 0;
	for (i = 0; ret == 0 && !*out_path && i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		const char *paths[] = { d->old_file.path, d->new_file.path };

		for (k = 0; k < ARRAY_SIZE(paths) * npatterns && !*out_path; k++) {
			const char *path = paths[k / npatterns];

			if (path && fnmatch(patterns[k % npatterns], path, 0) == 0)
				*out_path = xstrdup(path);
		}
	}
	git_diff_free(diff);
	git_tree_free(tb);
	git_tree_free(th);
	return ret < 0 ? ret : *out_path != NULL;
}
