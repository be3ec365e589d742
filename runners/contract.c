/*
 * Contract runners: a build's correctness checks, each chunk a fresh
 * process in the build directory, with its row stored before it starts and
 * its RESULT and SUMMARY lines after.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runners.h"
#include "sandbox.h"

static void on_stdout(void *ctx, const char *buf, size_t len)
{
	runner_protocol_feed(ctx, buf, len);
}

/* Runs one chunk into res, whose row is stored; -ECANCELED when stopped. A
 * process of it that outlived SIGKILL is named in *out_unkillable (the
 * caller's). */
static int run_chunk(struct db_runner_result *res, const struct db_build *b,
		     const struct runner_contract *rc, const struct sandbox *sandbox, int cancel_fd,
		     char **out_unkillable)
{
	const char *const ro[] = { b->dir, NULL };
	struct sandbox_step step = { .ro = ro };
	struct child_env env;
	struct child ch;
	struct runner_protocol proto;
	int r;

	sandbox_env_init(&env, sandbox);
	child_env_setf(&env, "PERFD_CHUNK=%d", res->chunk);
	child_env_setf(&env, "PERFD_CHUNKS=%d", rc->chunks);
	child_init(&ch);
	runner_protocol_init(&proto);
	ch.env = (const char *const *)env.v;
	ch.dir = b->dir;
	ch.wrap = sandbox_wrap(&step, sandbox);
	ch.timeout_s = rc->timeout_s;
	ch.capture_max = CHILD_CAPTURE_DEFAULT;
	ch.cancel_fd = cancel_fd;
	ch.on_stdout = on_stdout;
	ch.ctx = &proto;
	r = child_run_shell(&ch, rc->command);
	if (r == 0 && ch.cancelled)
		r = -ECANCELED;
	if (r == 0) {
		runner_protocol_finish(&proto);
		time_now_iso(res->ended_at);
		res->exit_code = ch.exit_code;
		res->signal = ch.signal;
		res->timed_out = ch.timed_out;
		res->elapsed_ms = ch.wall_ms;
		res->spawn_error = ch.spawn_error;
		ch.spawn_error = NULL;
		res->output_len = ch.out.len;
		res->output = strbuf_detach(&ch.out);
		res->lines = proto.lines;
		res->nlines = proto.nlines;
		proto.lines = NULL;
		proto.nlines = 0;
		*out_unkillable = ch.unkillable;
		ch.unkillable = NULL;
	}
	runner_protocol_release(&proto);
	child_release(&ch);
	child_env_release(&env);
	return r;
}

/* The sha256 of the runner's program when its first word names a regular
 * file of the build, opened from its directory without following a link
 * and within the bounds of hash; NULL when it names a command on PATH or a
 * shell builtin, or cannot be hashed so. */
static char *binary_sha(const struct db_build *b, const char *command,
			const struct sha256_bound *hash)
{
	struct sha256_bound bound = { .max_bytes = hash->max_bytes, .max_s = hash->max_s };
	char *word = xstrndup(command, strcspn(command, " \t"));
	char hex[SHA256_HEX_SIZE];
	int64_t size;
	int r = sha256_file_beneath(hex, &size, b->dir, word, &bound);

	free(word);
	return r < 0 ? NULL : xstrdup(hex);
}

/* A process of the runner's chunk res outlived SIGKILL: the build's
 * commit is held on its host, and the host quarantined. */
static int hold_unkillable(struct db *db, const struct db_build *b,
			   const struct db_runner_result *res, const char *detail)
{
	struct db_hold step = { .step = DB_HOLD_RUNNER, .build_id = b->id, .result_id = res->id };

	snprintf(step.name, sizeof(step.name), "%s", res->runner);
	memcpy(step.started_at, res->started_at, sizeof(step.started_at));
	memcpy(step.last_at, res->started_at, sizeof(step.last_at));
	return runner_hold_add(db, b->host, &step, DB_HOLD_UNKILLABLE, detail);
}

int runner_contract_run(struct db *db, const struct db_build *b, const struct runner_contract *rc,
			const struct sandbox *sandbox, const struct sha256_bound *hash,
			int cancel_fd, int *out_failed,
			void (*on_done)(void *ctx, const struct db_runner_result *res), void *ctx)
{
	char *sha = binary_sha(b, rc->command, hash);
	int chunk, r = 0;

	for (chunk = 1; chunk <= rc->chunks && r == 0; chunk++) {
		struct db_runner_result res;
		char *unkillable = NULL;

		r = db_runner_result_done(db, b->id, rc->name, chunk);
		if (r == 1) {
			r = 0;
			continue;
		}
		if (r < 0)
			break;
		if (child_cancel_wait(cancel_fd, 0)) {
			r = -ECANCELED;
			break;
		}
		memset(&res, 0, sizeof(res));
		res.build_id = b->id;
		snprintf(res.runner, sizeof(res.runner), "%s", rc->name);
		res.chunk = chunk;
		res.chunks = rc->chunks;
		res.binary_sha256 = sha ? xstrdup(sha) : NULL;
		time_now_iso(res.started_at);
		r = db_runner_result_insert(db, &res.id, &res);
		if (r == 0)
			r = run_chunk(&res, b, rc, sandbox, cancel_fd, &unkillable);
		if (r == 0)
			r = db_runner_result_finish(db, &res);
		if (r == 0 && unkillable)
			r = hold_unkillable(db, b, &res, unkillable);
		free(unkillable);
		if (r == 0 && (res.exit_code || res.signal || res.timed_out || res.spawn_error))
			(*out_failed)++;
		if (r == 0 && on_done)
			on_done(ctx, &res);
		db_runner_result_release(&res);
	}
	free(sha);
	if (r == -ECANCELED)
		r = err_set(-ECANCELED, "runner %s of build %lld: stopped; run again at the next "
			    "start", rc->name, (long long)b->id);
	return r;
}
