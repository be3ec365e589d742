/*
 * wire-internal.h: the field tables of web/wire (fields.c), for record.c
 * and the unit tests beside them; no other folder includes it.
 *
 * A record kind is a table of its members. Each row says a member's JSON
 * name, its type, where its value lives in the C struct the table
 * describes, its bounds, whether it may be left out or be null, and since
 * when it is sent. The one table writes the member (wire_fields_build),
 * reads it back (wire_fields_parse: its bounds, every required member
 * there, none unknown, the member's path in the error) and gives the line
 * of docs/records.md's field table (wire_fields_doc), which test-fields.c
 * holds against the document. What a row cannot say (a cross-field check,
 * base64, the sha256) is a record's own code in record.c.
 *
 * What a null (or a member left out) is in C:
 * - a number below its lower bound: written as null (WIRE_NULL) or left
 *   out (WIRE_OPTIONAL), read back as lo - 1 for an integer (exit -1, an
 *   id 0), NAN for a real (lo for a real WIRE_ABOVE lo), and a real that
 *   is not finite likewise;
 * - a string: NULL for a char *, "" for a char array;
 * - anything with WIRE_HAS: the bool at `has` false.
 */
#ifndef PERFD_WIRE_INTERNAL_H
#define PERFD_WIRE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "wire.h"

enum wire_type {
	WIRE_CONST,      /* words[0] and nothing else, stored nowhere (a format) */
	WIRE_BOOL,       /* bool */
	WIRE_INT,        /* int, from lo to hi */
	WIRE_I64,        /* int64_t, from lo to hi */
	WIRE_REAL,       /* double, finite; from lo (WIRE_FROM) or above it
	                  * (WIRE_ABOVE), at most hi where hi is not 0 */
	WIRE_TEXT,       /* a string of lo to hi bytes */
	WIRE_HOST,       /* char[64]: 1 to 63 letters, digits, '.', '_' or '-' */
	WIRE_TIME,       /* char[32]: a time as perfd writes them */
	WIRE_COMMIT,     /* char[41]: 40 lower-case hex digits */
	WIRE_HASH,       /* 64 lower-case hex digits */
	WIRE_WORD,       /* one of words, copied */
	WIRE_ENUM,       /* one of words (from index lo to hi, where hi is not
	                  * 0), its index in an int-sized enum */
	WIRE_FLAG,       /* words[0] or words[1]: a bool, true for words[1] */
	WIRE_OBJECT,     /* an object of the members of sub */
	WIRE_LIST,       /* a list of at most hi entries, each as sub[0] says */
	WIRE_CUSTOM,     /* written by build, read by parse */
};

#define WIRE_OPTIONAL 0x01u      /* may be left out */
#define WIRE_NULL     0x02u      /* may be null */
#define WIRE_HAS      0x04u      /* null where the bool at has is false */
#define WIRE_FROM     0x08u      /* a real's lo bounds it: from lo */
#define WIRE_ABOVE    0x10u      /* a real's lo bounds it: above lo */
#define WIRE_SEALED   0x20u      /* the record's sha256: read, and written by
                                  * the sealing, not with the others */

/* Where in a record a value is, for messages: "processes[3].exit". A path
 * too long ends in "...": it is only ever shown. */
struct wire_at {
	char path[96];
};

struct wire_field {
	const char *name;            /* the member's; NULL ends a table */
	enum wire_type type;
	unsigned flags;
	size_t offset;               /* of the value in what the table describes */
	/* The char array that holds a string (0: a char * the reader
	 * allocates); the bytes of one entry of a list. */
	size_t size;
	size_t count;                /* a list's entries: the size_t's offset */
	size_t has;                  /* WIRE_HAS: the bool's offset */
	int64_t lo, hi;              /* bounds: a number's, a string's bytes, a list's entries */
	const char *const *words;    /* NULL-terminated */
	const struct wire_field *sub;  /* an object's members (offsets from the
	                                * object's), a list's one entry */
	const char *dflt;            /* a char * that is not null: the text for NULL */
	const char *what;            /* what the value must be, where the type cannot say */
	const char *since;           /* since when it is sent, for the docs */
	/* An optional member is written where present says (none: a number
	 * not below lo, a char * not NULL, anything else always). */
	bool (*present)(const void *base);
	/* WIRE_CUSTOM, given the value's address: a new value (NULL: left
	 * out), and the reader, given the value, refusing with wire_bad. */
	json_t *(*build)(const void *at);
	int (*parse)(void *at, json_t *v, const struct wire_at *path);
};

#define WIRE_WORDS(...) ((const char *const[]){ __VA_ARGS__, NULL })

struct wire_at wire_at_key(const struct wire_at *parent, const char *key);
struct wire_at wire_at_index(const struct wire_at *parent, size_t i);
/* -EINVAL with the detail "PATH: expected WHAT" ("the record" for the top). */
int wire_bad(const struct wire_at *a, const char *what);

/* The object of the members of table, from the struct at base: a new
 * value, the caller's. */
json_t *wire_fields_build(const struct wire_field *table, const void *base);
/* Checks that o is an object with every required member of table and no
 * other; -EINVAL naming the first that is not. */
int wire_fields_check(const struct wire_field *table, json_t *o, const struct wire_at *a);
/* wire_fields_check, then each member read into base in the table's order;
 * -EINVAL naming the member at fault. What it allocated is base's, freed
 * by the struct's own release on every path. */
int wire_fields_parse(void *base, const struct wire_field *table, json_t *o,
		      const struct wire_at *a);
/* Reads o's member f->name (absent: as left out) into base. */
int wire_field_parse(void *base, const struct wire_field *f, json_t *o,
		     const struct wire_at *parent);
/* Appends docs/records.md's field table of table, a line per member, nested
 * members by their path (settings.case, processes[].seq). */
void wire_fields_doc(struct strbuf *out, const struct wire_field *table);

/* The record kinds' tables (record.c), for the docs' test. */
extern const struct wire_field wire_record_fields[];
extern const struct wire_field wire_job_fields[];
extern const struct wire_field wire_build_fields[];
extern const struct wire_field wire_alert_fields[];
extern const struct wire_field wire_heartbeat_fields[];
extern const struct wire_field wire_heartbeat_reply_fields[];

#endif
