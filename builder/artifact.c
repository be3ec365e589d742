/* Artifact hashing and program resolution; see builder.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "builder.h"
#include "common.h"

int builder_file_sha256(char out_hex[65], int64_t *out_size, const char *path)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned char buf[1 << 16];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = NULL;
	int64_t size = 0;
	ssize_t n;
	int fd, r = 0;
	unsigned i;

	out_hex[0] = '\0';
	*out_size = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(-errno, "cannot read '%s': %s", path, strerror(errno));
	ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		r = err_set(-ENOMEM, "sha256 unavailable");
		goto out;
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = err_set(-errno, "cannot read '%s': %s", path, strerror(errno));
			goto out;
		}
		EVP_DigestUpdate(ctx, buf, (size_t)n);
		size += n;
	}
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	for (i = 0; i < mdlen && i < 32; i++)
		snprintf(out_hex + 2 * i, 3, "%02x", md[i]);
	out_hex[64] = '\0';
	*out_size = size;
out:
	EVP_MD_CTX_free(ctx);
	close(fd);
	return r;
}

void builder_sha256_hex(char out_hex[65], const void *buf, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	if (!EVP_Digest(buf, len, md, &mdlen, EVP_sha256(), NULL))
		fatalx("sha256 unavailable");
	for (i = 0; i < mdlen && i < 32; i++)
		snprintf(out_hex + 2 * i, 3, "%02x", md[i]);
	out_hex[64] = '\0';
}

static int check_executable(const char *path, const char *name)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return err_set(-errno, "program '%s': %s", name, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return err_set(-EISDIR, "program '%s' is a directory", name);
	if (!S_ISREG(st.st_mode))
		return err_set(-EACCES, "program '%s' is not a regular file", name);
	if (access(path, X_OK) < 0 || !(st.st_mode & 0111))
		return err_set(-EACCES, "program '%s' is not executable "
			       "(mode %04o)", name, st.st_mode & 07777);
	return 0;
}

int builder_program_resolve(char **out, const char *name)
{
	char resolved[PATH_MAX];
	const char *path;
	char *dirs, *dir, *save = NULL;
	int r;

	*out = NULL;
	if (!*name)
		return err_set(-EINVAL, "empty program name");
	if (strchr(name, '/')) {
		r = check_executable(name, name);
		if (r < 0)
			return r;
		if (!realpath(name, resolved))
			return err_set(-errno, "program '%s': %s", name, strerror(errno));
		*out = xstrdup(resolved);
		return 0;
	}
	path = getenv("PATH");
	dirs = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	r = err_set(-ENOENT, "program '%s' not found in PATH", name);
	for (dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *cand = xasprintf("%s/%s", *dir ? dir : ".", name);

		if (access(cand, X_OK) == 0 && check_executable(cand, name) == 0 &&
		    realpath(cand, resolved)) {
			*out = xstrdup(resolved);
			r = 0;
			free(cand);
			break;
		}
		free(cand);
	}
	free(dirs);
	return r;
}
