/*
 * A commit's build on a host: its row before the checkout, the recipe run
 * in a fresh process, the artifacts hashed, the toolchain named, the row
 * finished. A tree built before with the same recipe on the same host is
 * found instead (the build cache), done or failed alike.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "builder.h"
#include "sandbox.h"

/* The toolchain's first line into b->toolchain (none when it fails);
 * -ECANCELED when a stop cut it short. */
static int toolchain(struct db_build *b, const struct builder_build_opts *o,
		     const struct child_env *env)
{
	struct sandbox_step step = { .rw = b->dir };
	struct child ch;
	int r = 0;

	if (!o->toolchain)
		return 0;
	child_init(&ch);
	ch.env = (const char *const *)env->v;
	ch.dir = b->dir;
	ch.wrap = sandbox_wrap(&step, o->sandbox);
	ch.timeout_s = BUILDER_TOOLCHAIN_TIMEOUT_S;
	ch.cancel_fd = o->cancel_fd;
	if (child_run_shell(&ch, o->toolchain) == 0) {
		if (ch.cancelled)
			r = -ECANCELED;
		else if (!ch.exit_code && ch.out.len)
			b->toolchain = xstrndup(ch.out.buf, strcspn(ch.out.buf, "\n"));
	}
	child_release(&ch);
	return r;
}

/* The bound a pass over a build's artifacts starts with. */
static struct sha256_bound bound_of(const struct sha256_bound *l)
{
	return (struct sha256_bound){ .max_bytes = l->max_bytes, .max_s = l->max_s };
}

/* Why hashing an artifact failed, for a build's detail or a stale build:
 * a bound names its key. The caller's. */
static char *hash_failure(int r)
{
	return xasprintf("%s%s", err_last(), r == -EFBIG ? " ([build] hash_max_mb)" :
			 r == -ETIMEDOUT ? " ([build] hash_timeout_s)" : "");
}

/* Hashes what the artifact patterns match into b->artifacts and the
 * artifacts table, each opened from the build directory without following
 * a link, within the bounds of o->hash. Patterns that match nothing, a
 * link, a special file, a file over a bound fail the build (b->detail,
 * and no artifact is stored), not the call. Without db (a trial) nothing
 * is stored. */
