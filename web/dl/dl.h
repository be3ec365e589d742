/*
 * web/dl: opening a shared library when it is first needed. libcurl (the
 * forge side) and libmicrohttpd (the hub), with the 30-odd libraries they
 * bring (GnuTLS, Kerberos, LDAP, ...), are opened only by the verbs that
 * speak HTTP, so that every other verb, perfd pair first, starts without
 * loading them (docs/performance.md).
 */
#ifndef PERFD_WEB_DL_H
#define PERFD_WEB_DL_H

#include <stddef.h>

struct web_dl_symbol {
	const char *name;
	void **slot;             /* where the function's address goes */
};
/* Opens soname into *lib (nothing when *lib is set already) and fills each
 * symbol's slot; -ENOENT naming the library and the Debian package to
 * install, or the symbol missing. *lib is in/out, so it is not zeroed; on
 * failure it stays NULL and no slot is left set. */
int web_dl_open(void **lib, const char *soname, const char *package,
		const struct web_dl_symbol *syms, size_t n);

#endif
