/*
 * The fresh-process launcher. The child is started with vfork: it shares our
 * memory until it execs, so starting it costs no copy of our page tables
 * (a fork of perfd took longer than the exec of a small program; see
 * docs/performance.md). The child does setsid, resets signals, sets its
 * descriptors, pins itself when asked and execs; nothing more, and it
 * writes no memory it shares with us but its own stack. The
 * parent waits on a pidfd and the pipes with poll, never with sleep loops,
 * and on a time bound sends SIGTERM to the process group, then SIGKILL
 * after the grace period, and reaps. What it started is followed by the
 * process tree taken at the SIGTERM, since a wrapped program may run in a
 * session of its own: each of those still there gets SIGKILL too, and one
 * that outlives it by CHILD_KILL_WAIT_S is named and left (a task stuck
 * in a driver ends when the driver lets it, not when we ask).
 * A child may run inside another program through a wrap (struct
 * child_wrap, common.h): its command line, a step in the child just before
 * the exec, and its word on the program after; nothing else of it is
 * known here.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

extern char **environ;

#define READ_CHUNK 65536
/* After the child exits, how long we keep reading pipes that something it
 * left behind still holds open. */
#define DRAIN_MS 1000
/* A child that died of SIGTERM or SIGINT that we did not send: how long we
 * wait for our own stop to arrive. A service manager signals every process
 * of the service in turn, and the child's may land first. */
#define STOP_SETTLE_MS 1000

enum { STAGE_PIN = 1, STAGE_DIR, STAGE_WRAP, STAGE_EXEC };

struct exec_failure {
	int stage;
	int err;
	const char *what;            /* the wrap's step's, at STAGE_WRAP */
};

/* What the child needs between vfork and exec, all prepared before. */
struct spawn {
	const char *const *argv;     /* c's, or the wrap's */
	const char *const *env;      /* NULL: ours */
	const char *dir;             /* NULL: stays (or the wrap enters it) */
	int fd3;                     /* becomes descriptor 3; -1: none */
	int outw, errw, devnull;
	const cpu_set_t *cpus;       /* NULL: not pinned */
	const struct child_wrap *wrap;
	const struct child_wrap_run *run;
	volatile struct exec_failure *failure;
};

static bool env_key_is(const char *entry, const char *kv)
{
	size_t n = strcspn(kv, "=");

	return !strncmp(entry, kv, n) && entry[n] == '=';
}

void child_env_init(struct child_env *e)
{
	size_t i;

	e->v = xcalloc(1, sizeof(char *));
	e->n = 0;
	for (i = 0; environ[i]; i++)
		child_env_set(e, environ[i]);
}

void child_env_set(struct child_env *e, const char *kv)
{
	size_t i;

	for (i = 0; i < e->n; i++) {
		if (env_key_is(e->v[i], kv)) {
			free(e->v[i]);
			e->v[i] = xstrdup(kv);
			return;
		}
	}
	e->v = xrealloc(e->v, (e->n + 2) * sizeof(char *));
	e->v[e->n++] = xstrdup(kv);
	e->v[e->n] = NULL;
}

void child_env_setf(struct child_env *e, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	child_env_set(e, sb.buf);
	strbuf_release(&sb);
}

/* Zeroed before they are freed: an entry may hold a secret (the fetch
 * token). */
void child_env_release(struct child_env *e)
{
	size_t i;

	for (i = 0; e->v && i < e->n; i++) {
		if (e->v[i])
			explicit_bzero(e->v[i], strlen(e->v[i]));
		free(e->v[i]);
	}
	free(e->v);
	e->v = NULL;
	e->n = 0;
}

void child_init(struct child *c)
{
	memset(c, 0, sizeof(*c));
	c->cancel_fd = -1;
	c->keep_fd = -1;
	c->exit_code = -1;
	strbuf_init(&c->out);
	strbuf_init(&c->err);
}

void child_release(struct child *c)
{
	if (!c)
		return;
	strbuf_release(&c->out);
	strbuf_release(&c->err);
	free(c->spawn_error);
	c->spawn_error = NULL;
	free(c->unkillable);
	c->unkillable = NULL;
	free(c->bound);
	c->bound = NULL;
}

