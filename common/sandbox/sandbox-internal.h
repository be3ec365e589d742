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
	bool drop;                   /* we are root: run as uid, gid, groups */
	/* Where a child run as root finds the paths shown to its sandbox: a
	 * tmpfs of its own mount namespace over this directory, one of a few
	 * that bwrap itself does not need (wrap.c). */
	const char *portal;
	unsigned uid, gid;
	unsigned groups[SANDBOX_GROUPS_MAX];  /* the device nodes' groups */
	size_t ngroups;
	struct sandbox_limits limits;
};

/* Directories every sandbox gets empty and private; NULL-terminated. */
extern const char *const sandbox_private_dirs[];

/* s copied onto the NULL-terminated vector *v of *n strings. */
void sandbox_strv_push(char ***v, size_t *n, const char *s);

#endif
