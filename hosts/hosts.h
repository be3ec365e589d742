/*
 * hosts: host profiles, the operator's description of one machine and the
 * one GPU it must see (docs/hosts.md lists every key).
 *
 * A profile is parsed into a fresh struct host_profile and never touches
 * live state; a caller that reloads parses, checks, then swaps. Parsing
 * reports every mistake as "file:line: message", all of them, then fails.
 *
 * Nothing here talks to a device: matching a profile against what Vulkan
 * reports is done by the caller with the strings kept here.
 */
#ifndef PERFD_HOSTS_H
#define PERFD_HOSTS_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* One kernel-log pattern: a case-insensitive POSIX extended regex. */
struct host_fault {
	char *text;                     /* as written in the profile */
	unsigned line;                  /* where it was written */
	regex_t re;
};

struct host_profile {
	char *path;                     /* the file it came from */
	char *name;                     /* [host] name */
	char *description;              /* [host] description, or "" */
	char *device_match;             /* [device] substring of deviceName; NULL: a CPU host */
	char *expected_driver;          /* [device] substring of driverName or driverInfo */
	char *nodes;                    /* [device] device nodes a sandboxed process is given
	                                 * (glob patterns), or NULL: HOST_DEFAULT_NODES for a
	                                 * GPU host, none for a CPU host */
	double process_timeout_s;       /* [timing] bound for one process, > 0 */
	struct cpus cpus;               /* [timing] CPU pinning, count 0 for none */
	double noise;                   /* [timing] spread above which a cell is noisy */
	double min_effect;              /* [timing] smallest gain worth a verdict */
	unsigned cooldown_ms;           /* [timing] pause between processes */
	int pairs;                      /* [timing] a comparison's first stage */
	int max_pairs;                  /* [timing] the most its stages reach */
	double time_budget_s;           /* [timing] max_pairs from a comparison's time; 0: none */
	char *fault_log;                /* [faults] kernel log to watch */
	char *boot_log_command;         /* [faults] a shell command printing the previous
	                                 * boot's kernel log, or "": none */
	char *boot_log;                 /* [faults] files and directories holding it,
	                                 * absolute paths split at blanks, or "": none */
	struct host_fault *faults;      /* [faults] fault_pattern, in file order */
	size_t nfaults;
	/* [gate] paths: fnmatch(3) patterns (flags 0) of repository paths; a
	 * head whose change touches one waits for a person's release before
	 * its first run here (docs/hosts.md, "When the machine goes down"). */
	char **gate;
	size_t ngate;
};

#define HOST_DEFAULT_TIMEOUT_S 60.0
#define HOST_DEFAULT_NOISE 0.05
#define HOST_DEFAULT_MIN_EFFECT 0.01
#define HOST_DEFAULT_COOLDOWN_MS 0
/* pairs-median/2's defaults (docs/rule.md): 3 pairs, as contributors post,
 * then stages up to 24 while unresolved; at most 64. */
#define HOST_DEFAULT_PAIRS 3
#define HOST_DEFAULT_MAX_PAIRS 24
#define HOST_MAX_PAIRS 64
#define HOST_NAME_LEN_MAX 63            /* [host] name: as a hub takes a host's name */
#define HOST_DEFAULT_FAULT_LOG "/dev/kmsg"
#define HOST_DEFAULT_NODES "/dev/dri/* /dev/nvidia* /dev/kfd"
/* Where the previous boot's kernel log is kept: the journal, when it is
 * persistent, and pstore's records of a crash (docs/hosts.md, "When the
 * machine goes down"). */
#define HOST_DEFAULT_BOOT_LOG_COMMAND "journalctl -k -b -1 -q --no-pager"
#define HOST_DEFAULT_BOOT_LOG "/sys/fs/pstore"
#define HOST_BOOT_LOG_MAX 16            /* [faults] boot_log: paths at most */
#define HOST_GATE_MAX 64                /* [gate] paths: patterns at most */
#define HOST_GATE_PATTERN_MAX 256       /* bytes of one */

/*
 * Parses the profile at path into a new object, the caller's to free with
 * host_profile_free(). *out is set to NULL on entry, so it may be freed on
 * every path. On success returns 0. On a mistake in the file, returns
 * -EINVAL, with *out NULL, and appends one line per mistake to errors
 * ("path:line: message\n"), every one in the file (errors is appended to,
 * never reset). When the file cannot be read, returns the negative errno
 * with the detail in err_last() and in errors.
 */
int host_profile_load(struct host_profile **out, const char *path,
		      struct strbuf *errors);
/* host_profile_load's parse and checks of a profile's text (len bytes, not
 * NUL-terminated), read from path, which only names it in messages. */
int host_profile_parse(struct host_profile **out, const char *path, const char *text,
		       size_t len, struct strbuf *errors);
void host_profile_free(struct host_profile *profile);

/*
 * Resolves a --host argument: one with a '/' or ending in ".conf" is a path
 * and is returned as is; a bare NAME is looked up as NAME.conf in the
 * source tree's hosts/ and then in the installed profiles. Returns 0 and a
 * path the caller frees in *out, or -ENOENT (detail in err_last()) when a
 * bare name has no profile, -EINVAL when it is not a valid name. *out is
 * NULL on every failure.
 */
int host_profile_resolve(char **out, const char *arg);

/* False for a CPU host: a profile without [device], which names no GPU. */
bool host_profile_has_device(const struct host_profile *profile);

/*
 * True when line matches one of the profile's fault patterns; the index of
 * the first pattern that matched goes to *out_index when it is not NULL.
 */
bool host_profile_fault_match(const struct host_profile *profile,
			      const char *line, size_t *out_index);

#endif
