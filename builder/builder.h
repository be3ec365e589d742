/*
 * builder: what ties a number to a binary: git (libgit2: a mirror of the
 * watched repository, fetch, head discovery, commit facts, checkout of a
 * commit's tree), the build itself (its row, the recipe in a fresh process,
 * the build cache) and the hashing of what a build produced. The only
 * folder that includes git2.h. Includes common/ and db/.
 *
 * Errors: negative errno with a detail in err_last() naming the file, the
 * URL or the ref: -ENOENT for an unknown commit or ref (or a local URL that
 * names nothing), -EHOSTUNREACH for a remote that cannot be reached,
 * -EPROTO for a remote that answers but is not a git repository, -EACCES
 * for a remote that wants credentials, -EIO otherwise.
 *
 * Outputs are zeroed on entry (NULL, 0, ""), before anything can fail, so
 * that on every path they may be released with their _free or _release.
 * builder_file_read is the exception: it appends to a strbuf the caller
 * owns and leaves it as it was on failure.
 */
#ifndef PERFD_BUILDER_H
#define PERFD_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "db.h"

struct sandbox;                  /* common/sandbox/sandbox.h */

/* Resolves a program name as a shell would (a name without '/' is searched
 * in PATH) and checks that it is an executable regular file. *out is an
 * absolute path the caller frees. */
int builder_program_resolve(char **out, const char *name);

/* ---- git ---- */

#define BUILDER_OID_HEX 41          /* 40 hex digits and a NUL */

struct builder_repo;

/* Opens the bare mirror of url kept at dir, creating it when absent (dir's
 * parent must exist), and points its remote "origin" at url (an existing
 * mirror follows a changed url). url is file://, a local path (kept as a
 * file:// URL), http(s):// or ssh://. Nothing is fetched. -EPROTO when dir
 * exists and is not a bare repository. *out is the caller's:
 * builder_repo_free. A repo is used by one thread at a time. */
int builder_repo_open(struct builder_repo **out, const char *dir, const char *url);
/* Removes the lock files (NAME.lock) that a git process killed while it
 * wrote left in the mirror at dir, so that the next fetch is not refused.
 * Only for a caller that knows no other process writes there (the agent,
 * under its work directory's lock). Returns how many, or a negative errno. */
int builder_repo_clear_locks(const char *dir);
void builder_repo_free(struct builder_repo *r);
/* Lets go of what the open mirror holds from the objects and references
 * it has read (libgit2 keeps every pack of the mirror open and mapped once
 * a lookup has searched it, and a fetch adds a pack), so that a process
 * that reads the mirror again after every fetch (the agent, at each poll)
 * keeps no more than one poll's worth; the next read loads what it needs
 * from the files as they are then. */
int builder_repo_refresh(struct builder_repo *r);
/* Each fetch that brings objects adds a pack to the mirror (libgit2 has no
 * gc), and every pack costs each read of the mirror a little memory and
 * time. When the mirror has more than max_packs packs, those but the
 * largest are written again as one and removed (a pack a .keep protects
 * is left alone); returns how many were joined (0 when under the bound),
 * or -EIO. builder_repo_refresh must follow before r reads again. */
int builder_repo_consolidate(struct builder_repo *r, size_t max_packs);
/* The remote's URL for messages: without a password; borrowed from r. */
const char *builder_repo_url(const struct builder_repo *r);

/* What builder_repo_fetch brings besides the branches. */
enum {
	BUILDER_FETCH_PULLS = 1 << 0,    /* refs/pull/N/head */
	BUILDER_FETCH_TAGS = 1 << 1,     /* refs/tags/NAME */
};
/* Fetches branches (refs/heads/NAME into refs/remotes/origin/NAME), with
 * BUILDER_FETCH_PULLS pull-request heads (refs/pull/N/head into
 * refs/remotes/pull/N/head) and with BUILDER_FETCH_TAGS tags (into
 * refs/tags/NAME), forced (a force-pushed head or moved tag replaces the
 * old one) and pruned (a deleted one disappears). -EFBIG when the remote
 * sends more than the fetch bound (16 GiB). There is no timeout: a server
 * that stops answering blocks the call, so the agent runs it in a child
 * process (perfd fetch) that it can bound and stop. */
int builder_repo_fetch(struct builder_repo *r, unsigned what);
/* Credentials for the fetches over http(s) that follow: given only to a
 * server at origin's own scheme, host and port, once per fetch (refused,
 * the fetch fails with -EACCES). Copies are kept, and zeroed when replaced
 * or freed; they appear in no message. -EINVAL when origin is not http(s). */
