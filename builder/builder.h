/*
 * builder: what ties a number to a binary. Today: hashing the artifacts a
 * comparison runs (sha256 and size). The git side (fetch, checkout, build
 * recipe, build cache) joins this folder with the agent.
 *
 * Errors: negative errno with a detail in err_last() naming the file.
 */
#ifndef PERFD_BUILDER_H
#define PERFD_BUILDER_H

#include <stdint.h>

/* Hashes the file at path: out_hex receives 64 hex digits and a NUL,
 * *out_size its size in bytes. */
int builder_file_sha256(char out_hex[65], int64_t *out_size, const char *path);

/* Resolves a program name as a shell would (a name without '/' is searched
 * in PATH) and checks that it is an executable regular file. *out is an
 * absolute path the caller frees. */
int builder_program_resolve(char **out, const char *name);

#endif
