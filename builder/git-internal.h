/*
 * builder/git-internal.h: what git.c shares with checkout.c, and the bounds
 * on what a remote can make us allocate. Not part of the module's
 * interface; only builder/ includes it (the unit test lowers the bounds to
 * reach them).
 */
#ifndef PERFD_BUILDER_GIT_INTERNAL_H
#define PERFD_BUILDER_GIT_INTERNAL_H

#include <stddef.h>

#include <git2.h>

struct builder_repo {
	git_repository *repo;
	git_remote *remote;          /* origin, looked up once: libgit2 1.5 leaks a
				      * little at every lookup, which a daemon that
				      * fetches every minute would feel */
	char *dir;
	char *url;                   /* for messages: origin's, without a password */
	char *origin;                /* "scheme://host[:port]" of origin, for credentials */
	char *cred_user;             /* credentials for http(s) fetches, or NULL */
	char *cred_password;
};

/* The commit rev names (hex oid, ref, any revparse syntax; tags peeled),
 * the caller's: -ENOENT when it names nothing, -EINVAL when it cannot be
 * parsed or names something that is not a commit. */
int builder_git_commit_lookup(git_commit **out, git_repository *repo, const char *rev);

/* git_error_last()'s message, or "unknown error"; never NULL. */
const char *builder_git_msg(void);

struct builder_git_limits {
	size_t fetch_bytes;          /* pack bytes one fetch may receive */
	size_t heads;                /* heads builder_repo_heads returns */
	size_t text;                 /* bytes of a subject or an author kept */
	size_t depth;                /* directories nested in a checkout */
};

extern struct builder_git_limits builder_git_limits;

#endif