int builder_repo_set_credentials(struct builder_repo *r, const char *user, const char *password);

struct builder_head {
	char *name;                  /* "main", "feature/x", or "pull/17" */
	bool is_pull;
	int pull;                    /* the number, for a pull head */
	char oid[BUILDER_OID_HEX];
};
/* The fetched heads whose branch name matches one of the fnmatch(3)
 * patterns (flags 0, so "release/<star>" also matches "release/a/b"), and
 * every fetched pull head when pulls is true, sorted by name (strcmp).
 * -E2BIG beyond 100000 heads. *out is the caller's: builder_heads_free. */
int builder_repo_heads(struct builder_repo *r, struct builder_head **out, size_t *out_n,
		       const char *const *patterns, size_t npatterns, bool pulls);
void builder_heads_free(struct builder_head *heads, size_t n);

struct builder_commit {
	char oid[BUILDER_OID_HEX];
	char tree[BUILDER_OID_HEX];
	char first_parent[BUILDER_OID_HEX];  /* "" for a root commit */
	char second_parent[BUILDER_OID_HEX]; /* a merge's second parent, else "" */
	char *subject;               /* first line of the message */
	char *author;                /* "Name <email>" */
	int64_t time;                /* committer time, seconds since the epoch */
};
/* Facts of a commit named by hex oid or by ref ("origin/main"); a tag is
 * peeled. -ENOENT when rev names nothing, -EINVAL when it names something
 * that is not a commit. subject and author are cut at 1024 bytes; they are
 * out's, freed by builder_commit_release. */
int builder_commit_load(struct builder_repo *r, struct builder_commit *out, const char *rev);
void builder_commit_release(struct builder_commit *c);
/* Appends the first max bytes of commit rev's whole message to out;
 * -ENOENT when rev names nothing, as builder_commit_load. */
int builder_commit_message(struct builder_repo *r, struct strbuf *out, const char *rev,
			   size_t max);

/* Whether the change from commit base ("": from nothing) to commit head
 * touches a path (added, changed, removed or renamed, either name) that
 * matches one of the fnmatch(3) patterns, flags 0 (so '*' also matches
 * '/': "<star>.s" is every .s file, "shaders/<star>" all under shaders/):
 * 1 with the first such path in *out_path (the caller's), 0 when none
 * does, or -ENOENT and kin when a commit is not there. */
int builder_diff_touches(struct builder_repo *r, char **out_path, const char *base,
			 const char *head, const char *const *patterns, size_t npatterns);
/* Appends the file at path in the tree of commit rev to out: at most max
 * bytes (-EFBIG beyond), -ENOENT when rev or the file does not exist. out
 * is the caller's, appended to and not reset. */
int builder_file_read(struct strbuf *out, struct builder_repo *r, const char *rev,
		      const char *path, size_t max);

/* The commit n first parents back from rev (rev itself for 0); -ENOENT
 * when its first-parent line is shorter. */
int builder_first_parent_back(struct builder_repo *r, char out[BUILDER_OID_HEX], const char *rev,
			      size_t n);
/* The first-parent line from lo (excluded) to hi (included), oldest first:
 * the commits a branch moved through from lo to hi. lo is a 40-digit id,
 * hi any rev. -ENOENT when lo is not on hi's first-parent line, -ERANGE
 * when it is more than max commits back. *out is the caller's to free. */
int builder_first_parents(struct builder_repo *r, char (**out)[BUILDER_OID_HEX], size_t *out_n,
			  const char *hi, const char *lo, size_t max);
/* The newest commit on rev's first-parent line, rev itself excluded and at
 * most max commits back, that a fetched tag whose name matches the
 * fnmatch(3) pattern points to (an annotated tag through its object), into
 * out, with the tag's name (the newest by name when several point there)
 * in name. -ENOENT when there is none. */
int builder_tag_back(struct builder_repo *r, char out[BUILDER_OID_HEX], char *name, size_t name_n,
		     const char *rev, const char *pattern, size_t max);

/* The merge base of two commits (named as for builder_commit_load) into
 * out; -ENOENT when either is unknown or they share no history. */
int builder_merge_base(struct builder_repo *r, char out[BUILDER_OID_HEX], const char *a,
		       const char *b);

/* Writes the tree of commit oid (or any rev) into dir, without a .git: what
 * a build starts from. dir is created (its parents too) and must not exist:
 * -EEXIST otherwise. Executable bits and symbolic links are kept; a
 * submodule is an empty directory, as in git archive. On failure dir is
 * removed again. */
