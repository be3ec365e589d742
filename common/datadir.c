/*
 * Where perfd's shipped files are read: the host profiles, the dashboard,
 * the documents and the demo's history. A binary run from inside the build
 * tree it was built in (the tests, ./dev.sh, build/daemon/perfd by hand)
 * reads the source tree's, so an edit there shows at once; any other (the
 * installed one) reads the copies `meson install` put under the data
 * directory, and never the source tree, which may be gone or be another
 * version.
 */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

/* Set by meson (common/meson.build). */
#if !defined(PERFD_SOURCE_ROOT) || !defined(PERFD_BUILD_ROOT) || !defined(PERFD_DATA_DIR)
#error "PERFD_SOURCE_ROOT, PERFD_BUILD_ROOT and PERFD_DATA_DIR must be defined"
#endif

static const char *const source_paths[] = {
	[DATADIR_HOSTS] = PERFD_SOURCE_ROOT "/hosts",
	[DATADIR_STATIC] = PERFD_SOURCE_ROOT "/web/static",
	[DATADIR_DOCS] = PERFD_SOURCE_ROOT "/docs",
	[DATADIR_DEMO] = PERFD_SOURCE_ROOT "/kernels/demo/history",
};

static const char *const installed_paths[] = {
	[DATADIR_HOSTS] = PERFD_DATA_DIR "/hosts",
	[DATADIR_STATIC] = PERFD_DATA_DIR "/static",
	[DATADIR_DOCS] = PERFD_DATA_DIR "/docs",
	[DATADIR_DEMO] = PERFD_DATA_DIR "/demo",
};

bool datadir_is_build_tree(void)
{
	char exe[PATH_MAX], *root;
	size_t len;
	bool inside;

	/* Both resolved: the build root as meson named it may hold a link. */
	if (!realpath("/proc/self/exe", exe))
		return false;
	root = realpath(PERFD_BUILD_ROOT, NULL);
	if (!root)
		return false;
	len = strlen(root);
	inside = strncmp(exe, root, len) == 0 && exe[len] == '/';
	free(root);
	return inside;
}

const char *datadir_path(enum datadir which)
{
	assert(which < ARRAY_SIZE(source_paths));
	return datadir_is_build_tree() ? source_paths[which] : installed_paths[which];
}
