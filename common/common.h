/*
 * common: what every module needs and nothing else.
 *
 * - log: one place that writes diagnostics (OpenBSD log.c shape). Only
 *   daemon/ and web handlers log; modules return errors instead.
 * - err: a negative errno plus a per-thread detail message. A module sets
 *   the detail where a library's error becomes ours; the caller that logs
 *   reads it with err_last().
 * - strbuf: a growable NUL-terminated byte buffer.
 * - x*alloc: allocation that aborts on out-of-memory.
 * - time: monotonic and wall clock helpers.
 * - sha256: SHA-256 as hex (OpenSSL), for every hash perfd stores or shows.
 * - utf8: the one repair of text that is not UTF-8 and the one cut of a
 *   string on a character boundary, used wherever text from a repository or
 *   a program is stored, rendered as JSON or posted.
 */
#ifndef PERFD_COMMON_H
#define PERFD_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PERFD_VERSION "0.1.0"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#ifdef __GNUC__
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#define NORETURN __attribute__((noreturn))
#else
#define PRINTF_LIKE(f, a)
#define NORETURN
#endif

/* log.c */
enum log_level { LOG_LEVEL_WARN = 0, LOG_LEVEL_INFO = 1, LOG_LEVEL_DEBUG = 2 };
void log_init(const char *progname, enum log_level level);
void log_warn(const char *fmt, ...) PRINTF_LIKE(1, 2);   /* appends strerror(errno) */
void log_warnx(const char *fmt, ...) PRINTF_LIKE(1, 2);
void log_info(const char *fmt, ...) PRINTF_LIKE(1, 2);
void log_debug(const char *fmt, ...) PRINTF_LIKE(1, 2);
void fatal(const char *fmt, ...) PRINTF_LIKE(1, 2) NORETURN;
void fatalx(const char *fmt, ...) PRINTF_LIKE(1, 2) NORETURN;

/* err.c: returns code, so `return err_set(-EIO, "...")` reads naturally. */
int err_set(int code, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* The detail of the last err_set on this thread; never NULL. */
const char *err_last(void);
void err_clear(void);

/* strbuf.c: buf is always NUL-terminated and never NULL after init.
 * strbuf_release accepts NULL and a zeroed strbuf (a struct memset to 0 by
 * a loader), and leaves an initialised empty one. */
struct strbuf {
	char *buf;
	size_t len;
	size_t alloc;
};
#define STRBUF_INIT { .buf = strbuf_empty, .len = 0, .alloc = 0 }
extern char strbuf_empty[];
void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_adds(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) PRINTF_LIKE(2, 3);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* Returns the buffer, which the caller frees; sb is left empty. */
char *strbuf_detach(struct strbuf *sb);

/* xalloc.c */
/* Aborts as the x*alloc functions do when memory runs out: for a library
 * that reports an allocation failure its own way (inih, glob, jansson,
 * OpenSSL). Never for anything else. */
void xalloc_die(void) NORETURN;
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) PRINTF_LIKE(1, 2);

/* time.c */
int64_t time_monotonic_ns(void);
/* Writes "2026-11-04T10:00:00.123Z" (24 bytes and NUL) for the current time. */
#define TIME_ISO_LEN 32
void time_now_iso(char out[TIME_ISO_LEN]);

/* sha256.c: the lower-case hex SHA-256 of data, of parts hashed as their
 * concatenation, or of a file's bytes (*out_size: how many). out is "" and
 * *out_size 0 on failure: -EIO with OpenSSL's reason when libcrypto cannot
 * hash (no provider offers SHA-256), a negative errno when the file cannot
 * be read. Out of memory aborts. */
#define SHA256_HEX_SIZE 65           /* 64 hex digits and NUL */
int sha256_hex(char out[SHA256_HEX_SIZE], const void *data, size_t len);
int sha256_hex_parts(char out[SHA256_HEX_SIZE], const void *const parts[], const size_t lens[],
		     size_t n);
int sha256_file_hex(char out[SHA256_HEX_SIZE], int64_t *out_size, const char *path);

/*
 * utf8.c: UTF-8 as Unicode defines it: no overlong forms, no surrogates,
 * nothing above U+10FFFF. The repair replaces each maximal ill-formed
 * subpart (Unicode's recommended practice: a stray continuation byte, a
 * byte that starts no sequence, a sequence cut short) with one U+FFFD; a
 * NUL byte is a character like any other.
 */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"   /* U+FFFD in UTF-8 */
bool utf8_is_valid(const char *s, size_t len);
/* Appends s (len bytes), repaired, to out. */
void utf8_repair(struct strbuf *out, const char *s, size_t len);
/* A repaired copy of the string s, the caller's to free. */
char *utf8_repair_dup(const char *s);
/* The largest length up to max at which s (len bytes) may be cut without
 * splitting a character (or an ill-formed subpart, which the repair makes
 * one U+FFFD): len when len <= max. */
size_t utf8_cut(const char *s, size_t len, size_t max);

#endif
