/*
 * What web/wire/record.c is made of besides itself, shared with its unit
 * tests: the canonical form of a hub record (docs/hub.md, "The canonical
 * form and sha256", canonical.c) and the reading of a record's text into
 * jansson values (json-load.c).
 */
#ifndef PERFD_RECORD_INTERNAL_H
#define PERFD_RECORD_INTERNAL_H

#include <jansson.h>

#include "wire.h"

/* Appends the canonical form of v to out: byte for byte what jansson's
 * json_dumps writes with JSON_SORT_KEYS | JSON_COMPACT |
 * JSON_REAL_PRECISION(17). skip, when not NULL, names a member of v (an
 * object) that is left out, as if it were not there. */
void canonical_write(struct strbuf *out, const json_t *v, const char *skip);

/* What json_loadb(text, len, JSON_REJECT_DUPLICATES, err) returns, the
 * value or NULL with *err filled; the caller's, to json_decref. */
json_t *record_json_load(const char *text, size_t len, json_error_t *err);
/* The same value, read without jansson's reader, or NULL for any text this
 * reader does not take (all it takes jansson takes, as the same value). */
json_t *record_json_read(const char *text, size_t len);

#endif
