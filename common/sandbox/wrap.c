/*
 * A child run in a sandbox: the wrap (struct child_wrap, common.h) that
 * child.c starts it through. Before the fork, bwrap's command line around
 * the child's, with a status pipe as the child's descriptor 3; in the
 * child, just before its exec, the portal, the limits and the sandbox's
 * user; after it, bwrap's word on the program: its exit code, a signal, or
 * why it could not start it. sandbox_open's trial runs through it too.
 *
 * A perfd running as root runs bwrap as the sandbox's user, who may not be
 * able to reach a path the sandbox shows (a parent closed to that user, as
 * /root). Each such path is then listed in the portal: the child, still
 * root and in a mount namespace of its own, binds it under s->portal from
 * a descriptor it opened, where bwrap finds it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox-internal.h"

#define PORTAL_MAX 256

/* A path shown through the portal. */
struct portal {
	char *path;                  /* the path shown, absolute */
	bool is_dir;
	char to[32];                 /* portal/N */
};

/* One child's run in the sandbox: what the child reads between its fork
 * and its exec, and bwrap's status after. */
struct wrapped {
	const struct sandbox *s;
	char **argv;
	size_t argc;
	struct portal *portal;
	size_t nportal;
	int status;                  /* the status pipe's end we read; -1: none */
	struct step_cgroup cg;       /* the step's cgroups (cgroup.c) */
};

static void arg(struct wrapped *w, const char *a)
{
	sandbox_strv_push(&w->argv, &w->argc, a);
}

static void args(struct wrapped *w, const char *a, const char *b, const char *c)
{
	arg(w, a);
	if (b)
		arg(w, b);
	if (c)
		arg(w, c);
}

/* Whether abs, under writable, resolves elsewhere than the same place
 * under writable's own resolution: a link at or below it that a step,
 * which may write there, could have made to show what it must not see
 * (the agent's database, say). Its target into *target. */
static bool made_link(const char *abs, const char *writable, char **target)
{
	char *real = realpath(abs, NULL), *base;
	size_t n = strlen(writable);
	bool moved = false;

	*target = NULL;
	while (n > 1 && writable[n - 1] == '/')
		n--;
	base = real ? realpath(writable, NULL) : NULL;
	if (base) {
		char *expected = xasprintf("%s%s", strcmp(base, "/") ? base : "", abs + n);

		moved = strcmp(real, expected) != 0;
		free(expected);
	}
	free(base);
	if (moved)
		*target = real;
	else
		free(real);
	return moved;
}

/* A path shown below one the steps write (a [sandbox] rw, or the step's
 * own directory) that is a link now: left out of this step, said in the
 * log, and shown again once the link is gone. Checked at every step, so a
 * link a build makes is never followed by the next one's bind. */
static bool left_out(const struct wrapped *w, const struct sandbox_step *step, const char *abs)
{
	const struct sandbox *s = w->s;
	const char *under = NULL;
	char *target = NULL;
	size_t i;

	for (i = 0; i < s->nrw && !under; i++)
		if (strcmp(abs, s->rw[i]) && sandbox_path_under(abs, s->rw[i]))
			under = s->rw[i];
	if (!under && step->rw && strcmp(abs, step->rw) && sandbox_path_under(abs, step->rw))
		under = step->rw;
	if (!under || !made_link(abs, under, &target))
		return false;
	log_warnx("sandbox: '%s' is not shown to this step: it leads to '%s' now, through a link "
		  "inside '%s', which the steps write (remove the link to show it again)", abs,
		  target, under);
	free(target);
	return true;
}

/* Adds opt and path shown at its own place: directly, or, where we are
 * root, through the portal. try: a path that does not exist is left out. */
