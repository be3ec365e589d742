/*
 * The agent's sandbox (docs/security.md): which of its files no [sandbox]
 * ro or rw may show, which device nodes it passes (the host profile's), what
 * --check prints of the view, and what the agent does where bubblewrap
 * cannot run ([sandbox] mode).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "daemon.h"
#include "hosts.h"

static void push(char ***v, size_t *n, char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(char *));
	(*v)[(*n)++] = s;
}

/* The agent's own files: its work directory (mirror and builds), its
 * database with its journal files and lock, its configuration and its
 * tokens. */
static void hidden(const struct agent_config *c, char ***v, size_t *n)
{
	static const char *const db_files[] = { "", "-wal", "-shm", "-journal", ".agent-lock" };
	char *db = fs_absolute(c->database);
	size_t i;

	push(v, n, fs_absolute(c->workdir));
	for (i = 0; i < ARRAY_SIZE(db_files); i++)
		push(v, n, xasprintf("%s%s", db, db_files[i]));
	free(db);
	push(v, n, fs_absolute(c->path));
	if (c->hub.token_file)
		push(v, n, fs_absolute(c->hub.token_file));
	if (c->github.token_file)
		push(v, n, fs_absolute(c->github.token_file));
}

/* The device nodes: [sandbox] nodes, else the host profile's, else (no
 * profile) every GPU node there is. */
static void nodes(const struct agent_config *c, const struct host_profile *hp, char ***v,
		  size_t *n)
{
	const char *text = hp ? hp->nodes : HOST_DEFAULT_NODES;
	char *copy, *save = NULL, *w;
	size_t i;

	if (c->sandbox.nnodes) {
		for (i = 0; i < c->sandbox.nnodes; i++)
			push(v, n, xstrdup(c->sandbox.nodes[i]));
		return;
	}
	if (hp && !text)
		text = host_profile_has_device(hp) ? HOST_DEFAULT_NODES : "";
	copy = xstrdup(text);
	for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		push(v, n, xstrdup(w));
	free(copy);
}

static void say(const struct agent *a, const struct sandbox *s)
{
	const struct sandbox_limits *l = &s->limits;
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	for (i = 0; i < s->ndevices; i++)
		strbuf_addf(&sb, " %s", s->devices[i]);
	log_info("sandbox: %s%s%s, nodes%s; processes %ld, memory %ld MB, file size %ld MB, "
		 "open files %ld (0: none)", s->bwrap, s->drop ? " as " : "",
		 s->drop ? (a->cfg->sandbox.user ? a->cfg->sandbox.user : SANDBOX_DEFAULT_USER) : "",
		 sb.len ? sb.buf : " none", l->processes, l->memory_mb, l->file_size_mb,
		 l->open_files);
	log_info("sandbox: each private tmpfs %ld MB (0: none); no cgroup per step: memory is "
		 "bounded per process, processes per user", l->tmp_mb);
	strbuf_release(&sb);
}

/* The sandbox [sandbox] and the host profile ask for: planned, or opened
 * (a trial run, binding builds as a build will be bound). */
static int sandbox_make(struct sandbox **out, const struct agent_config *c,
			const struct host_profile *hp, const char *builds)
{
	const struct agent_sandbox *cfg = &c->sandbox;
	char **hide = NULL, **dev = NULL;
	size_t nhide = 0, ndev = 0, i;
	struct sandbox_opts o;
	int r;

	hidden(c, &hide, &nhide);
	nodes(c, hp, &dev, &ndev);
	o = (struct sandbox_opts){
		.trial_dir = builds,
		.hide = (const char *const *)hide, .nhide = nhide,
		.devices = (const char *const *)dev, .ndevices = ndev,
		.env = (const char *const *)cfg->env, .nenv = cfg->nenv,
		.ro = (const char *const *)cfg->ro, .nro = cfg->nro,
		.rw = (const char *const *)cfg->rw, .nrw = cfg->nrw,
		.user = cfg->user, .bwrap = cfg->bwrap, .limits = cfg->limits,
	};
	r = builds ? sandbox_open(out, &o) : sandbox_plan(out, &o);
	for (i = 0; i < nhide; i++)
		free(hide[i]);
	for (i = 0; i < ndev; i++)
		free(dev[i]);
	free(hide);
	free(dev);
	return r;
}

