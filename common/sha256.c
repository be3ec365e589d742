/*
 * SHA-256 as lower-case hex, on OpenSSL's EVP interface: the one place that
 * hashes, for artifacts, recipes, comment bodies, fingerprints and output
 * digests alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "common.h"

static int openssl_error(const char *what)
{
	char msg[256];

	ERR_error_string_n(ERR_get_error(), msg, sizeof(msg));
	ERR_clear_error();
	return err_set(-EIO, "openssl: cannot %s a sha256: %s", what, msg);
}

static EVP_MD_CTX *start(int *r)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (!ctx)
		xalloc_die();
	*r = 0;
	if (!EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		*r = openssl_error("start");
		EVP_MD_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

/* Writes the digest as hex into out and frees ctx. */
static int finish(char out[SHA256_HEX_SIZE], EVP_MD_CTX *ctx)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;
	int r = 0;

	if (!EVP_DigestFinal_ex(ctx, md, &mdlen) || mdlen != 32) {
		r = openssl_error("finish");
		goto out;
	}
	for (i = 0; i < 32; i++) {
		out[2 * i] = digits[md[i] >> 4];
		out[2 * i + 1] = digits[md[i] & 15];
	}
	out[64] = '\0';
out:
	EVP_MD_CTX_free(ctx);
	return r;
}

int sha256_hex_parts(char out[SHA256_HEX_SIZE], const void *const parts[], const size_t lens[],
		     size_t n)
{
	EVP_MD_CTX *ctx;
	size_t i;
	int r;

	out[0] = '\0';
	ctx = start(&r);
	if (!ctx)
		return r;
	for (i = 0; i < n; i++) {
		if (!EVP_DigestUpdate(ctx, parts[i], lens[i])) {
			r = openssl_error("compute");
			EVP_MD_CTX_free(ctx);
			return r;
		}
	}
	return finish(out, ctx);
}

int sha256_hex(char out[SHA256_HEX_SIZE], const void *data, size_t len)
{
	const void *parts[] = { data };
	size_t lens[] = { len };

	return sha256_hex_parts(out, parts, lens, 1);
}

/* Whether *bound lets n more bytes of name be hashed: 0, or the refusal. */
static int bound_check(const struct sha256_bound *bound, const char *name, int64_t n)
{
	double s;

	if (!bound)
		return 0;
	if (bound->max_bytes && bound->bytes + n > bound->max_bytes)
		return err_set(-EFBIG, "hashing '%s' passes the bound of %lld bytes hashed per "
			       "build (%lld hashed before it, %lld more to hash)", name,
			       (long long)bound->max_bytes, (long long)bound->bytes, (long long)n);
	s = (double)(time_monotonic_ns() - bound->start_ns) / 1e9;
	if (bound->max_s > 0 && s > bound->max_s)
		return err_set(-ETIMEDOUT, "hashing '%s' passes the bound of %g s of hashing per "
			       "build (stopped after %.1f s, %lld bytes hashed)", name, bound->max_s,
			       s, (long long)bound->bytes);
	return 0;
}

/* Hashes what fd reads, to its end, counted against bound (NULL: none);
 * name is for messages. Closes fd. */
static int hash_fd(char out[SHA256_HEX_SIZE], int64_t *out_size, int fd, const char *name,
		   struct sha256_bound *bound)
{
	unsigned char buf[1 << 16];
	EVP_MD_CTX *ctx = NULL;
	int64_t size = 0;
	ssize_t n;
	int r = 0;

	ctx = start(&r);
	if (!ctx)
		goto out;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = err_set(-errno, "cannot read '%s': %s", name, strerror(errno));
			goto out;
		}
		r = bound_check(bound, name, n);
		if (r < 0)
			goto out;
		if (bound)
			bound->bytes += n;
		if (!EVP_DigestUpdate(ctx, buf, (size_t)n)) {
			r = openssl_error("compute");
			goto out;
		}
		size += n;
	}
	r = finish(out, ctx);
	ctx = NULL;
	if (r == 0)
		*out_size = size;
out:
	EVP_MD_CTX_free(ctx);
	close(fd);
	return r;
}

int sha256_file_hex(char out[SHA256_HEX_SIZE], int64_t *out_size, const char *path)
{
	int fd;

	out[0] = '\0';
	*out_size = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(-errno, "cannot read '%s': %s", path, strerror(errno));
	return hash_fd(out, out_size, fd, path, NULL);
}

int sha256_file_beneath(char out[SHA256_HEX_SIZE], int64_t *out_size, const char *dir,
			const char *rel, struct sha256_bound *bound)
{
	struct stat st;
	int dirfd, fd, r;

	out[0] = '\0';
	*out_size = 0;
	if (!bound->start_ns)
		bound->start_ns = time_monotonic_ns();
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return err_set(-errno, "cannot read '%s': %s", dir, strerror(errno));
	fd = fs_open_beneath(dirfd, rel, false);
	close(dirfd);
	if (fd < 0)
		return fd;
	/* A sparse file's size is what reading it costs: refused unread. */
	if (fstat(fd, &st) < 0) {
		r = err_set(-errno, "cannot read '%s': %s", rel, strerror(errno));
		close(fd);
		return r;
	}
	r = bound_check(bound, rel, st.st_size);
	if (r < 0) {
		close(fd);
		return r;
	}
	return hash_fd(out, out_size, fd, rel, bound);
}

bool sha256_hex_equal(const char *a, const char *b)
{
	size_t na = strnlen(a, SHA256_HEX_SIZE), nb = strnlen(b, SHA256_HEX_SIZE);

	/* The lengths are no secret (both are 64 for every stored hash); the
	 * digits are compared in time that does not depend on where they
	 * differ. */
	return na == SHA256_HEX_SIZE - 1 && nb == na && CRYPTO_memcmp(a, b, na) == 0;
}