static int show(struct wrapped *w, const struct sandbox_step *step, const char *opt,
		const char *path, bool try)
{
	char *abs = fs_absolute(path), *o = xasprintf("%s%s", opt, try ? "-try" : "");
	struct portal *p;
	struct stat st;
	int r = 0;

	/* As configured: abs has every link resolved already. */
	if (left_out(w, step, *path == '/' ? path : abs))
		goto out;
	if (!w->s->drop) {
		args(w, o, abs, abs);
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
	if (w->nportal == PORTAL_MAX) {
		r = err_set(-E2BIG, "more than %d paths to show to the sandbox", PORTAL_MAX);
		goto out;
	}
	w->portal = xrealloc(w->portal, (w->nportal + 1) * sizeof(*w->portal));
	p = &w->portal[w->nportal];
	p->path = xstrdup(abs);
	p->is_dir = S_ISDIR(st.st_mode);
	snprintf(p->to, sizeof(p->to), "%s/%zu", w->s->portal, w->nportal);
	w->nportal++;
	args(w, opt, p->to, abs);
out:
	free(o);
	free(abs);
	return r;
}

/* The paths the sandbox and the step show. */
static int show_paths(struct wrapped *w, const struct sandbox_step *step)
{
	const struct sandbox *s = w->s;
	size_t i;
	int r = 0;

	for (i = 0; i < s->nro && r == 0; i++)
		r = show(w, step, "--ro-bind", s->ro[i], true);
	for (i = 0; i < s->nrw && r == 0; i++)
		r = show(w, step, "--bind", s->rw[i], true);
	for (i = 0; step->ro && step->ro[i] && r == 0; i++)
		r = show(w, step, "--ro-bind", step->ro[i], false);
	if (step->rw && r == 0)
		r = show(w, step, "--bind", step->rw, false);
	return r;
}

/* bwrap's command line around c's, its status written to descriptor 3. */
static int command_line(struct wrapped *w, const struct sandbox_step *step,
			const struct child *c)
{
	const struct sandbox *s = w->s;
	char size[32];
	size_t i;
	int r;

	arg(w, s->bwrap);
	for (i = 0; i < s->nsystem; i++)
		arg(w, s->system[i]);
	if (s->ndevices)
		args(w, "--ro-bind-try", "/sys", "/sys");
	args(w, "--dev", "/dev", "--proc");
	arg(w, "/proc");
	snprintf(size, sizeof(size), "%ld", s->limits.tmp_mb * 1024 * 1024);
	for (i = 0; sandbox_private_dirs[i]; i++) {
		if (s->limits.tmp_mb)
			args(w, "--size", size, NULL);
		args(w, "--tmpfs", sandbox_private_dirs[i], NULL);
	}
	r = show_paths(w, step);
	if (r < 0)
		return r;
	for (i = 0; i < s->ndevices; i++)
		args(w, "--dev-bind", s->devices[i], s->devices[i]);
	args(w, "--remount-ro", "/", "--unshare-all");
	args(w, "--unshare-user", "--disable-userns", "--die-with-parent");
	arg(w, "--new-session");
	if (step->net)
		arg(w, "--share-net");
	if (c->dir) {
		char *dir = fs_absolute(c->dir);

		args(w, "--chdir", dir, NULL);
		free(dir);
	}
	args(w, "--json-status-fd", "3", "--");
	for (i = 0; c->argv[i]; i++)
		arg(w, c->argv[i]);
	return 0;
}

static void wrapped_free(struct wrapped *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->argc; i++)
		free(w->argv[i]);
	free(w->argv);
	for (i = 0; i < w->nportal; i++)
		free(w->portal[i].path);
	free(w->portal);
	if (w->status >= 0)
		close(w->status);
	sandbox_cgroup_remove(&w->cg);
	free(w);
}

static int wrap_start(struct child_wrap_run *out, const struct child *c, const void *ctx)
{
	const struct sandbox_step *step = ctx;
	struct wrapped *w = xcalloc(1, sizeof(*w));
	int status[2], r;

	w->s = step->sandbox;
	w->status = -1;
	r = sandbox_cgroup_make(&w->cg, w->s);
	if (r == 0)
		r = command_line(w, step, c);
	if (r == 0 && pipe2(status, O_CLOEXEC | O_NONBLOCK) < 0)
		r = err_set(-errno, "pipe: %s", strerror(errno));
	if (r < 0) {
		wrapped_free(w);
		return r;
	}
	w->status = status[0];
	out->argv = w->argv;
	out->fd3 = status[1];
	out->enters_dir = true;
	out->state = w;
	return 0;
}

/* "/proc/self/fd/N" into buf, without stdio (between vfork and exec). */
static void fd_path(char *buf, size_t size, int fd)
{
	static const char head[] = "/proc/self/fd/";
	char digits[12];
	size_t n = 0, i;

	do {
		digits[n++] = (char)('0' + fd % 10);
		fd /= 10;
	} while (fd && n < sizeof(digits));
	memcpy(buf, head, sizeof(head) - 1);
	for (i = 0; i < n && sizeof(head) + i < size; i++)
		buf[sizeof(head) - 1 + i] = digits[n - 1 - i];
	buf[sizeof(head) - 1 + i] = '\0';
}

/* Where we are root: a mount namespace of the child's own, with a tmpfs
 * over the sandbox's portal directory holding each path the sandbox
 * shows, bound there from the descriptor the child opened; bwrap, as the
 * sandbox's user, finds them there whatever the modes of their parents.
 * Nothing of it is seen outside the child. -1 with errno on failure. */
