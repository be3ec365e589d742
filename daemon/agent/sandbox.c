/*
 * The agent's sandbox (docs/security.md): which of its files no [sandbox]
 * ro or rw may show, which device nodes it passes (the host profile's), what
 * --check prints of the view, and what the agent does where bubblewrap
 * cannot run ([sandbox] mode).
 */
#include <errno.h>
#include <limits.h>
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
	const struct sandbox_limits *l = &a->cfg->sandbox.limits, *in = sandbox_limits_of(s);
	struct strbuf sb = STRBUF_INIT;
	const char *why;

	sandbox_describe(&sb, s);
	log_info("sandbox: %s; processes %ld, memory %ld MB, file size %ld MB, open files %ld "
		 "(0: none)", sb.buf, l->processes, l->memory_mb, l->file_size_mb, l->open_files);
	if (sandbox_user_fallback(s))
		log_warnx("sandbox: %s", sandbox_user_fallback(s));
	if (sandbox_cgroups(s, &why))
		log_info("sandbox: each private tmpfs %ld MB (0: none); each step in cgroups of its "
			 "own: memory %ld MB (its tmpfs included), %ld processes", l->tmp_mb,
			 in->step_memory_mb, in->step_processes);
	else
		log_info("sandbox: each private tmpfs %ld MB (0: none); no cgroup per step (%s): "
			 "memory is bounded per process, processes per user", l->tmp_mb, why);
	strbuf_release(&sb);
}

/* path as it resolves now, or as written where it does not exist. */
static char *resolved(const char *path)
{
	char buf[PATH_MAX];

	return realpath(path, buf) ? xstrdup(buf) : fs_absolute(path);
}

/* Where path is shown from: as it resolves now, but below a [sandbox] rw
 * (which the steps write) without following what lies there: a link a
 * build made is never shown (common/sandbox/wrap.c leaves it out of each
 * step), so it neither passes nor stops the agent here. */
static char *shown_from(const char *path, char *const *rw, size_t nrw)
{
	char *base, *out;
	size_t i, n;

	for (i = 0; i < nrw; i++) {
		if (!strcmp(path, rw[i]) || !sandbox_path_under(path, rw[i]))
			continue;
		for (n = strlen(rw[i]); n > 1 && rw[i][n - 1] == '/'; n--)
			;
		base = resolved(rw[i]);
		out = xasprintf("%s%s", strcmp(base, "/") ? base : "", path + n);
		free(base);
		return out;
	}
	return resolved(path);
}

/* A path of [sandbox] key (ro or rw) that holds one of the agent's own
 * files, or lies among them, is refused: it would show them to every
 * build. */
static int check_shown(const char *key, char *const *paths, size_t n, char **hide,
		       size_t nhide, char *const *rw, size_t nrw)
{
	size_t i, j;
	int r = 0;

	for (i = 0; i < n && r == 0; i++) {
		char *p = shown_from(paths[i], rw, nrw);

		for (j = 0; j < nhide && r == 0; j++) {
			char *h = resolved(hide[j]);

			if (sandbox_path_under(h, p) || sandbox_path_under(p, h))
				r = err_set(-EINVAL, "[sandbox] %s '%s' would show the agent's own "
					    "'%s' to every build: name a path that does not hold it",
					    key, paths[i], h);
			free(h);
		}
		free(p);
	}
	return r;
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
	r = check_shown("ro", cfg->ro, cfg->nro, hide, nhide, cfg->rw, cfg->nrw);
	if (r == 0)
		r = check_shown("rw", cfg->rw, cfg->nrw, hide, nhide, cfg->rw, cfg->nrw);
	nodes(c, hp, &dev, &ndev);
	o = (struct sandbox_opts){
		.trial_dir = builds,
		.devices = (const char *const *)dev, .ndevices = ndev,
		.env = (const char *const *)cfg->env, .nenv = cfg->nenv,
		.ro = (const char *const *)cfg->ro, .nro = cfg->nro,
		.rw = (const char *const *)cfg->rw, .nrw = cfg->nrw,
		.user = cfg->user, .bwrap = cfg->bwrap, .limits = cfg->limits,
		.ro_name = "[sandbox] ro", .rw_name = "[sandbox] rw", .user_name = "[sandbox] user",
	};
	if (r == 0)
		r = builds ? sandbox_open(out, &o) : sandbox_plan(out, &o);
	for (i = 0; i < nhide; i++)
		free(hide[i]);
	for (i = 0; i < ndev; i++)
		free(dev[i]);
	free(hide);
	free(dev);
	return r;
}

/* The paths said already, so that each is said once, with the first key
 * that names it. */
struct unseen {
	const struct sandbox *s;
	char **said;
	size_t nsaid;
	char **own;            /* the agent's own files (hidden()) */
	size_t nown;
};

static void unseen_init(struct unseen *u, const struct agent_config *c, const struct sandbox *s)
{
	*u = (struct unseen){ .s = s };
	hidden(c, &u->own, &u->nown);
}

/* The next absolute path text names from *at on, the caller's: a word that
 * starts with '/' (not "//", a URL's) at text's start or after a blank, a
 * quote, '(', '=' or ':', up to a blank, a quote, ':', ',' or a shell
 * operator, without a final '.' or '/'; "/" alone is none. NULL at the end
 * of text. */
