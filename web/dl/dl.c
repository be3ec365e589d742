/* Opening a shared library when it is first needed; see dl.h. */
#include <dlfcn.h>
#include <errno.h>

#include "common.h"
#include "dl.h"

int web_dl_open(void **lib, const char *soname, const char *package,
		const struct web_dl_symbol *syms, size_t n)
{
	void *h;
	size_t i;

	if (*lib)
		return 0;
	h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return err_set(-ENOENT, "cannot open %s (%s); install it (Debian: %s)", soname,
			       dlerror(), package);
	for (i = 0; i < n; i++) {
		void *f = dlsym(h, syms[i].name);

		if (!f) {
			int r = err_set(-ENOENT, "%s has no %s: a version perfd cannot use",
					soname, syms[i].name);

			/* No slot keeps an address in the library closed here. */
			while (i > 0)
				*syms[--i].slot = NULL;
			dlclose(h);
			return r;
		}
		*syms[i].slot = f;
	}
	*lib = h;
	return 0;
}
