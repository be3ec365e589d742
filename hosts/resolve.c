/* Finding a profile by bare name. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hosts.h"

static bool is_path(const char *arg)
{
	size_t len = strlen(arg);

	return strchr(arg, '/') || (len > 5 && strcmp(arg + len - 5, ".conf") == 0);
}

int host_profile_resolve(char **out, const char *arg)
{
	const char *dir = datadir_path(DATADIR_HOSTS);
	char *path;

	*out = NULL;
	if (is_path(arg)) {
		*out = xstrdup(arg);
		return 0;
	}
	if (*arg == '\0' || strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789-_") !=
	    strlen(arg))
		return err_set(-EINVAL,
			       "host '%s' is neither a path nor a profile name (a-z, 0-9, '-', '_')",
			       arg);
	path = xasprintf("%s/%s.conf", dir, arg);
	if (access(path, R_OK) == 0) {
		*out = path;
		return 0;
	}
	free(path);
	return err_set(-ENOENT, "no host profile '%s' in %s", arg, dir);
}
