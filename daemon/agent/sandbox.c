/*
 * The agent's sandbox (docs/security.md): what it hides (the agent's own
 * files), which device nodes it passes (the host profile's), and what the
 * agent does where bubblewrap cannot run ([sandbox] mode).
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
static void hidden(struct agent *a, char ***v, size_t *n)
{
	static const char *const db_files[] = { "", "-wal", "-shm", "-journal", ".agent-lock" };
	const struct agent_config *c = a->cfg;
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
static void nodes(struct agent *a, char ***v, size_t *n)
{
	const char *text = a->profile ? a->profile->nodes : HOST_DEFAULT_NODES;
	char *copy, *save = NULL, *w;
	size_t i;

	if (a->cfg->sandbox.nnodes) {
		for (i = 0; i < a->cfg->sandbox.nnodes; i++)
			push(v, n, xstrdup(a->cfg->sandbox.nodes[i]));
		return;
	}
	if (a->profile && !text)
		text = host_profile_has_device(a->profile) ? HOST_DEFAULT_NODES : "";
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
	strbuf_release(&sb);
}

int agent_sandbox_open(struct agent *a)
{
	const struct agent_sandbox *cfg = &a->cfg->sandbox;
	char **hide = NULL, **dev = NULL, *builds;
	size_t nhide = 0, ndev = 0, i;
	struct sandbox_opts o;
	int r;

	if (cfg->mode == AGENT_SANDBOX_OFF) {
		a->unsandboxed = xstrdup("[sandbox] mode = off: builds and processes run as they "
					 "are, and pull heads are not built");
		log_warnx("sandbox: %s", a->unsandboxed);
		return 0;
	}
	builds = xasprintf("%s/builds", a->cfg->workdir);
	r = fs_mkdir_p(builds);
	if (r < 0) {
		free(builds);
		return r;
	}
	hidden(a, &hide, &nhide);
	nodes(a, &dev, &ndev);
	o = (struct sandbox_opts){
		.trial_dir = builds,
		.hide = (const char *const *)hide, .nhide = nhide,
		.devices = (const char *const *)dev, .ndevices = ndev,
		.env = (const char *const *)cfg->env, .nenv = cfg->nenv,
		.ro = (const char *const *)cfg->ro, .nro = cfg->nro,
		.rw = (const char *const *)cfg->rw, .nrw = cfg->nrw,
		.user = cfg->user, .bwrap = cfg->bwrap, .limits = cfg->limits,
	};
	r = sandbox_open(&a->sandbox, &o);
	for (i = 0; i < nhide; i++)
		free(hide[i]);
	for (i = 0; i < ndev; i++)
		free(dev[i]);
	free(hide);
	free(dev);
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
