/* Artifact hashing and program resolution; see builder.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builder.h"
#include "common.h"

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