/* The child shares our memory until it execs: it says why it could not
 * start by writing into the parent's record, then exits. */
static __attribute__((noreturn)) void child_fail(volatile struct exec_failure *f, int stage)
{
	f->err = errno;
	f->stage = stage;
	_exit(127);
}

/* Runs in the child between fork and exec: async-signal-safe calls only. */
static __attribute__((noreturn)) void child_exec(const struct spawn *sp)
{
	volatile struct exec_failure *f = sp->failure;
	const char *what;
	sigset_t none;
	int sig;

	setsid();
	/* A perfd killed outright (kill -9 of the agent) takes the program it
	 * was running with it, rather than leave it measuring into nothing or
	 * writing into a build directory a restarted agent is about to use. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(sp->devnull, 0) < 0 || dup2(sp->outw, 1) < 0 || dup2(sp->errw, 2) < 0)
		child_fail(f, STAGE_EXEC);
	if (sp->fd3 >= 0 && (sp->fd3 == 3 ? fcntl(3, F_SETFD, 0) : dup2(sp->fd3, 3)) < 0)
		child_fail(f, STAGE_EXEC);
	syscall(SYS_close_range, sp->fd3 >= 0 ? 4 : 3, ~0U, 0);
	if (sp->cpus && sched_setaffinity(0, sizeof(*sp->cpus), sp->cpus) < 0)
		child_fail(f, STAGE_PIN);
	if (sp->dir && chdir(sp->dir) < 0)
		child_fail(f, STAGE_DIR);
	if (sp->wrap && sp->wrap->exec_step && (what = sp->wrap->exec_step(sp->run))) {
		f->what = what;
		child_fail(f, STAGE_WRAP);
	}
	execve(sp->argv[0], (char *const *)sp->argv,
	       sp->env ? (char *const *)sp->env : environ);
	child_fail(f, STAGE_EXEC);
}

/* vfork must not return into a frame the child could then clobber: the
 * child leaves this function only through execve or _exit. */
static __attribute__((noinline)) pid_t spawn(const struct spawn *sp)
{
	pid_t pid = vfork();

	if (pid == 0)
		child_exec(sp);
	return pid;
}

/* /dev/null for every child's stdin, opened once. */
static int devnull_fd(void)
{
	static int fd = -1;

	if (fd < 0)
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return fd;
}

static void capture(struct child *c, struct strbuf *sb, int64_t *total,
		    const char *buf, size_t n, bool is_stdout)
{
	size_t max = c->capture_max ? c->capture_max : CHILD_CAPTURE_DEFAULT;

	if (sb->len < max)
		strbuf_add(sb, buf, n < max - sb->len ? n : max - sb->len);
	*total += (int64_t)n;
	if (is_stdout && c->on_stdout)
		c->on_stdout(c->ctx, buf, n);
}

/* Reads once what poll said is there; returns false at end of file. The
 * descriptors block: poll said a read will not. */
static bool drain(struct child *c, int fd, bool is_stdout)
{
	char buf[READ_CHUNK];
	ssize_t n;

	do {
		n = read(fd, buf, sizeof(buf));
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return false;
	if (is_stdout)
		capture(c, &c->out, &c->out_total, buf, (size_t)n, true);
	else
		capture(c, &c->err, &c->err_total, buf, (size_t)n, false);
	return true;
}

static int ms_until(int64_t deadline_ns)
{
	int64_t left = deadline_ns - time_monotonic_ns();

	if (left <= 0)
		return 0;
	return (int)((left + 999999) / 1000000);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}


static bool stop_signalled(const struct child *c)
{
	return c->signal == SIGTERM || c->signal == SIGINT ||
	       c->exit_code == 128 + SIGTERM || c->exit_code == 128 + SIGINT;
}

static void spawn_failed(struct child *c, const char *argv0, const struct exec_failure *f)
{
	const char *what = f->stage == STAGE_PIN ? "cannot pin to CPUs" :
			   f->stage == STAGE_DIR ? "cannot enter directory" :
			   f->stage == STAGE_WRAP ? f->what : "cannot execute";
	struct strbuf cpus = STRBUF_INIT;
	const char *obj = argv0;

	if (f->stage == STAGE_PIN) {
		cpus_format(&cpus, c->cpus);
		obj = cpus.buf;
	} else if (f->stage == STAGE_DIR) {
		obj = c->dir;
	}
	c->spawn_error = xasprintf("%s '%s': %s", what, obj, strerror(f->err));
	strbuf_release(&cpus);
	c->exit_code = -1;
}

/* One run's state, from the spawn to the reaping. */
struct run {
	int outp[2], errp[2];
	struct child_wrap_run wrapped;
	bool wrapping;               /* the wrap's start returned 0: release it */
	int pidfd;                   /* a pidfd, or a signalfd of SIGCHLD */
	pid_t pid;
	bool restore_mask;           /* SIGCHLD was blocked for the signalfd */
	sigset_t oldmask;
	bool look_now;               /* look at the child once before polling */
	bool exited, termed, killed;
	struct proc_stat *tree;      /* what it had started, at the SIGTERM */
	size_t ntree;
	int64_t t0, t1, deadline;
	int64_t psi0, psi1;          /* cpu_pressure_us at start and reaping; -1: none */
	int status;
	struct rusage ru;
};

/* The machine's CPU pressure so far (Linux's pressure stall information,
 * /proc/pressure/cpu): the microseconds in which some runnable task waited
 * for a CPU, counted since boot. A child's share of it is the load it ran
 * beside, whatever ran it, wrapped or not. PERFD_CPU_PRESSURE names
 * another file of that format (a cgroup's cpu.pressure), or, empty, none.
 * -1 where there is none (no CONFIG_PSI, psi=0, or none named). */
static int64_t cpu_pressure_us(void)
{
	const char *path = getenv("PERFD_CPU_PRESSURE");
	char buf[256];
	int fd;
	ssize_t n;
	const char *p;

	if (!path)
		path = "/proc/pressure/cpu";
	if (!*path || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';      /* the first line: "some ..." */
	if (strncmp(buf, "some ", 5) || !(p = strstr(buf, " total=")))
		return -1;
	return strtoll(p + strlen(" total="), NULL, 10);
}

/* c's CPU set as the kernel takes it into *out; false for none. */
static bool cpu_set_of(cpu_set_t *out, const struct child *c)
{
	unsigned i;

	if (!c->cpus || !c->cpus->count)
		return false;
	CPU_ZERO(out);
	for (i = 0; i < CPUS_MAX && i < CPU_SETSIZE; i++)
		if (cpus_has(c->cpus, i))
			CPU_SET(i, out);
	return true;
}

/* The pipes, and the wrap's start: what the child will execute. */
static int run_prepare(struct run *s, struct spawn *sp, const struct child *c)
{
	int devnull = devnull_fd(), r;

	if (pipe2(s->outp, O_CLOEXEC) < 0 || pipe2(s->errp, O_CLOEXEC) < 0)
		return err_set(-errno, "pipe: %s", strerror(errno));
	if (devnull < 0)
		return err_set(-errno, "/dev/null: %s", strerror(errno));
	*sp = (struct spawn){ .argv = c->argv, .env = c->env, .dir = c->dir, .fd3 = c->keep_fd,
			      .outw = s->outp[1], .errw = s->errp[1], .devnull = devnull };
	if (!c->wrap)
		return 0;
	r = c->wrap->start(&s->wrapped, c, c->wrap->ctx);
	if (r < 0)
		return r;
	s->wrapping = true;
	sp->argv = (const char *const *)s->wrapped.argv;
	if (s->wrapped.fd3 >= 0)
		sp->fd3 = s->wrapped.fd3;
	if (s->wrapped.enters_dir)
		sp->dir = NULL;
	sp->wrap = c->wrap;
	sp->run = &s->wrapped;
	return 0;
}

/* The pipes, the child and a descriptor that says when it ends. */
static int run_start(struct run *s, struct child *c)
{
	volatile struct exec_failure failure = { 0, 0, NULL };
	struct spawn sp;
	cpu_set_t cpus;
	sigset_t chld;
	int r;

	r = run_prepare(s, &sp, c);
	if (r < 0)
		return r;
	sp.cpus = cpu_set_of(&cpus, c) ? &cpus : NULL;
	sp.failure = &failure;
	time_now_iso(c->started_at);
	s->psi0 = cpu_pressure_us();
	s->t0 = time_monotonic_ns();
	s->pid = spawn(&sp);
	if (s->pid < 0)
		return err_set(-errno, "vfork: %s", strerror(errno));
	close_fd(&s->outp[1]);
	close_fd(&s->errp[1]);
	close_fd(&s->wrapped.fd3);
	/* vfork returns once the child has exec'd or given up. */
	if (failure.stage) {
		struct exec_failure f = { failure.stage, failure.err, failure.what };

		spawn_failed(c, sp.argv[0], &f);
	}
	s->pidfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
	if (s->pidfd < 0 && errno == ENOSYS) {
		/* No pidfd (a kernel before 5.3, or valgrind): SIGCHLD through a
		 * signalfd, with one look at the child once it is blocked, in case
		 * it exited before. */
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigprocmask(SIG_BLOCK, &chld, &s->oldmask);
		s->restore_mask = true;
		s->pidfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
		s->look_now = true;
	}
	if (s->pidfd < 0) {
		r = err_set(-errno, "pidfd_open: %s", strerror(errno));
		kill(-s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
		return r;
	}
	if (c->timeout_s > 0)
		s->deadline = s->t0 + (int64_t)(c->timeout_s * 1e9);
	return 0;
}

/* Reaps the child if it has ended; then only its pipes are drained. */
static void run_reap(struct run *s)
{
	struct signalfd_siginfo si;

	s->look_now = false;
	s->t1 = time_monotonic_ns();
	s->psi1 = cpu_pressure_us();
	if (s->restore_mask)
		while (read(s->pidfd, &si, sizeof(si)) > 0)
			;
	if (wait4(s->pid, &s->status, WNOHANG, &s->ru) == s->pid) {
		s->exited = true;
		/* A perfd that is its children's subreaper (the agent) also
		 * reaps what they left: a wrap's own first process may outlive
		 * it by a moment. perfd runs one child at a time. */
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		/* Nothing the program left behind may run on into the next
		 * measurement. */
		kill(-s->pid, SIGKILL);
		s->deadline = s->t1 + (int64_t)DRAIN_MS * 1000000;
	}
}

/* SIGKILL to the group and to every process of the tree still there. */
static void kill_tree(struct run *s)
{
	size_t i;

	kill(-s->pid, SIGKILL);
	for (i = 0; i < s->ntree; i++)
		if (proc_is_there(&s->tree[i]))
			kill((pid_t)s->tree[i].pid, SIGKILL);
}

/* The deadline passed: SIGTERM to the group, SIGKILL after the grace
 * period; a child still there CHILD_KILL_WAIT_S later is left. Returns
 * false when there is nothing more to wait for: the child has exited and
 * something outside its group still holds the pipes, or it outlived its
 * SIGKILL. */
static bool run_deadline(struct run *s, struct child *c)
{
	if (s->exited)
		return false;
	if (!s->termed) {
		if (!c->cancelled) {
			c->timed_out = true;
			s->ntree = proc_descendants(&s->tree, s->pid, CHILD_TREE_MAX);
		}
		s->termed = true;
		kill(-s->pid, SIGTERM);
		s->deadline = time_monotonic_ns() + (int64_t)((c->grace_s > 0 ? c->grace_s :
							       CHILD_GRACE_DEFAULT_S) * 1e9);
	} else if (!s->killed) {
		kill_tree(s);
		s->killed = true;
		s->deadline = time_monotonic_ns() + (int64_t)(CHILD_KILL_WAIT_S * 1e9);
	} else {
		c->unkillable = proc_describe(s->pid);
		s->t1 = time_monotonic_ns();
		return false;
	}
	return true;
}

/* After a child stopped by its bound has ended: what it had started and
 * that is still there gets SIGKILL, and is waited for up to
 * CHILD_KILL_WAIT_S. Of what is left then, one in uninterruptible sleep
 * (held by a driver) is named in unkillable, else the last left: a
 * parent left waiting for it (a wrap's first process) is its witness,
 * not its cause. */
static void run_tree_wait(struct run *s, struct child *c)
{
	int64_t until = time_monotonic_ns() + (int64_t)(CHILD_KILL_WAIT_S * 1e9);
	long left = 0;
	size_t i;

	if (!s->ntree || c->unkillable)
		return;
	kill_tree(s);
	for (i = 0; i < s->ntree; i++) {
		int fd;

		/* A subreaper (the agent) reaps what a wrap left. */
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (!proc_is_there(&s->tree[i]))
			continue;
		fd = (int)syscall(SYS_pidfd_open, (pid_t)s->tree[i].pid, 0);
		if (fd >= 0) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			while (poll(&p, 1, ms_until(until)) < 0 && errno == EINTR)
				;
			close(fd);
		}
	}
	for (i = 0; i < s->ntree; i++) {
		char state = proc_state(&s->tree[i]);

		if (state)
			left = s->tree[i].pid;
		if (state == 'D')
			break;
	}
	if (left)
		c->unkillable = proc_describe(left);
}

/* Reads the child's output until it has exited and its pipes are closed,
 * bounding it by the deadline and stopping it on cancel_fd. */
static int run_wait(struct run *s, struct child *c)
{
	while (!s->exited || s->outp[0] >= 0 || s->errp[0] >= 0) {
		struct pollfd pfd[4];
		int np = 0, iout = -1, ierr = -1, ipid = -1, icancel = -1;

		if (s->outp[0] >= 0) {
			iout = np;
			pfd[np++] = (struct pollfd){ .fd = s->outp[0], .events = POLLIN };
		}
		if (s->errp[0] >= 0) {
			ierr = np;
			pfd[np++] = (struct pollfd){ .fd = s->errp[0], .events = POLLIN };
		}
		if (!s->exited) {
			ipid = np;
			pfd[np++] = (struct pollfd){ .fd = s->pidfd, .events = POLLIN };
			if (c->cancel_fd >= 0 && !s->termed) {
				icancel = np;
				pfd[np++] = (struct pollfd){ .fd = c->cancel_fd, .events = POLLIN };
			}
		}
		if (poll(pfd, (nfds_t)np, s->deadline == INT64_MAX ? -1 :
			 ms_until(s->deadline)) < 0) {
			int r;

			if (errno == EINTR)
				continue;
			r = err_set(-errno, "poll: %s", strerror(errno));
			kill(-s->pid, SIGKILL);
			waitpid(s->pid, NULL, 0);
			return r;
		}
		if (iout >= 0 && pfd[iout].revents && !drain(c, s->outp[0], true))
			close_fd(&s->outp[0]);
		if (ierr >= 0 && pfd[ierr].revents && !drain(c, s->errp[0], false))
			close_fd(&s->errp[0]);
		if ((ipid >= 0 && pfd[ipid].revents) || s->look_now) {
			run_reap(s);
			continue;
		}
		if (icancel >= 0 && pfd[icancel].revents) {
			c->cancelled = true;
			s->deadline = time_monotonic_ns();
		}
		if (s->deadline != INT64_MAX && time_monotonic_ns() >= s->deadline &&
		    !run_deadline(s, c))
			break;
	}
	return 0;
}

/* What happened, into c. */
static void run_finish(const struct run *s, struct child *c)
{
	c->wall_ms = (double)(s->t1 - s->t0) / 1e6;
	time_now_iso(c->ended_at);
	c->user_ms = (double)s->ru.ru_utime.tv_sec * 1e3 + (double)s->ru.ru_utime.tv_usec / 1e3;
	c->sys_ms = (double)s->ru.ru_stime.tv_sec * 1e3 + (double)s->ru.ru_stime.tv_usec / 1e3;
	c->maxrss_kb = s->ru.ru_maxrss;
	c->cpu_wait_ms = s->psi0 >= 0 && s->psi1 >= s->psi0 ? (double)(s->psi1 - s->psi0) / 1e3
							  : NAN;
	if (!s->exited) {
		/* It outlived SIGKILL: it has no status yet. */
		c->exit_code = -1;
		c->signal = 0;
	} else if (WIFEXITED(s->status)) {
		c->exit_code = c->spawn_error ? -1 : WEXITSTATUS(s->status);
		c->signal = 0;
	} else if (WIFSIGNALED(s->status)) {
		c->exit_code = -1;
		c->signal = WTERMSIG(s->status);
	}
	/* The wrap's word on a program that started and exited. */
	if (s->wrapping && c->wrap->finish && s->exited && WIFEXITED(s->status) &&
	    !c->spawn_error)
		c->wrap->finish(&s->wrapped, c);
	if (s->wrapping && c->wrap->ended && s->exited)
		c->wrap->ended(&s->wrapped, c);
	/* A failure while we are being stopped is our stop's doing, not the
	 * program's: a service manager's SIGTERM to the whole service may reach
	 * the child before it reaches us, so a child ended by a stop signal
	 * (or a shell's 128 + it) waits a moment for ours. A success stands. */
	if (c->cancel_fd >= 0 && !c->cancelled && !c->timed_out && (c->signal || c->exit_code))
		c->cancelled = child_cancel_wait(c->cancel_fd,
						 stop_signalled(c) ? STOP_SETTLE_MS : 0);
}

int child_run(struct child *c)
{
	struct run s = { .outp = { -1, -1 }, .errp = { -1, -1 }, .wrapped = { .fd3 = -1 },
			 .pidfd = -1, .deadline = INT64_MAX };
	int r;

	r = run_start(&s, c);
	if (r == 0)
		r = run_wait(&s, c);
	if (r == 0)
		run_tree_wait(&s, c);
	if (r == 0)
		run_finish(&s, c);
	free(s.tree);
	close_fd(&s.outp[0]);
	close_fd(&s.outp[1]);
	close_fd(&s.errp[0]);
	close_fd(&s.errp[1]);
	close_fd(&s.wrapped.fd3);
	close_fd(&s.pidfd);
	if (s.wrapping && c->wrap->release)
		c->wrap->release(&s.wrapped);
	if (s.restore_mask)
		sigprocmask(SIG_SETMASK, &s.oldmask, NULL);
	return r;
}

int child_run_shell(struct child *c, const char *command)
{
	char *line = xasprintf("exec 2>&1; %s", command);
	const char *argv[] = { "/bin/sh", "-c", line, NULL };
	int r;

	c->argv = argv;
	r = child_run(c);
	c->argv = NULL;
	free(line);
	return r;
}

static char *failure(const struct child *c, const char *what)
{
	if (c->spawn_error)
		return xasprintf("%s could not start: %s", what, c->spawn_error);
	if (c->unkillable)
		return xasprintf("%s%s outlived SIGKILL: %s", what,
				 c->timed_out ? " timed out and" : "", c->unkillable);
	if (c->timed_out)
		return xasprintf("%s timed out after %.0f s", what, c->wall_ms / 1e3);
	if (c->signal)
		return xasprintf("%s was killed by signal %d", what, c->signal);
	if (c->exit_code)
		return xasprintf("%s exited %d", what, c->exit_code);
	return NULL;
}

char *child_failure(const struct child *c, const char *what)
{
	char *why = failure(c, what), *with;

	if (!why || !c->bound)
		return why;
	with = xasprintf("%s: %s", why, c->bound);
	free(why);
	return with;
}

bool child_cancel_wait(int cancel_fd, unsigned ms)
{
	struct pollfd p = { .fd = cancel_fd, .events = POLLIN };
	int64_t deadline = time_monotonic_ns() + (int64_t)ms * 1000000;
	int n;

	for (;;) {
		n = poll(cancel_fd >= 0 ? &p : NULL, cancel_fd >= 0 ? 1 : 0, ms_until(deadline));
		if (n >= 0 || errno != EINTR)
			return n > 0;
	}
}
