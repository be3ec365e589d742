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

/* What a file that is not a regular one is, for a refusal. */
const char *fs_kind(unsigned mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISLNK(mode))
		return "a symbolic link";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return S_ISREG(mode) ? "a regular file" : "a special file";
}

/* The refusal of name (the first len bytes of rel), which fstatat found
 * to be st, where a directory (dir) or a regular file was wanted. */
static int refuse(const char *rel, size_t len, const struct stat *st, bool dir)
{
	if (S_ISLNK(st->st_mode))
		return err_set(-ELOOP, "'%.*s' is a symbolic link: artifacts are not followed out "
			       "of the build directory", (int)len, rel);
	if (dir)
		return err_set(-ENOTDIR, "'%.*s' is %s, not a directory", (int)len, rel,
			       fs_kind(st->st_mode));
	if (S_ISDIR(st->st_mode))
		return err_set(-EISDIR, "'%.*s' is a directory, not a regular file", (int)len, rel);
	return err_set(-EINVAL, "'%.*s' is %s: only regular files are read", (int)len, rel,
		       fs_kind(st->st_mode));
}

/*
 * One component: looked at without following it, then opened without
 * following it (O_NOFOLLOW, and never waiting: O_NONBLOCK, which a FIFO
 * or device put there between the two would otherwise make us do), then
 * looked at again through the descriptor.
 */
static int open_component(int dirfd, const char *rel, size_t end, const char *name, bool dir)
{
	struct stat st;
	int fd, flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return err_set(-errno, "'%.*s': %s", (int)end, rel, strerror(errno));
	if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
		return refuse(rel, end, &st, dir);
	fd = openat(dirfd, name, flags | (dir ? O_DIRECTORY : 0));
	if (fd < 0)
		return err_set(-errno, "'%.*s': %s", (int)end, rel,
			       errno == ELOOP ? "a symbolic link" : strerror(errno));
	if (fstat(fd, &st) < 0 || (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
		close(fd);
		return refuse(rel, end, &st, dir);
	}
	if (!dir)
		fcntl(fd, F_SETFL, 0);
	return fd;
}

int fs_open_beneath(int dirfd, const char *rel, bool dir)
{
	char *copy = xstrdup(rel), *name, *save = NULL, *next_name;
	int fd = dirfd, next = 0;

	/* strtok_r cuts copy in place: a name's end in copy is its end in rel. */
	name = strtok_r(copy, "/", &save);
	while (name && !strcmp(name, "."))
		name = strtok_r(NULL, "/", &save);
	if (!name) {
		next = dir ? openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
			   : err_set(-EISDIR, "'%s' names a directory", rel);
		if (next < 0 && dir)
			next = err_set(-errno, "'%s': %s", rel, strerror(errno));
	}
	while (name) {
		size_t end = (size_t)(name - copy) + strlen(name);

		do
			next_name = strtok_r(NULL, "/", &save);
		while (next_name && !strcmp(next_name, "."));
		if (!strcmp(name, ".."))
			next = err_set(-EXDEV, "'%.*s' leaves the directory it is read from",
				       (int)end, rel);
		else
			next = open_component(fd, rel, end, name, next_name ? true : dir);
		if (fd != dirfd)
			close(fd);
		if (next < 0)
			break;
		fd = next;
		name = next_name;
	}
	free(copy);
	return next;
}
