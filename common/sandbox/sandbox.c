/*
 * The sandbox every build, contract runner and timed process of an agent
 * runs in: bubblewrap (bwrap, from Debian) around the child, set up here
 * and started by child.c. What a sandboxed process sees (docs/security.md)
 * is denied by default: a root of its own, read-only, holding
 * - the system's programs and libraries (/usr, /bin, /sbin, /lib*) and the
 *   parts of /etc that toolchains, the loader and name lookups read, all
 *   read-only; /sys read-only where device nodes are passed;
 * - a minimal /dev with the GPU device nodes the host profile names; its
 *   own /proc (a PID namespace: it sees only itself and its children);
 *   a private /tmp, /var/tmp, /run and /dev/shm, each of a bounded size;
 * - the step's own directories (a build's, writable; the builds a timed
 *   process or contract runner reads, read-only) and what [sandbox] ro and
 *   rw name, at their own paths; nothing else of the host: no home, no
 *   /var, no /srv, no file of another service;
 * - no network unless the recipe asks for it; no further user namespace;
 * - a clean environment (sandbox_env_init): only the names of [sandbox]
 *   env, with HOME and TMPDIR on the private /tmp;
 * - limits on processes, memory per process, file size and open files;
 *   the time bound is the caller's timeout, as without a sandbox.
 * Everything in the sandbox dies with it: bwrap's first process is the
 * namespace's init, and it dies with bwrap (--die-with-parent), which dies
 * with perfd (PR_SET_PDEATHSIG) or at the timeout's signal.
 * A perfd running as root runs the sandbox as an unprivileged user
 * (nobody unless [sandbox] user says), so that root's own files stay closed
 * and the process limit binds; the paths it shows then reach bwrap through
 * a portal (struct sandbox_cmd), whatever the modes of their parents.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <fnmatch.h>
#include <glob.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

extern char **environ;

static const char *const bwrap_paths[] = { "/usr/bin/bwrap", "/bin/bwrap",
					   "/usr/local/bin/bwrap", NULL };

/* Directories every sandbox gets empty and private. */
static const char *const private_dirs[] = { "/tmp", "/var/tmp", "/run", "/dev/shm", NULL };

/* The system, read-only: where a path is a symbolic link (/bin on a merged
 * /usr) the sandbox gets the same link. */
static const char *const system_dirs[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
					   "/libx32", NULL };

/* What of /etc a toolchain, the dynamic loader, a name lookup, TLS or a
 * graphics driver reads; glob patterns. Nothing of a service's own. */
static const char *const etc_paths[] = {
	"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/host.conf",
	"/etc/resolv.conf", "/etc/gai.conf", "/etc/services", "/etc/protocols",
	"/etc/ssl", "/etc/ca-certificates", "/etc/ca-certificates.conf", "/etc/pki",
	"/etc/localtime", "/etc/timezone", "/etc/os-release", "/etc/debian_version",
	"/etc/lsb-release", "/etc/locale.alias", "/etc/mime.types", "/etc/gitconfig",
	"/etc/perl", "/etc/python3*", "/etc/vulkan", "/etc/OpenCL", "/etc/glvnd", "/etc/drirc",
	"/etc/fonts", "/etc/terminfo", NULL,
};

static void strv_push(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 2) * sizeof(char *));
	(*v)[(*n)++] = xstrdup(s);
	(*v)[*n] = NULL;
}

static void strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* Whether path is dir or lies under it. */
static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n] || n == 1);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* path as it resolves now, or as written where it does not exist. */
static char *resolved(const char *path)
{
	char buf[PATH_MAX];

	return realpath(path, buf) ? xstrdup(buf) : fs_absolute(path);
}

/* An ro or rw path that holds one of the agent's own files, or lies among
 * them, is refused: it would show them to every build. */
static int check_shown(const char *key, const char *path, const struct sandbox_opts *o)
{
	char *p = resolved(path);
	size_t i;
	int r = 0;

	for (i = 0; i < o->nhide && r == 0; i++) {
		char *h;

		if (!o->hide[i] || !*o->hide[i])
			continue;
		h = resolved(o->hide[i]);
		if (path_under(h, p) || path_under(p, h))
			r = err_set(-EINVAL, "[sandbox] %s '%s' would show the agent's own '%s' to "
				    "every build: name a path that does not hold it", key, path, h);
		free(h);
	}
	free(p);
	return r;
}

