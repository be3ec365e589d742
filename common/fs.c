/* Directories made with their parents and removed with their contents;
 * small files read whole. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

int fs_mkdir_p(const char *path)
{
	char *buf = xstrdup(path), *p;
	int r = 0;

	for (p = buf + 1; *p && r == 0; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) < 0 && errno != EEXIST)
			r = err_set(-errno, "cannot create '%s': %s", buf, strerror(errno));
		*p = '/';
	}
	if (r == 0 && mkdir(buf, 0777) < 0 && errno != EEXIST)
		r = err_set(-errno, "cannot create '%s': %s", buf, strerror(errno));
	free(buf);
	return r;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int fs_rm_rf(const char *path)
{
	if (access(path, F_OK) < 0)
		return 0;
	if (nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) < 0)
		return err_set(-errno, "cannot remove '%s': %s", path, strerror(errno));
	return 0;
}

char *fs_absolute(const char *path)
{
	char cwd[4096], *r = realpath(path, NULL);

	if (r)
		return r;
	if (*path == '/' || !getcwd(cwd, sizeof(cwd)))
		return xstrdup(path);
	return xasprintf("%s/%s", cwd, path);
}

/* nftw's callback takes no context: the owner to give, per thread. */
static __thread unsigned chown_uid, chown_gid;

static int chown_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return lchown(path, chown_uid, chown_gid) < 0 && errno != ENOENT ? -1 : 0;
}

int fs_chown_r(const char *path, unsigned uid, unsigned gid)
{
	chown_uid = uid;
	chown_gid = gid;
	if (nftw(path, chown_entry, 16, FTW_PHYS) < 0)
		return err_set(-errno, "cannot give '%s' to %u:%u: %s", path, uid, gid,
			       strerror(errno));
	return 0;
}

int fs_read_file(char **out, size_t *out_len, const char *path, size_t max)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[65536];
	struct stat st;
	FILE *f;
	size_t n;
	int r = 0, fd;

	*out = NULL;
	*out_len = 0;
	/* Not blocking at the open: a FIFO named where a file was meant would
	 * wait for a writer for ever. Only a regular file is read. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return err_set(-errno, "'%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(-EINVAL, "'%s' is not a regular file", path);
	}
	fcntl(fd, F_SETFL, 0);
	f = fdopen(fd, "r");
	if (!f) {
		r = -errno;
		close(fd);
		return err_set(r, "'%s': %s", path, strerror(-r));
	}
	while (r == 0 && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
		if (sb.len + n > max)
			r = err_set(-EFBIG, "'%s' is over %zu bytes", path, max);
		else
			strbuf_add(&sb, buf, n);
	}
	if (r == 0 && ferror(f))
		r = err_set(-EIO, "'%s': a read error", path);
	fclose(f);
	if (r < 0) {
		strbuf_release(&sb);
		return r;
	}
	*out_len = sb.len;
	*out = strbuf_detach(&sb);
	return 0;
}

int fs_lock(int *out_fd, const char *path, long *holder)
{
	char buf[32];
	ssize_t n;
	int fd;

	*out_fd = -1;
	*holder = 0;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return err_set(-errno, "'%s': %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		n = pread(fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		*holder = strtol(buf, NULL, 10);
		close(fd);
		if (e == EWOULDBLOCK)
			return err_set(-EBUSY, "'%s' is held by process %ld", path, *holder);
		return err_set(-e, "'%s': %s", path, strerror(e));
	}
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
		int e = errno;

		close(fd);
		return err_set(-e, "'%s': %s", path, strerror(e));
	}
	*out_fd = fd;
	return 0;
}
