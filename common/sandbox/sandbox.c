/*
 * The sandbox every build, contract runner and timed process of an agent
 * runs in: bubblewrap (bwrap, from Debian) around the child, planned here
 * and run by wrap.c, through child.c's wrap. What a sandboxed process sees
 * (docs/security.md) is denied by default: a root of its own, read-only,
 * holding
 * - the system's programs and libraries (/usr, /bin, /sbin, /lib*) and the
 *   parts of /etc that toolchains, the loader and name lookups read, all
 *   read-only; /sys read-only where device nodes are passed;
 * - a minimal /dev with the GPU device nodes the host profile names; its
 *   own /proc (a PID namespace: it sees only itself and its children);
 *   a private /tmp, /var/tmp, /run and /dev/shm, each of a bounded size;
 * - the step's own directories (a build's, writable; the builds a timed
 *   process or contract runner reads, read-only) and the caller's ro and
 *   rw paths, at their own paths; nothing else of the host: no home, no
 *   /var, no /srv, no file of another service;
 * - no network unless the recipe asks for it; no further user namespace;
 * - a clean environment (sandbox_env_init): only the names the caller
 *   passes, with HOME and TMPDIR on the private /tmp;
 * - limits on processes, memory per process, file size and open files;
 *   the time bound is the caller's timeout, as without a sandbox.
 * Everything in the sandbox dies with it: bwrap's first process is the
 * namespace's init, and it dies with bwrap (--die-with-parent), which dies
 * with perfd (PR_SET_PDEATHSIG) or at the timeout's signal.
 * A perfd running as root runs the sandbox as an unprivileged user
 * (nobody unless the caller names another), so that root's own files stay closed
 * and the process limit binds; the paths it shows then reach bwrap through
 * a portal (wrap.c), whatever the modes of their parents.
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

#include "sandbox-internal.h"

extern char **environ;

static const char *const bwrap_paths[] = { "/usr/bin/bwrap", "/bin/bwrap",
					   "/usr/local/bin/bwrap", NULL };

const char *const sandbox_private_dirs[] = { "/tmp", "/var/tmp", "/run", "/dev/shm", NULL };

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

void sandbox_strv_push(char ***v, size_t *n, const char *s)
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

bool sandbox_path_under(const char *path, const char *dir)
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

static void add(char ***v, size_t *n, const char *a, const char *b, const char *c)
{
	sandbox_strv_push(v, n, a);
	if (b)
		sandbox_strv_push(v, n, b);
	if (c)
		sandbox_strv_push(v, n, c);
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
			sandbox_strv_push(&s->devices, &s->ndevices, g.gl_pathv[j]);
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
		if (is_dir(dirs[i]) && !sandbox_path_under(bwrap, dirs[i]))
			return dirs[i];
	return dirs[i];
}

static int drop_user(struct sandbox *s, const char *user, const char *name)
{
	struct passwd *pw;

	if (geteuid() != 0)
		return 0;
	errno = 0;
	pw = getpwnam(user);
	if (!pw)
		return err_set(errno ? -errno : -ENOENT, "%s '%s': %s", name, user,
			       errno ? strerror(errno) : "no such user");
	if (pw->pw_uid == 0)
		return err_set(-EINVAL, "%s '%s' is root: a sandbox never runs as root", name,
			       user);
	s->drop = true;
	s->user = xstrdup(user);
	s->portal = pick_portal(s->bwrap);
	s->uid = pw->pw_uid;
	s->gid = pw->pw_gid;
	return 0;
}

/* A step's cgroup bounds not given: half of the machine's memory, and
 * the process limit (or 4096). */
static void step_defaults(struct sandbox_limits *l)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	if (l->step_memory_mb <= 0)
		l->step_memory_mb = pages > 0 && size > 0 ?
			(long)((double)pages * (double)size / 2 / (1024 * 1024)) : 4096;
	if (l->step_processes <= 0)
		l->step_processes = l->processes > 0 ? l->processes : 4096;
}

const struct sandbox_limits *sandbox_limits_of(const struct sandbox *s)
{
	return &s->limits;
}