/* Warns of each absolute path text names (a word that starts with '/'
 * at its start or after a blank, a quote, '=' or ':') that a sandboxed step
 * will not see as the host has it. */
static void unseen_paths(const struct sandbox *s, const char *key, const char *name,
			const char *text)
{
	const char *p;

	for (p = text; p && *p; p++) {
		const char *why;
		char *path;

		if (*p != '/' || (p > text && !strchr(" \t'\"=:", p[-1])))
			continue;
		path = xstrndup(p, strcspn(p, " \t'\";|&()<>`$"));
		if (!sandbox_shows(s, path, &why)) {
			log_warnx("sandbox: [%s%s%s] names '%s', which a sandboxed step does not see "
				  "(%s): add it to [sandbox] ro, or rw where the step writes there",
				  key, name ? " " : "", name ? name : "", path, why);
		}
		p += strlen(path) - 1;
		free(path);
	}
}

/* The suite's commands, environment and arguments, read for paths the
 * sandbox hides (docs/security.md). */
static void unseen_suite_paths(const struct sandbox *s, const struct agent_suite *su)
{
	size_t i, j;

	unseen_paths(s, "build", NULL, su->build_command);
	for (i = 0; i < su->nbuild_env; i++)
		unseen_paths(s, "build", NULL, su->build_env[i]);
	unseen_paths(s, "build", NULL, su->toolchain);
	for (i = 0; i < su->nrunners; i++)
		unseen_paths(s, "runner", su->runners[i].name, su->runners[i].command);
	for (i = 0; i < su->ncases; i++)
		for (j = 0; j < su->cases[i].nargs; j++)
			unseen_paths(s, "case", su->cases[i].name, su->cases[i].args[j]);
}

int agent_sandbox_view(const struct agent_config *c, const struct host_profile *hp)
{
	struct sandbox *s = NULL;
	struct strbuf sb = STRBUF_INIT;
	int r;

	if (c->sandbox.mode == AGENT_SANDBOX_OFF)
		return 0;
	r = sandbox_make(&s, c, hp, NULL);
	if (r == -ENOENT && c->sandbox.mode == AGENT_SANDBOX_AUTO) {
		printf("sandbox: none here: %s\n", err_last());
		return 0;
	}
	if (r < 0)
		return r;
	sandbox_view(&sb, s);
	printf("a sandboxed step sees, and nothing else of this machine:\n%s", sb.buf);
	if (!c->suite_file)
		unseen_suite_paths(s, &c->suite);
	strbuf_release(&sb);
	sandbox_free(s);
	return 0;
}

int agent_sandbox_open(struct agent *a)
{
	const struct agent_sandbox *cfg = &a->cfg->sandbox;
	char *builds;
	int r;

	if (cfg->mode == AGENT_SANDBOX_OFF) {
		a->unsandboxed = xstrdup("[sandbox] mode = off: builds and processes run as they "
					 "are, and pull heads are not built");
		log_warnx("sandbox: %s", a->unsandboxed);
		return 0;
	}
	builds = xasprintf("%s/builds", a->cfg->workdir);
	r = fs_mkdir_p(builds);
	if (r == 0)
		r = sandbox_make(&a->sandbox, a->cfg, a->profile, builds);
	free(builds);
	if (r == 0) {
		say(a, a->sandbox);
		return 0;
	}
	if (cfg->mode == AGENT_SANDBOX_ON)
		return err_set(r, "sandbox: %s ([sandbox] mode = on)", err_last());
	/* Only a missing bwrap or a kernel without the namespaces lets auto go
	 * on without it; another failure is said, and nothing is built. */
	if (r != -ENOENT && r != -EPERM)
		return err_set(r, "sandbox: %s; nothing is built without it", err_last());
	a->unsandboxed = xasprintf("no sandbox here (%s): builds and processes run as they are, "
				   "and pull heads are not built", err_last());
	log_warnx("sandbox: %s", a->unsandboxed);
	return 0;
}