static void add(char ***v, size_t *n, const char *a, const char *b, const char *c)
{
	strv_push(v, n, a);
	if (b)
		strv_push(v, n, b);
	if (c)
		strv_push(v, n, c);
}

/* The system's part of the view, found once. */
static void add_system(struct sandbox *s)
{
	size_t i, j;

	for (i = 0; system_dirs[i]; i++) {
		char target[PATH_MAX];
		struct stat st;
		ssize_t len;

		if (lstat(system_dirs[i], &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode) &&
		    (len = readlink(system_dirs[i], target, sizeof(target) - 1)) > 0) {
			target[len] = '\0';
			add(&s->system, &s->nsystem, "--symlink", target, system_dirs[i]);
		} else if (S_ISDIR(st.st_mode)) {
			add(&s->system, &s->nsystem, "--ro-bind", system_dirs[i], system_dirs[i]);
		}
	}
	for (i = 0; etc_paths[i]; i++) {
		glob_t g;

		if (glob(etc_paths[i], GLOB_NOSORT, NULL, &g) != 0)
			continue;
		for (j = 0; j < g.gl_pathc; j++)
			add(&s->system, &s->nsystem, "--ro-bind-try", g.gl_pathv[j], g.gl_pathv[j]);
		globfree(&g);
	}
}

/* The device nodes that the patterns match now; a pattern that matches
 * nothing is no error (a host without /dev/kfd). */
static void add_devices(struct sandbox *s, const char *const *patterns, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		glob_t g;

		if (glob(patterns[i], GLOB_NOSORT, NULL, &g) != 0)
			continue;
		for (j = 0; j < g.gl_pathc; j++) {
			struct stat st;

			if (stat(g.gl_pathv[j], &st) < 0 ||
			    !(S_ISCHR(st.st_mode) || S_ISDIR(st.st_mode)))
				continue;
			strv_push(&s->devices, &s->ndevices, g.gl_pathv[j]);
			if (s->drop && st.st_gid && s->ngroups < SANDBOX_GROUPS_MAX) {
				size_t k;

				for (k = 0; k < s->ngroups && s->groups[k] != st.st_gid; k++)
					;
				if (k == s->ngroups)
					s->groups[s->ngroups++] = st.st_gid;
			}
		}
		globfree(&g);
	}
}

static int find_bwrap(char **out)
{
	size_t i;

	for (i = 0; bwrap_paths[i]; i++) {
		if (access(bwrap_paths[i], X_OK) == 0) {
			*out = xstrdup(bwrap_paths[i]);
			return 0;
		}
	}
	return err_set(-ENOENT, "bubblewrap (bwrap) is not installed (apt-get install "
		       "bubblewrap)");
}

/* A directory to cover with the portal: one that holds nothing bwrap
 * needs (its program, the system it shows). */
static const char *pick_portal(const char *bwrap)
{
	static const char *const dirs[] = { "/mnt", "/media", "/srv", "/tmp" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs) - 1; i++)
		if (is_dir(dirs[i]) && !path_under(bwrap, dirs[i]))
			return dirs[i];
	return dirs[i];
}

static int drop_user(struct sandbox *s, const char *user)
{
	struct passwd *pw;

	if (geteuid() != 0)
		return 0;
	errno = 0;
	pw = getpwnam(user);
	if (!pw)
		return err_set(errno ? -errno : -ENOENT, "[sandbox] user '%s': %s", user,
			       errno ? strerror(errno) : "no such user");
	if (pw->pw_uid == 0)
		return err_set(-EINVAL, "[sandbox] user '%s' is root: a sandbox never runs as "
			       "root", user);
	s->drop = true;
	s->portal = pick_portal(s->bwrap);
	s->uid = pw->pw_uid;
	s->gid = pw->pw_gid;
	return 0;
}

/* Runs "true" in the sandbox once, with dir (when not NULL) bound as a
 * build's directory will be: an error names why it cannot run. */