static int hash_artifacts(struct db *db, struct db_build *b, const struct builder_build_opts *o)
{
	struct sha256_bound bound = bound_of(&o->hash);
	char **names = NULL, *why;
	size_t n = 0, i;
	int r;

	r = builder_glob(&names, &n, b->dir, o->artifacts, o->nartifacts, BUILDER_ARTIFACTS_MAX);
	if (r < 0) {
		b->detail = xasprintf("artifacts: %s", err_last());
		return 0;
	}
	b->artifacts = xcalloc(n + 1, sizeof(*b->artifacts));
	for (i = 0; i < n && r == 0; i++) {
		struct db_build_artifact *ba = &b->artifacts[b->nartifacts++];

		ba->name = names[i];
		names[i] = NULL;
		ba->artifact.path = xasprintf("%s/%s", b->dir, ba->name);
		r = sha256_file_beneath(ba->artifact.sha256, &ba->artifact.size, b->dir, ba->name,
					&bound);
	}
	if (r < 0) {
		why = hash_failure(r);
		b->detail = xasprintf("artifacts: %s", why);
		free(why);
		r = 0;
		for (i = 0; i < b->nartifacts; i++) {
			free(b->artifacts[i].name);
			db_artifact_release(&b->artifacts[i].artifact);
		}
		b->nartifacts = 0;
	}
	for (i = 0; db && i < b->nartifacts && r == 0; i++)
		r = db_artifact_put(db, &b->artifacts[i].artifact.id, &b->artifacts[i].artifact);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

/* A build cut short by a stop is no outcome of its commit: its row is
 * abandoned, and the next start builds the tree again (a trial, without
 * db, has no row). */
static int abandon(struct db *db, int64_t id)
{
	int r;

	if (!db)
		return err_set(-ECANCELED, "the trial build: stopped");
	r = db_build_abandon(db, id);
	if (r < 0)
		return r;
	return err_set(-ECANCELED, "build %lld: stopped, abandoned; built again at the next "
		       "start", (long long)id);
}

/* A fresh, empty directory for the checkout. */
static int fresh_dir(const char *dir)
{
	char *parent = xstrndup(dir, strrchr(dir, '/') ? (size_t)(strrchr(dir, '/') - dir) : 0);
	int r = fs_rm_rf(dir);

	if (r == 0 && *parent)
		r = fs_mkdir_p(parent);
	free(parent);
	return r;
}

/* Runs the recipe in b->dir and hashes what it made: b is filled with the
 * outcome, to be stored (with db). -ECANCELED (the row abandoned) when
 * stopped. */
static int run_recipe(struct db *db, struct db_build *b, const struct builder_build_opts *o)
{
	struct sandbox_step step = { .rw = b->dir, .net = o->network };
	struct child_env env;
	struct child ch;
	size_t i;
	int r;

	sandbox_env_init(&env, o->sandbox);
	for (i = 0; i < o->nenv; i++)
		child_env_set(&env, o->env[i]);
	child_init(&ch);
	ch.env = (const char *const *)env.v;
	ch.dir = b->dir;
	ch.wrap = sandbox_wrap(&step, o->sandbox);
	ch.timeout_s = o->timeout_s;
	ch.capture_max = BUILDER_LOG_MAX;
	ch.cancel_fd = o->cancel_fd;
	ch.on_stdout = o->on_output;
	ch.ctx = o->ctx;
	r = child_run_shell(&ch, o->command);
	if (r == 0 && ch.cancelled)
		r = abandon(db, b->id);
	if (r < 0)
		goto out;
	b->exit_code = ch.exit_code;
	b->signal = ch.signal;
	b->timed_out = ch.timed_out;
	b->wall_ms = ch.wall_ms;
	b->log_len = ch.out.len;
	b->log_bytes = ch.out_total;
	b->log = strbuf_detach(&ch.out);
	b->detail = child_failure(&ch, "the build recipe");
	if (!b->detail) {
		r = hash_artifacts(db, b, o);
		if (r == 0 && toolchain(b, o, &env) == -ECANCELED)
			r = abandon(db, b->id);
	}
	b->state = b->detail ? DB_BUILD_FAILED : DB_BUILD_DONE;
out:
	child_release(&ch);
	child_env_release(&env);
	return r;
}

int builder_build_verify(const struct db_build *b, const struct sha256_bound *limits,
			 char **why)
{
	struct sha256_bound bound = bound_of(limits);
	char *reason;
	size_t i;

	*why = NULL;
	for (i = 0; i < b->nartifacts; i++) {
		const struct db_artifact *art = &b->artifacts[i].artifact;
		char hex[SHA256_HEX_SIZE];
		int64_t size;
		int r = sha256_file_beneath(hex, &size, b->dir, b->artifacts[i].name, &bound);

		if (r == -ENOENT) {
			*why = xasprintf("build %lld's artifact '%s' is gone", (long long)b->id,
					 b->artifacts[i].name);
			return 1;
		}
		/* What the build left is no longer what it hashed, or cannot be
		 * hashed now: built again, which says why it fails if it does. */
		if (r == -ELOOP || r == -EXDEV || r == -ENOTDIR || r == -EISDIR || r == -EINVAL ||
		    r == -EFBIG || r == -ETIMEDOUT) {
			reason = hash_failure(r);
			*why = xasprintf("build %lld's artifact '%s' cannot be hashed again: %s",
					 (long long)b->id, b->artifacts[i].name, reason);
			free(reason);
			return 1;
		}
		if (r < 0)
			return r;
		if (strcmp(hex, art->sha256)) {
			*why = xasprintf("build %lld's artifact '%s' changed since it was built "
					 "(sha256 %.12s then, %.12s now)", (long long)b->id,
					 b->artifacts[i].name, art->sha256, hex);
			return 1;
		}
	}
	return 0;
}

/* A build of commit c (commit as named) as o makes it, not yet run: its
 * directory never one an earlier build used, since what a build killed
 * with its agent left there (or anything still writing) is no part of
 * this one. */
static void build_init(struct db_build *b, const struct builder_commit *c, const char *commit,
		       const struct builder_build_opts *o)
{
	struct timespec now;

	memset(b, 0, sizeof(*b));
	snprintf(b->host, sizeof(b->host), "%s", o->host);
	snprintf(b->commit, sizeof(b->commit), "%s", commit);
	snprintf(b->tree, sizeof(b->tree), "%s", c->tree);
	snprintf(b->recipe_hash, sizeof(b->recipe_hash), "%s", o->recipe_hash);
	clock_gettime(CLOCK_REALTIME, &now);
	b->dir = xasprintf("%s/builds/%.12s-%.12s-%llx%09lx", o->workdir, b->tree, b->recipe_hash,
			   (unsigned long long)now.tv_sec, (unsigned long)now.tv_nsec);
	b->fingerprint = o->fingerprint ? xstrdup(o->fingerprint) : NULL;
	time_now_iso(b->started_at);
}

/* Checks out commit into b->dir and runs the recipe there: b holds the
 * outcome (a failed checkout is one). Only a stop (-ECANCELED) or, with
 * db, a database error fails the call. */
static int build_run(struct db *db, struct builder_repo *repo, struct db_build *b,
		     const struct builder_build_opts *o)
{
	int r;

	if (o->on_start)
		o->on_start(o->ctx, b);
	r = fresh_dir(b->dir);
	if (r == 0)
		r = builder_checkout(repo, b->commit, b->dir);
	if (r == 0)
		r = sandbox_own(o->sandbox, b->dir);
	if (r < 0) {
		b->state = DB_BUILD_FAILED;
		b->detail = xasprintf("checkout: %s", err_last());
		r = 0;
	} else {
		r = run_recipe(db, b, o);
	}
	time_now_iso(b->finished_at);
	return r;
}

int builder_build_ensure(struct db_build *out, struct builder_repo *repo, struct db *db,
			 const char *commit, const struct builder_build_opts *o)
{
	struct builder_commit c;
	struct db_build b;
	int r;

	memset(out, 0, sizeof(*out));
	memset(&b, 0, sizeof(b));
	r = builder_commit_load(repo, &c, commit);
	if (r < 0)
		return r;
	r = db_build_find(db, out, o->host, c.tree, o->recipe_hash);
	if (r != -ENOENT) {
		builder_commit_release(&c);
		return r < 0 ? r : 1;
	}
	build_init(&b, &c, commit, o);
	builder_commit_release(&c);
	r = db_build_insert(db, &b.id, &b);
	if (r == 0)
		r = build_run(db, repo, &b, o);
	if (r == 0)
		r = db_build_finish(db, &b);
	if (r < 0)
		goto out;
	*out = b;
	memset(&b, 0, sizeof(b));
out:
	db_build_release(&b);
	return r;
}

int builder_build_try(struct db_build *out, struct builder_repo *repo, const char *commit,
		      const struct builder_build_opts *o)
{
	struct builder_commit c;
	int r;

	memset(out, 0, sizeof(*out));
	r = builder_commit_load(repo, &c, commit);
	if (r < 0)
		return r;
	build_init(out, &c, commit, o);
	builder_commit_release(&c);
	r = build_run(NULL, repo, out, o);
	if (r < 0) {
		fs_rm_rf(out->dir);
		db_build_release(out);
		memset(out, 0, sizeof(*out));
	}
	return r;
}