int sandbox_plan(struct sandbox **out, const struct sandbox_opts *o)
{
	struct sandbox *s = xcalloc(1, sizeof(*s));
	size_t i;
	int r = 0;

	*out = NULL;
	s->limits = o->limits;
	step_defaults(&s->limits);
	sandbox_cgroups_probe(s);
	s->ro_name = xstrdup(o->ro_name ? o->ro_name : "ro");
	s->rw_name = xstrdup(o->rw_name ? o->rw_name : "rw");
	if (o->bwrap)
		s->bwrap = xstrdup(o->bwrap);
	r = o->bwrap ? 0 : find_bwrap(&s->bwrap);
	if (r == 0 && !o->user && geteuid() == 0 && !getpwnam(SANDBOX_DEFAULT_USER)) {
		s->fallback = "no user '" SANDBOX_DEFAULT_USER "' here, which the install makes "
			      "for the sandbox alone (docs/deploy.md): it runs as '"
			      SANDBOX_FALLBACK_USER "', whose processes other daemons share";
		r = drop_user(s, SANDBOX_FALLBACK_USER, o->user_name ? o->user_name : "user");
	} else if (r == 0) {
		r = drop_user(s, o->user ? o->user : SANDBOX_DEFAULT_USER,
			      o->user_name ? o->user_name : "user");
	}
	if (r < 0)
		goto out;
	for (i = 0; i < o->nenv; i++)
		sandbox_strv_push(&s->env_names, &s->nenv_names, o->env[i]);
	for (i = 0; i < o->nro; i++)
		sandbox_strv_push(&s->ro, &s->nro, o->ro[i]);
	for (i = 0; i < o->nrw; i++)
		sandbox_strv_push(&s->rw, &s->nrw, o->rw[i]);
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
	free(s->ro_name);
	free(s->rw_name);
	free(s->user);
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
		else if (sandbox_path_under(path, "/etc"))
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
	for (i = 0; sandbox_private_dirs[i]; i++) {
		if (s->limits.tmp_mb)
			strbuf_addf(out, "%s (private, empty, %ld MB)\n", sandbox_private_dirs[i],
				    s->limits.tmp_mb);
		else
			strbuf_addf(out, "%s (private, empty)\n", sandbox_private_dirs[i]);
	}
	for (i = 0; i < s->nro; i++)
		strbuf_addf(out, "%s (read-only: %s)\n", s->ro[i], s->ro_name);
	for (i = 0; i < s->nrw; i++)
		strbuf_addf(out, "%s (writable: %s)\n", s->rw[i], s->rw_name);
	strbuf_adds(out, "the step's own directories: a build's writable, those it reads "
		      "read-only\n");
}

const char *sandbox_user_fallback(const struct sandbox *s)
{
	return s->fallback;
}

void sandbox_describe(struct strbuf *out, const struct sandbox *s)
{
	size_t i;

	strbuf_addf(out, "%s%s%s, nodes", s->bwrap, s->drop ? " as " : "", s->drop ? s->user : "");
	for (i = 0; i < s->ndevices; i++)
		strbuf_addf(out, " %s", s->devices[i]);
	if (!s->ndevices)
		strbuf_adds(out, " none");
}

bool sandbox_shows(const struct sandbox *s, const char *path, const char **out_why)
{
	size_t i;

	*out_why = NULL;
	for (i = 0; i < s->nro; i++)
		if (sandbox_path_under(path, s->ro[i]))
			return true;
	for (i = 0; i < s->nrw; i++)
		if (sandbox_path_under(path, s->rw[i]))
			return true;
	for (i = 0; sandbox_private_dirs[i]; i++) {
		if (sandbox_path_under(path, sandbox_private_dirs[i])) {
			*out_why = "its /tmp, /var/tmp, /run and /dev/shm are private and empty";
			return false;
		}
	}
	for (i = 0; i + 2 < s->nsystem; i += 3)
		if (sandbox_path_under(path, s->system[i + 2]))
			return true;
	if (sandbox_path_under(path, "/dev") || sandbox_path_under(path, "/proc") ||
	    (s->ndevices && sandbox_path_under(path, "/sys")))
		return true;
	*out_why = "nothing outside the view is shown";
	return false;
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