static int try_it(const struct sandbox *s, const char *dir)
{
	const char *argv[] = { "/bin/true", NULL };
	struct child ch;
	struct child_env env;
	char *why;
	int r;

	sandbox_env_init(&env, s);
	child_init(&ch);
	ch.argv = argv;
	ch.env = (const char *const *)env.v;
	ch.dir = "/";
	ch.timeout_s = 30;
	ch.sandbox = s;
	ch.sandbox_rw = dir;
	r = child_run(&ch);
	if (r == 0 && (why = child_failure(&ch, "a trial process"))) {
		/* A failure of the moment (a process limit reached, a machine
		 * too busy to start it in time) is told apart from a kernel that
		 * refuses the namespaces, and both from any other failure,
		 * which stops the agent rather than let it build unsandboxed. */
		bool passing = ch.timed_out || strstr(why, "Resource temporarily unavailable") ||
			       strstr(why, "Can't fork");
		bool refused = strstr(why, "new namespace") || strstr(why, "uid map") ||
			       strstr(why, "user namespace");

		r = err_set(passing ? -EAGAIN : refused ? -EPERM : -EIO,
			    "bubblewrap cannot run here: %s", why);
		free(why);
	}
	child_release(&ch);
	child_env_release(&env);
	return r;
}

int sandbox_plan(struct sandbox **out, const struct sandbox_opts *o)
{
	struct sandbox *s = xcalloc(1, sizeof(*s));
	size_t i;
	int r = 0;

	*out = NULL;
	for (i = 0; i < o->nro && r == 0; i++)
		r = check_shown("ro", o->ro[i], o);
	for (i = 0; i < o->nrw && r == 0; i++)
		r = check_shown("rw", o->rw[i], o);
	if (r < 0)
		goto out;
	s->limits = o->limits;
	if (o->bwrap)
		s->bwrap = xstrdup(o->bwrap);
	r = o->bwrap ? 0 : find_bwrap(&s->bwrap);
	if (r == 0)
		r = drop_user(s, o->user ? o->user : SANDBOX_DEFAULT_USER);
	if (r < 0)
		goto out;
	for (i = 0; i < o->nenv; i++)
		strv_push(&s->env_names, &s->nenv_names, o->env[i]);
	for (i = 0; i < o->nro; i++)
		strv_push(&s->ro, &s->nro, o->ro[i]);
	for (i = 0; i < o->nrw; i++)
		strv_push(&s->rw, &s->nrw, o->rw[i]);
	add_devices(s, o->devices, o->ndevices);
	add_system(s);
out:
	if (r < 0) {
		sandbox_free(s);
		return r;
	}
	*out = s;
	return 0;
}

int sandbox_open(struct sandbox **out, const struct sandbox_opts *o)
{
	int r = sandbox_plan(out, o);

	if (r == 0 && (r = try_it(*out, o->trial_dir)) < 0) {
		sandbox_free(*out);
		*out = NULL;
	}
	return r;
}

void sandbox_free(struct sandbox *s)
{
	if (!s)
		return;
	free(s->bwrap);
	strv_free(s->system, s->nsystem);
	strv_free(s->devices, s->ndevices);
	strv_free(s->env_names, s->nenv_names);
	strv_free(s->ro, s->nro);
	strv_free(s->rw, s->nrw);
	free(s);
}

static bool env_passed(const struct sandbox *s, const char *entry)
{
	size_t n = strcspn(entry, "="), i;
	char name[256];

	if (n >= sizeof(name) || !entry[n])
		return false;
	memcpy(name, entry, n);
	name[n] = '\0';
	for (i = 0; i < s->nenv_names; i++)
		if (!fnmatch(s->env_names[i], name, 0))
			return true;
	return false;
}

void sandbox_env_init(struct child_env *e, const struct sandbox *s)
{
	size_t i;

	if (!s) {
		child_env_init(e);
		return;
	}
	e->v = xcalloc(1, sizeof(char *));
	e->n = 0;
	for (i = 0; environ[i]; i++)
		if (env_passed(s, environ[i]))
			child_env_set(e, environ[i]);
	child_env_set(e, "HOME=/tmp");
	child_env_set(e, "TMPDIR=/tmp");
	if (!getenv("PATH") || !env_passed(s, "PATH=x"))
		child_env_set(e, "PATH=" SANDBOX_DEFAULT_PATH);
}

