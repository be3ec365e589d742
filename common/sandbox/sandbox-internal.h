/*
 * What sandbox.c (the view) and wrap.c (a child run in it) share; nothing
 * outside common/sandbox/ includes it.
 */
#ifndef PERFD_SANDBOX_INTERNAL_H
#define PERFD_SANDBOX_INTERNAL_H

#include "sandbox.h"

#define SANDBOX_GROUPS_MAX 16

struct sandbox {
	char *bwrap;
	char **system;               /* bwrap's arguments for the system's part of the view */
	size_t nsystem;
	char **devices;              /* the nodes found at sandbox_open */
	size_t ndevices;
	char **env_names;
	size_t nenv_names;
	char **ro, **rw;             /* sandbox_opts' ro and rw */
	size_t nro, nrw;
	char *ro_name, *rw_name;     /* what the caller calls them */
	char *user;                  /* who it runs as when drop */
	const char *fallback;        /* why that is SANDBOX_FALLBACK_USER; NULL */
	bool drop;                   /* we are root: run as uid, gid, groups */
	/* Where a child run as root finds the paths shown to its sandbox: a
	 * tmpfs of its own mount namespace over this directory, one of a few
	 * that bwrap itself does not need (wrap.c). */
	const char *portal;
	unsigned uid, gid;
	unsigned groups[SANDBOX_GROUPS_MAX];  /* the device nodes' groups */
	size_t ngroups;
	struct sandbox_limits limits;    /* step_memory_mb and step_processes set */
	bool cgroups;                    /* each step in cgroups of its own (cgroup.c) */
	const char *no_cgroups;          /* else why not */
};

/* A step's own cgroups (cgroup.c): memory and pids. */
#define CGROUP_CONTROLLERS 2
struct step_cgroup {
	char dir[CGROUP_CONTROLLERS][128];    /* "" where none was made */
	char procs[CGROUP_CONTROLLERS][160];  /* each one's cgroup.procs; "" */
};
/* Whether this machine and process can give each step cgroups, into s. */
void sandbox_cgroups_probe(struct sandbox *s);
/* Makes g, bounded by s's limits, where s->cgroups (else g is empty): 0,
 * or -errno with why. */
int sandbox_cgroup_make(struct step_cgroup *g, const struct sandbox *s);
/* In the child before its exec: joins g (async-signal-safe); false when a
 * write failed. */
bool sandbox_cgroup_join(const struct step_cgroup *g);
/* The bound of g a step passed, in a sentence (the caller's), or NULL. */
char *sandbox_cgroup_passed(const struct step_cgroup *g, const struct sandbox *s);
/* Removes g's groups, killing anything left in them. */
void sandbox_cgroup_remove(struct step_cgroup *g);

/* Directories every sandbox gets empty and private; NULL-terminated. */
extern const char *const sandbox_private_dirs[];

/* s copied onto the NULL-terminated vector *v of *n strings. */
void sandbox_strv_push(char ***v, size_t *n, const char *s);

#endif