int builder_checkout(struct builder_repo *r, const char *oid, const char *dir);

/* Commits the files under src_dir (regular files and directories; the
 * executable bit kept) as the next commit of branch in the bare repository
 * at repo_dir (created when absent), with message; the branch's current
 * head, when it has one, is the parent. The new commit's oid goes to out.
 * For making a repository from files perfd ships (the demo). */
int builder_history_commit(char out[BUILDER_OID_HEX], const char *repo_dir,
			   const char *branch, const char *src_dir, const char *message);
/* Points branch at commit oid (created or moved). */
int builder_history_branch(const char *repo_dir, const char *branch, const char *oid);

/* ---- artifacts ---- */

/* Expands glob patterns relative to dir into the regular files they match,
 * sorted, without duplicates; at most max (-E2BIG beyond). Each out[i] is a
 * path relative to dir, the caller's (free each, then out). The patterns
 * are walked from dir with openat, one component at a time, and no link is
 * followed: a symbolic link matched at any component is refused (-ELOOP),
 * and so are a FIFO, device or socket the last one matches (-EINVAL), a
 * ".." (-EXDEV); a directory it matches is passed over. err_last() names
 * the path. -ENOENT when a pattern matches nothing. */
int builder_glob(char ***out, size_t *out_n, const char *dir, const char *const *patterns,
		 size_t npatterns, size_t max);

/* ---- builds (build.c) ---- */

#define BUILDER_LOG_MAX (1024 * 1024)     /* bytes of a build's log kept */
#define BUILDER_ARTIFACTS_MAX 256
#define BUILDER_TOOLCHAIN_TIMEOUT_S 30.0

/* How a commit is built on a host. Everything is borrowed for the call. */
struct builder_build_opts {
	const char *host;            /* the host the row names */
	const char *workdir;         /* builds go to WORKDIR/builds/TREE-RECIPE-TIME, new each */
	const char *recipe_hash;     /* of everything that decides how a tree is built */
	const char *command;         /* the recipe: /bin/sh -c in the checkout */
	const char *const *env;      /* "K=V" set over our environment */
	size_t nenv;
	const char *const *artifacts;/* glob patterns relative to the checkout */
	size_t nartifacts;
	double timeout_s;
	const char *toolchain;       /* a command whose first line names the toolchain, or NULL */
	const char *fingerprint;     /* the host's, stored with the build; or NULL */
	int cancel_fd;               /* readable: stop; -1: none */
	const struct sandbox *sandbox; /* the recipe runs in it (its directory writable); NULL: not */
	bool network;                /* the recipe may reach the network in the sandbox */
	struct sha256_bound hash;    /* the bounds of hashing the artifacts; 0: none */
	/* Called once the row exists, before the checkout (for progress). */
	void (*on_start)(void *ctx, const struct db_build *b);
	/* Called with the recipe's output as it comes, or NULL. */
	void (*on_output)(void *ctx, const char *buf, size_t len);
	void *ctx;
};

/* The build of commit: the newest one of its tree with this recipe on this
 * host that was not abandoned, done or failed (a cache hit: returns 1), or
 * made now (returns 0): a row in state running before the checkout, then
 * its outcome (done, or failed with a sentence in detail: the checkout, the
 * recipe's exit, artifacts that match nothing, a link or a special file,
 * a hashing bound passed). *out is zeroed on entry
 * and the caller's to release. -ECANCELED when cancel_fd fired: the row is
 * abandoned and the tree built again next time; a database error
 * otherwise. */
int builder_build_ensure(struct db_build *out, struct builder_repo *repo, struct db *db,
			 const char *commit, const struct builder_build_opts *o);
/* builder_build_ensure's build of commit made now, whatever was built
 * before, and stored nowhere (perfd agent --check --trial): out holds its
 * outcome (state, detail, exit, log, artifacts hashed, directory), out->id
 * is 0, and its directory is the caller's to remove. Returns 0, or
 * -ECANCELED (the directory removed) or the commit's error. */
int builder_build_try(struct db_build *out, struct builder_repo *repo, const char *commit,
		      const struct builder_build_opts *o);
/* Hashes build b's artifacts again, from its directory without following
 * a link and within limits: 0 when every one is the file it hashed, 1 when
 * one changed, is gone, became a link or special file or passes a bound
 * (*why, the caller's, says which: the build is stale), or a negative
 * errno when hashing fails otherwise. */
int builder_build_verify(const struct db_build *b, const struct sha256_bound *limits,
			 char **why);

#endif