void sandbox_view(struct strbuf *out, const struct sandbox *s)
{
	size_t i;

	struct strbuf etc = STRBUF_INIT;

	for (i = 0; i + 2 < s->nsystem; i += 3) {
		const char *path = s->system[i + 1];

		if (!strcmp(s->system[i], "--symlink"))
			strbuf_addf(out, "%s -> %s\n", s->system[i + 2], path);
		else if (path_under(path, "/etc"))
			strbuf_addf(&etc, " %s", path + strlen("/etc/"));
		else
			strbuf_addf(out, "%s (read-only)\n", path);
	}
	if (etc.len)
		strbuf_addf(out, "/etc, only:%s (read-only)\n", etc.buf);
	strbuf_release(&etc);
	if (s->ndevices)
		strbuf_adds(out, "/sys (read-only)\n");
	for (i = 0; i < s->ndevices; i++)
		strbuf_addf(out, "%s (device node)\n", s->devices[i]);
	strbuf_adds(out, "/dev (minimal), /proc (its own processes)\n");
	for (i = 0; private_dirs[i]; i++) {
		if (s->limits.tmp_mb)
			strbuf_addf(out, "%s (private, empty, %ld MB)\n", private_dirs[i],
				    s->limits.tmp_mb);
		else
			strbuf_addf(out, "%s (private, empty)\n", private_dirs[i]);
	}
	for (i = 0; i < s->nro; i++)
		strbuf_addf(out, "%s (read-only: [sandbox] ro)\n", s->ro[i]);
	for (i = 0; i < s->nrw; i++)
		strbuf_addf(out, "%s (writable: [sandbox] rw)\n", s->rw[i]);
	strbuf_adds(out, "the step's own directories: a build's writable, those it reads "
		      "read-only\n");
}

