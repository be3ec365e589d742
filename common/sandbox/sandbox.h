/*
 * sandbox: bubblewrap around a child (docs/security.md): what a build or a
 * measured program may see and do. A sandbox is set up once (sandbox_open
 * tries it) and shared by the children that run in it; a child runs in it
 * through the wrap sandbox_wrap gives (struct child_wrap, common.h), so
 * that the launcher knows nothing of it. Everything of bubblewrap (its
 * command line, the portal, the change of user, its status) is in this
 * folder: sandbox.c plans the view, wrap.c runs a child in it.
 *
 * Messages speak of paths and of the options' values; a caller that
 * names the options otherwise (a configuration's keys) gives its words in
 * sandbox_opts, and adds them to what it reports.
 */
#ifndef PERFD_SANDBOX_H
#define PERFD_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"

/* Who a sandbox run as root runs as: the user the install makes for it
 * (daemon/systemd/perfd.sysusers), else, said so, nobody. */
#define SANDBOX_DEFAULT_USER "perfd-sandbox"
#define SANDBOX_FALLBACK_USER "nobody"
#define SANDBOX_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

struct sandbox_limits {
	long processes;              /* RLIMIT_NPROC; 0: none */
	long memory_mb;              /* RLIMIT_DATA of each process; 0: none */
	long file_size_mb;           /* RLIMIT_FSIZE; 0: none */
	long open_files;             /* RLIMIT_NOFILE; 0: ours */
	long tmp_mb;                 /* size of each private tmpfs; 0: none */
	/* Each step's cgroup, where the machine offers one
	 * (sandbox_cgroups): its memory, the private tmpfs included (0: half
	 * the machine's), and its processes (0: processes, or 4096). */
	long step_memory_mb;
	long step_processes;
};
struct sandbox_opts {
	const char *const *devices;  /* glob patterns of device nodes passed through */
	size_t ndevices;
	const char *const *env;      /* fnmatch patterns of the names passed */
	size_t nenv;
	const char *const *ro;       /* more paths shown read-only (a data set) */
	size_t nro;
	const char *const *rw;       /* more paths shown writable (a compiler cache) */
	size_t nrw;
	const char *user;            /* who runs it when we are root; NULL: nobody */
	const char *bwrap;           /* bwrap's path; NULL: found in the usual places */
	const char *trial_dir;       /* a directory the trial binds, as builds will be; or NULL */
	struct sandbox_limits limits;
	/* The caller's names for ro, rw and user in what the sandbox says
	 * ("[sandbox] ro"); NULL: "ro", "rw", "user". */
	const char *ro_name, *rw_name, *user_name;
};
struct sandbox;

/* Finds bwrap and runs a trial process in the sandbox. Returns 0 and a new
 * sandbox in *out (the caller's, sandbox_free), or a negative errno with why
 * it cannot run here (-ENOENT: no bwrap; -EPERM: the kernel refuses it user
 * namespaces; -EAGAIN: it failed for now, as at a process limit; another:
 * it fails here for another reason; bwrap's own words in err_last()). */
int sandbox_open(struct sandbox **out, const struct sandbox_opts *o);
/* sandbox_open without the trial: what it would run (for a check). */
int sandbox_plan(struct sandbox **out, const struct sandbox_opts *o);
void sandbox_free(struct sandbox *s);
/* What a sandboxed step sees, a line per entry, each ending in '\n'. */
void sandbox_view(struct strbuf *out, const struct sandbox *s);
/* The program and who runs it, and the device nodes passed: "/usr/bin/bwrap
 * as nobody, nodes /dev/dri/card0" (" none" for no node). */
void sandbox_describe(struct strbuf *out, const struct sandbox *s);
/* Why the sandbox runs as SANDBOX_FALLBACK_USER, or NULL (static). */
const char *sandbox_user_fallback(const struct sandbox *s);
/* Whether each step runs in cgroups of its own (cgroup v1's memory and
 * pids, where perfd is root), bounded by limits' step_memory_mb and
 * step_processes as sandbox_limits says them (the defaults filled in);
 * when not, *why (static) says why. */
bool sandbox_cgroups(const struct sandbox *s, const char **why);
/* The limits in force, the defaults filled in. */
const struct sandbox_limits *sandbox_limits_of(const struct sandbox *s);
/* Whether path is dir or lies under it ("/" holds every path; a '/' that
 * ends dir is not counted). */
bool sandbox_path_under(const char *path, const char *dir);
/* Whether a step sees the absolute path as the host has it (a step's own
 * directories aside); when not, *out_why says why in a few words (borrowed:
 * "its /tmp is private and empty", "outside the view"). */
bool sandbox_shows(const struct sandbox *s, const char *path, const char **out_why);
/* A child's environment: with s, only the names s passes, then HOME and
 * TMPDIR on its private /tmp and PATH when not passed; without, ours. */
void sandbox_env_init(struct child_env *e, const struct sandbox *s);
/* Gives path, and what it holds, to the user the sandbox runs as when we
 * are root (a build's directory, before its recipe writes there). */
int sandbox_own(const struct sandbox *s, const char *path);
/* Kills (SIGKILL) every bwrap process whose arguments name a path under
 * dir: for a caller that knows no sandbox of its own runs there (the agent,
 * under its work directory's lock), these are what a killed one left (its
 * sandbox's first process, caught before it set its parent-death signal).
 * Returns how many (0 without /proc). */
int sandbox_kill_leftovers(const char *dir);

/* One step run in a sandbox: what it is shown besides the sandbox's own
 * view. The caller fills the first three; sandbox_wrap the rest. */
struct sandbox_step {
	const char *rw;              /* a directory it may write, or NULL */
	const char *const *ro;       /* more paths shown read-only; NULL-terminated, or NULL */
	bool net;                    /* the network shared */
	const struct sandbox *sandbox;
	struct child_wrap wrap;
};
/* The wrap for struct child's wrap that runs the child in s as step says
 * (its directory entered by bwrap, as the sandbox's user); NULL when s is
 * NULL: the child then runs as it is. step is the caller's, and must
 * outlive the child's run. */
const struct child_wrap *sandbox_wrap(struct sandbox_step *step, const struct sandbox *s);

#endif