static int open_portal(const struct wrapped *w)
{
	int fds[PORTAL_MAX];
	char from[32];
	size_t i;
	int fd;

	/* Opened in the new namespace: a mount is bound only from its own. */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	for (i = 0; i < w->nportal; i++)
		if ((fds[i] = open(w->portal[i].path, O_PATH | O_CLOEXEC)) < 0)
			return -1;
	if (mount("perfd-portal", w->s->portal, "tmpfs", MS_NOSUID | MS_NODEV,
		  "mode=0755,size=64k") < 0)
		return -1;
	for (i = 0; i < w->nportal; i++) {
		const struct portal *p = &w->portal[i];

		if (p->is_dir) {
			if (mkdir(p->to, 0755) < 0)
				return -1;
		} else {
			fd = open(p->to, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
			if (fd < 0)
				return -1;
			close(fd);
		}
		fd_path(from, sizeof(from), fds[i]);
		if (mount(from, p->to, NULL, MS_BIND | MS_REC, NULL) < 0)
			return -1;
	}
	return 0;
}

/* A limit, soft and hard, so that the step cannot raise it; 0 leaves it
 * as it is ("none"), but for RLIMIT_CORE, whose 0 is the point. */
static void limit(int resource, long value)
{
	struct rlimit rl = { (rlim_t)value, (rlim_t)value };

	if (value > 0 || resource == RLIMIT_CORE)
		setrlimit(resource, &rl);
}

/* In the child, last before its exec: the portal, the sandbox's limits,
 * and its user when we are root. Raw system calls: glibc's set*id would
 * act on every thread of the parent whose memory this child shares until
 * it execs. */
static const char *wrap_exec_step(const struct child_wrap_run *run)
{
	const struct wrapped *w = run->state;
	const struct sandbox *s = w->s;

	if (w->nportal && open_portal(w) < 0)
		return "cannot set up the sandbox's paths for";
	if (!sandbox_cgroup_join(&w->cg))
		return "cannot join the step's cgroup for";
	limit(RLIMIT_NPROC, s->limits.processes);
	limit(RLIMIT_DATA, s->limits.memory_mb * 1024 * 1024);
	limit(RLIMIT_FSIZE, s->limits.file_size_mb * 1024 * 1024);
	limit(RLIMIT_NOFILE, s->limits.open_files);
	limit(RLIMIT_CORE, 0);
	if (!s->drop)
		return NULL;
	if (syscall(SYS_setgroups, s->ngroups, (const gid_t *)s->groups) < 0 ||
	    syscall(SYS_setresgid, s->gid, s->gid, s->gid) < 0 ||
	    syscall(SYS_setresuid, s->uid, s->uid, s->uid) < 0)
		return "cannot become the sandbox's user for";
	/* A change of user clears the parent-death signal: set it again, or
	 * bwrap, and the sandbox under it, would outlive a killed perfd. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	return NULL;
}

/* bwrap's last word on the program: its "exit-code", which it writes only
 * when the program ran; a signal that ended it reads 128 + N there, as a
 * shell's $? does. Returns -1 when the program never started. */
static int status_exit_code(const struct wrapped *w)
{
	char buf[1024];
	ssize_t n = read(w->status, buf, sizeof(buf) - 1);
	const char *p;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "\"exit-code\":");
	return p ? atoi(p + strlen("\"exit-code\":")) : -1;
}

/* The line of bwrap's own that says why it failed, or NULL. */
static char *bwrap_error(const struct child *c)
{
	const char *p = c->err.buf;

	while (p && *p) {
		if (!strncmp(p, "bwrap: ", 7))
			return xstrndup(p, strcspn(p, "\n"));
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return NULL;
}

/* A program that never started is a spawn error with bwrap's reason;
 * 128 + N is signal N. */
static void wrap_finish(const struct child_wrap_run *run, struct child *c)
{
	int code = status_exit_code(run->state);
	char *why = code < 0 || code == 1 ? bwrap_error(c) : NULL;

	if (why) {
		c->spawn_error = xasprintf("the sandbox could not run it: %s", why);
		c->exit_code = -1;
		free(why);
	} else if (code > 128 && code < 128 + NSIG) {
		c->exit_code = -1;
		c->signal = code - 128;
	}
}

/* A bound of the step's cgroups that the child passed, however it ended. */
static void wrap_ended(const struct child_wrap_run *run, struct child *c)
{
	const struct wrapped *w = run->state;

	free(c->bound);
	c->bound = sandbox_cgroup_passed(&w->cg, w->s);
}

static void wrap_release(struct child_wrap_run *run)
{
	wrapped_free(run->state);
	run->state = NULL;
	run->argv = NULL;
}

const struct child_wrap *sandbox_wrap(struct sandbox_step *step, const struct sandbox *s)
{
	if (!s)
		return NULL;
	step->sandbox = s;
	step->wrap = (struct child_wrap){ .start = wrap_start, .exec_step = wrap_exec_step,
					  .finish = wrap_finish, .ended = wrap_ended,
					  .release = wrap_release,
					  .ctx = step };
	return &step->wrap;
}

/* Runs "true" in the sandbox once, with dir (when not NULL) bound as a
 * build's directory will be: an error names why it cannot run. */
static int try_it(const struct sandbox *s, const char *dir)
{
	const char *argv[] = { "/bin/true", NULL };
	struct sandbox_step step = { .rw = dir };
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
	ch.wrap = sandbox_wrap(&step, s);
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

int sandbox_open(struct sandbox **out, const struct sandbox_opts *o)
{
	int r = sandbox_plan(out, o);

	if (r == 0 && (r = try_it(*out, o->trial_dir)) < 0) {
		sandbox_free(*out);
		*out = NULL;
	}
	return r;
}