static size_t strv_len(char **v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

/* add() by the vector's own length: cmd->argv is kept NULL-terminated. */
static void cmd_add(struct sandbox_cmd *cmd, const char *a, const char *b, const char *c)
{
	size_t n = strv_len(cmd->argv);

	add(&cmd->argv, &n, a, b, c);
}

bool sandbox_shows(const struct sandbox *s, const char *path, const char **out_why)
{
	size_t i;

	*out_why = NULL;
	for (i = 0; i < s->nro; i++)
		if (path_under(path, s->ro[i]))
			return true;
	for (i = 0; i < s->nrw; i++)
		if (path_under(path, s->rw[i]))
			return true;
	for (i = 0; private_dirs[i]; i++) {
		if (path_under(path, private_dirs[i])) {
			*out_why = "its /tmp, /var/tmp, /run and /dev/shm are private and empty";
			return false;
		}
	}
	for (i = 0; i + 2 < s->nsystem; i += 3)
		if (path_under(path, s->system[i + 2]))
			return true;
	if (path_under(path, "/dev") || path_under(path, "/proc") ||
	    (s->ndevices && path_under(path, "/sys")))
		return true;
	*out_why = "nothing outside the view is shown";
	return false;
}

/* Adds opt and path shown at its own place: directly, or, where we are
 * root, through the portal. try: a path that does not exist is left out. */
static int show(struct sandbox_cmd *cmd, const struct sandbox *s, const char *opt,
		const char *path, bool try)
{
	char *abs = fs_absolute(path), *o = xasprintf("%s%s", opt, try ? "-try" : "");
	struct sandbox_portal *p;
	struct stat st;
	int r = 0;

	if (!s->drop) {
		cmd_add(cmd, o, abs, abs);
		goto out;
	}
	if (stat(abs, &st) < 0) {
		r = -errno;
		if (!(try && r == -ENOENT))
			r = err_set(r, "cannot show '%s' to the sandbox: %s", abs, strerror(-r));
		else
			r = 0;
		goto out;
	}
	if (cmd->nportal == SANDBOX_PORTAL_MAX) {
		r = err_set(-E2BIG, "more than %d paths to show to the sandbox",
			    SANDBOX_PORTAL_MAX);
		goto out;
	}
	cmd->portal = xrealloc(cmd->portal, (cmd->nportal + 1) * sizeof(*cmd->portal));
	p = &cmd->portal[cmd->nportal];
	p->path = xstrdup(abs);
	p->is_dir = S_ISDIR(st.st_mode);
	snprintf(p->to, sizeof(p->to), "%s/%zu", s->portal, cmd->nportal);
	cmd->nportal++;
	cmd_add(cmd, opt, p->to, abs);
out:
	free(o);
	free(abs);
	return r;
}

int sandbox_cmd_init(struct sandbox_cmd *out, const struct sandbox *s, const struct child *c,
		     int status_fd)
{
	char fd[16], size[32];
	size_t i, n;
	int r = 0;

	*out = (struct sandbox_cmd){ .portal_dir = s->portal };
	cmd_add(out, s->bwrap, NULL, NULL);
	for (i = 0; i < s->nsystem; i++)
		cmd_add(out, s->system[i], NULL, NULL);
	if (s->ndevices)
		cmd_add(out, "--ro-bind-try", "/sys", "/sys");
	cmd_add(out, "--dev", "/dev", "--proc");
	cmd_add(out, "/proc", NULL, NULL);
	snprintf(size, sizeof(size), "%ld", s->limits.tmp_mb * 1024 * 1024);
	for (i = 0; private_dirs[i]; i++) {
		if (s->limits.tmp_mb)
			cmd_add(out, "--size", size, NULL);
		cmd_add(out, "--tmpfs", private_dirs[i], NULL);
	}
	for (i = 0; i < s->nro && r == 0; i++)
		r = show(out, s, "--ro-bind", s->ro[i], true);
	for (i = 0; i < s->nrw && r == 0; i++)
		r = show(out, s, "--bind", s->rw[i], true);
	for (i = 0; c->sandbox_ro && c->sandbox_ro[i] && r == 0; i++)
		r = show(out, s, "--ro-bind", c->sandbox_ro[i], false);
	if (c->sandbox_rw && r == 0)
		r = show(out, s, "--bind", c->sandbox_rw, false);
	if (r < 0)
		return r;
	for (i = 0; i < s->ndevices; i++)
		cmd_add(out, "--dev-bind", s->devices[i], s->devices[i]);
	cmd_add(out, "--remount-ro", "/", "--unshare-all");
	cmd_add(out, "--unshare-user", "--disable-userns", "--die-with-parent");
	cmd_add(out, "--new-session", NULL, NULL);
	if (c->sandbox_net)
		cmd_add(out, "--share-net", NULL, NULL);
	if (c->dir) {
		char *dir = fs_absolute(c->dir);

		cmd_add(out, "--chdir", dir, NULL);
		free(dir);
	}
	snprintf(fd, sizeof(fd), "%d", status_fd);
	cmd_add(out, "--json-status-fd", fd, "--");
	n = strv_len(out->argv);
	for (i = 0; c->argv[i]; i++)
		strv_push(&out->argv, &n, c->argv[i]);
	return 0;
}

void sandbox_cmd_release(struct sandbox_cmd *cmd)
{
	size_t i;

	for (i = 0; cmd->argv && cmd->argv[i]; i++)
		free(cmd->argv[i]);
	free(cmd->argv);
	for (i = 0; i < cmd->nportal; i++)
		free(cmd->portal[i].path);
	free(cmd->portal);
	*cmd = (struct sandbox_cmd){ 0 };
}

int sandbox_own(const struct sandbox *s, const char *path)
{
	if (!s || !s->drop)
		return 0;
	return fs_chown_r(path, s->uid, s->gid);
}

/* Whether the process pid is a bwrap with an argument under dir (of n
 * bytes, ending in '/'). */
static bool names_dir(const char *pid, const char *dir, size_t n)
{
	char path[64], buf[16384];
	ssize_t len;
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	if (strcmp(strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf, "bwrap"))
		return false;
	for (i = strlen(buf) + 1; i < (size_t)len; i += strlen(buf + i) + 1)
		if (!strncmp(buf + i, dir, n))
			return true;
	return false;
}

int sandbox_kill_leftovers(const char *dir)
{
	char *abs = fs_absolute(dir), *under = xasprintf("%s/", abs);
	DIR *d = opendir("/proc");
	struct dirent *e;
	int killed = 0;

	free(abs);
	if (!d) {
		free(under);
		return 0;  /* no /proc: none to be seen */
	}
	while ((e = readdir(d))) {
		if (strspn(e->d_name, "0123456789") != strlen(e->d_name) ||
		    !names_dir(e->d_name, under, strlen(under)))
			continue;
		if (kill((pid_t)atol(e->d_name), SIGKILL) == 0)
			killed++;
	}
	closedir(d);
	free(under);
	return killed;
}
