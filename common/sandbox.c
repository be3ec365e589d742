/*
 * The sandbox every build, contract runner and timed process of an agent
 * runs in: bubblewrap (bwrap, from Debian) around the child, set up here
 * and started by child.c. What a sandboxed process sees (docs/security.md):
 * - the system read-only; a private /tmp, /var/tmp and /run; a minimal /dev
 *   with the GPU device nodes the host profile names passed through; its
 *   own /proc (a PID namespace: it sees only itself and its children);
 * - none of the agent's own files: each hidden path is covered by an empty
 *   directory or an empty file;
 * - the one directory it may write (a build's own), bound over that;
 * - no network unless the recipe asks for it;
 * - a clean environment (sandbox_env_init): only the names of [sandbox]
 *   env, with HOME and TMPDIR on the private /tmp;
 * - limits on processes, memory per process, file size and open files;
 *   the time bound is the caller's timeout, as without a sandbox.
 * Everything in the sandbox dies with it: bwrap's first process is the
 * namespace's init, and it dies with bwrap (--die-with-parent), which dies
 * with perfd (PR_SET_PDEATHSIG) or at the timeout's signal.
 * A perfd running as root runs the sandbox as an unprivileged user
 * (nobody unless [sandbox] user says), so that root's own files stay closed
 * and the process limit binds.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <fnmatch.h>
#include <glob.h>
#include <grp.h>
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
static const char *const private_dirs[] = { "/tmp", "/var/tmp", "/run", NULL };

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

static bool under_private_dir(const char *path)
{
	size_t i, n;

	for (i = 0; private_dirs[i]; i++) {
		n = strlen(private_dirs[i]);
		if (!strncmp(path, private_dirs[i], n) && (path[n] == '/' || !path[n]))
			return true;
	}
	return false;
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
		 * too busy to start it in time) is no reason to run without a
		 * sandbox: it is told apart from one that lasts (a kernel that
		 * refuses the namespaces, a directory closed to its user). */
		bool passing = ch.timed_out || strstr(why, "Resource temporarily unavailable") ||
			       strstr(why, "Can't fork");

		r = err_set(passing ? -EAGAIN : -EPERM, "bubblewrap cannot run here: %s%s", why,
			    s->drop && dir && strstr(why, "Permission denied") ?
			    " (a directory above the work directory is closed to the sandbox's user: "
			    "run the agent as its own user, or open those directories with chmod o+x)" :
			    "");
		free(why);
	}
	child_release(&ch);
	child_env_release(&env);
	return r;
}

int sandbox_open(struct sandbox **out, const struct sandbox_opts *o)
{
	struct sandbox *s = xcalloc(1, sizeof(*s));
	size_t i;
	int r;

	*out = NULL;
	s->limits = o->limits;
	if (o->bwrap)
		s->bwrap = xstrdup(o->bwrap);
	r = o->bwrap ? 0 : find_bwrap(&s->bwrap);
	if (r == 0)
		r = drop_user(s, o->user ? o->user : SANDBOX_DEFAULT_USER);
	if (r < 0)
		goto out;
	for (i = 0; i < o->nhide; i++)
		if (o->hide[i] && *o->hide[i] && !under_private_dir(o->hide[i]))
			strv_push(&s->hide, &s->nhide, o->hide[i]);
	for (i = 0; i < o->nenv; i++)
		strv_push(&s->env_names, &s->nenv_names, o->env[i]);
	for (i = 0; i < o->nro; i++)
		strv_push(&s->ro, &s->nro, o->ro[i]);
	for (i = 0; i < o->nrw; i++)
		strv_push(&s->rw, &s->nrw, o->rw[i]);
	add_devices(s, o->devices, o->ndevices);
	r = try_it(s, o->trial_dir);
out:
	if (r < 0) {
		sandbox_free(s);
		return r;
	}
	*out = s;
	return 0;
}

void sandbox_free(struct sandbox *s)
{
	if (!s)
		return;
	free(s->bwrap);
	strv_free(s->hide, s->nhide);
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

static void add(char ***v, size_t *n, const char *a, const char *b, const char *c)
{
	strv_push(v, n, a);
	if (b)
		strv_push(v, n, b);
	if (c)
		strv_push(v, n, c);
}

/* Adds opt, then path twice (source and destination), made absolute:
 * bwrap takes no relative path. */
static void add_bind(char ***v, size_t *n, const char *opt, const char *path)
{
	char *p = fs_absolute(path);

	add(v, n, opt, p, p);
	free(p);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char **sandbox_argv(const struct sandbox *s, const struct child *c, int status_fd)
{
	char **v = NULL, fd[16];
	size_t n = 0, i;

	add(&v, &n, s->bwrap, "--ro-bind", "/");
	add(&v, &n, "/", NULL, NULL);
	add(&v, &n, "--dev", "/dev", NULL);
	add(&v, &n, "--proc", "/proc", NULL);
	for (i = 0; private_dirs[i]; i++)
		if (is_dir(private_dirs[i]))
			add(&v, &n, "--tmpfs", private_dirs[i], NULL);
	/* What the configuration shows, then what is hidden over it, then the
	 * step's own directories (inside the hidden work directory). */
	for (i = 0; i < s->nro; i++)
		add_bind(&v, &n, "--ro-bind-try", s->ro[i]);
	for (i = 0; i < s->nrw; i++)
		add_bind(&v, &n, "--bind-try", s->rw[i]);
	for (i = 0; i < s->nhide; i++) {
		struct stat st;

		if (stat(s->hide[i], &st) < 0)
			continue;  /* nothing there to see */
		if (S_ISDIR(st.st_mode))
			add(&v, &n, "--tmpfs", s->hide[i], NULL);
		else
			add(&v, &n, "--ro-bind", "/dev/null", s->hide[i]);
	}
	for (i = 0; c->sandbox_ro && c->sandbox_ro[i]; i++)
		add_bind(&v, &n, "--ro-bind", c->sandbox_ro[i]);
	if (c->sandbox_rw)
		add_bind(&v, &n, "--bind", c->sandbox_rw);
	for (i = 0; i < s->ndevices; i++)
		add(&v, &n, "--dev-bind", s->devices[i], s->devices[i]);
	add(&v, &n, "--unshare-all", "--die-with-parent", "--new-session");
	if (c->sandbox_net)
		add(&v, &n, "--share-net", NULL, NULL);
	if (c->dir) {
		char *dir = fs_absolute(c->dir);

		add(&v, &n, "--chdir", dir, NULL);
		free(dir);
	}
	snprintf(fd, sizeof(fd), "%d", status_fd);
	add(&v, &n, "--json-status-fd", fd, "--");
	for (i = 0; c->argv[i]; i++)
		strv_push(&v, &n, c->argv[i]);
	return v;
}

void sandbox_argv_free(char **argv)
{
	size_t i;

	for (i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
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