static char *next_path(const char *text, const char **at)
{
	const char *p = *at;
	size_t n;

	for (; *p; p++) {
		if (*p != '/' || p[1] == '/' || (p > text && !strchr(" \t\n'\"(=:", p[-1])))
			continue;
		n = strcspn(p, " \t\n'\";|&()<>`$:,");
		*at = p + n;
		while (n > 1 && (p[n - 1] == '.' || p[n - 1] == '/'))
			n--;
		if (n > 1)
			return xstrndup(p, n);
		p = *at - 1;
	}
	*at = p;
	return NULL;
}

/* Whether path is for u to say: the sandbox does not show it (*why says
 * why) and it was not said before. */
static bool unseen(struct unseen *u, const char *path, const char **why)
{
	size_t i;

	if (sandbox_shows(u->s, path, why))
		return false;
	for (i = 0; i < u->nsaid; i++)
		if (!strcmp(u->said[i], path))
			return false;
	push(&u->said, &u->nsaid, xstrdup(path));
	return true;
}

static void unseen_release(struct unseen *u)
{
	size_t i;

	for (i = 0; i < u->nsaid; i++)
		free(u->said[i]);
	free(u->said);
	for (i = 0; i < u->nown; i++)
		free(u->own[i]);
	free(u->own);
}

/* A path a step will not see, why, and what shows it: nothing, for the
 * agent's own files. */
static void say_unseen(struct strbuf *out, const struct unseen *u, const char *path,
		       const char *why)
{
	size_t i;

	for (i = 0; i < u->nown; i++) {
		if (sandbox_path_under(path, u->own[i])) {
			strbuf_addf(out, "'%s', which is the agent's own (its work directory, "
				    "database, configuration or a token file): no step sees it, "
				    "and no [sandbox] ro may show it", path);
			return;
		}
	}
	strbuf_addf(out, "'%s', which a sandboxed step does not see (%s): [sandbox] ro = %s (or "
		    "its directory; rw where the step writes there) shows it, or move it into the "
		    "repository", path, why, path);
}

/* Warns of each absolute path text names that a sandboxed step will not
 * see, naming key, the configuration's key that holds text. */
static void unseen_paths(struct unseen *u, const char *key, const char *text)
{
	struct strbuf sb = STRBUF_INIT;
	const char *at = text, *why;
	char *path;

	while (text && (path = next_path(text, &at))) {
		if (unseen(u, path, &why)) {
			strbuf_reset(&sb);
			say_unseen(&sb, u, path, why);
			log_warnx("sandbox: %s names %s", key, sb.buf);
		}
		free(path);
	}
	strbuf_release(&sb);
}

/* unseen_paths of a section's key: "[section name] key". */
static void unseen_key(struct unseen *u, const char *section, const char *name,
		       const char *key, const char *text)
{
	char *k = xasprintf("[%s%s%s] %s", section, name ? " " : "", name ? name : "", key);

	unseen_paths(u, k, text);
	free(k);
}

void agent_sandbox_unseen(const struct agent_config *c, const struct sandbox *s,
			  const struct agent_suite *su)
{
	struct unseen u;
	size_t i, j;

	unseen_init(&u, c, s);
	unseen_key(&u, "build", NULL, "command", su->build_command);
	for (i = 0; i < su->nbuild_env; i++)
		unseen_key(&u, "build", NULL, "env", su->build_env[i]);
	unseen_key(&u, "build", NULL, "toolchain", su->toolchain);
	for (i = 0; i < su->nartifacts; i++)
		unseen_key(&u, "build", NULL, "artifacts", su->artifacts[i]);
	for (i = 0; i < su->nrunners; i++)
		unseen_key(&u, "runner", su->runners[i].name, "command", su->runners[i].command);
	for (i = 0; i < su->ncases; i++) {
		unseen_key(&u, "case", su->cases[i].name, "command", su->cases[i].program);
		for (j = 0; j < su->cases[i].nargs; j++)
			unseen_key(&u, "case", su->cases[i].name, "command",
				   su->cases[i].args[j]);
	}
	unseen_release(&u);
}

/* The words of a line that says a path was looked for and not there. */
static const char *const missing_words[] = {
	"No such file or directory", "not found", "Permission denied", "cannot access",
	"can't open", "cannot open", "does not exist",
};

static bool says_missing(const char *line)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(missing_words); i++)
		if (strstr(line, missing_words[i]))
			return true;
	return false;
}

size_t agent_sandbox_tried(struct strbuf *out, const struct agent_config *c,
			   const struct sandbox *s, const char *log, size_t len, const char *dir,
			   size_t max)
{
	const char *why, *p;
	size_t at, n;
	char *line, *path;
	struct unseen u;

	unseen_init(&u, c, s);
	for (at = 0; at < len && u.nsaid < max; at += strcspn(log + at, "\n") + 1) {
		line = xstrndup(log + at, strcspn(log + at, "\n"));
		if (!says_missing(line))
			*line = '\0';
		for (p = line; (path = next_path(line, &p)); free(path)) {
			/* The step's own directory is shown: not a path it missed. */
			if (sandbox_path_under(path, dir))
				continue;
			if (u.nsaid < max && unseen(&u, path, &why)) {
				strbuf_adds(out, "the build tried ");
				say_unseen(out, &u, path, why);
				strbuf_addch(out, '\n');
			}
		}
		free(line);
	}
	n = u.nsaid;
	unseen_release(&u);
	return n;
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
		agent_sandbox_unseen(c, s, &c->suite);
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
