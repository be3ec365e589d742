/*
 * The canonical form of a hub record (docs/hub.md, "The canonical form and
 * sha256"), shared by the record writers and readers of record.c and by
 * its unit test.
 */
#ifndef PERFD_CANONICAL_INTERNAL_H
#define PERFD_CANONICAL_INTERNAL_H

#include <jansson.h>

#include "runners.h"

/* Appends the canonical form of v to out: byte for byte what jansson's
 * json_dumps writes with JSON_SORT_KEYS | JSON_COMPACT |
 * JSON_REAL_PRECISION(17). skip, when not NULL, names a member of v (an
 * object) that is left out, as if it were not there. */
void canonical_write(struct strbuf *out, const json_t *v, const char *skip);

#endif
