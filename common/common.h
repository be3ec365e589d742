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
 * - fs: mkdir -p, rm -rf, a small file read whole.
 * - ini: INI text split into sections and keys, every line numbered.
 * - config: the values of configuration files, checked and refused one way.
 * - cpus: CPU sets as the kernel writes them ("0-3,6").
 * - child: the fresh-process launcher, used by builder/ (recipes), runners/
 *   (measured programs and contract runners) and daemon/ (the fetch); a
 *   child may run inside another program through a wrap (the sandbox,
 *   common/sandbox/, the room above this one).
 * - sha256: SHA-256 as hex (OpenSSL), for every hash perfd stores or shows,
 *   and their comparison in constant time.
 * - base64: bytes inside JSON (captured output in an ingest record).
 * - datadir: where the shipped files (host profiles, dashboard, documents,
 *   the demo's history) are read: the source tree's or the installed ones.
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
/* Makes buf (from malloc, alloc bytes, len of them used and a NUL after
 * them) the contents of sb, which owns it from then on; what sb held is
 * freed. */
void strbuf_attach(struct strbuf *sb, char *buf, size_t len, size_t alloc);

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

/* datadir.c: the shipped files perfd reads at run time. A binary inside the
 * build tree it was built in reads the source tree's copies, any other the
 * installed ones (PREFIX/share/perfd/...); never NULL, a path that need not
 * exist. */
enum datadir { DATADIR_HOSTS, DATADIR_STATIC, DATADIR_DOCS, DATADIR_DEMO };
bool datadir_is_build_tree(void);
const char *datadir_path(enum datadir which);

/* csv.c: appends s (len bytes) as one CSV text field: as it is, or in
 * double quotes (a quote doubled) when it holds a comma, a quote or a line
 * break, or starts with a character a spreadsheet would take for a formula
 * (=, +, -, @, a tab, a carriage return), which then also gets a leading
 * apostrophe so that it stays text. Numbers are written by their callers,
 * unquoted. */
void csv_text(struct strbuf *out, const char *s, size_t len);

/* time.c */
int64_t time_monotonic_ns(void);
/* Writes "2026-11-04T10:00:00.123Z" (24 bytes and NUL) for the current time. */
#define TIME_ISO_LEN 32
void time_now_iso(char out[TIME_ISO_LEN]);
struct timespec;
/* The time of a string time_now_iso wrote; -EINVAL for any other string. */
int time_parse_iso(struct timespec *out, const char *s);

/* fs.c: each returns 0 or -errno with the path in err_last(). fs_mkdir_p
 * makes path and its missing parents (mode 0777 less the umask); fs_rm_rf
 * removes path and what it holds, not following links (a missing path is
 * no error). */
int fs_mkdir_p(const char *path);
int fs_rm_rf(const char *path);
/* The whole regular file at path into *out (NUL-terminated, the caller's) and its
 * length; -EFBIG when it is over max bytes, -EINVAL for what is not a regular
 * file (a directory, a FIFO, a device: never waited on). */
int fs_read_file(char **out, size_t *out_len, const char *path, size_t max);
/* Takes an exclusive lock (flock) on the file at path, made when absent,
 * and writes this process's pid in it; the lock lasts while *out_fd is
 * open (not inherited by children: close-on-exec) and ends with the
 * process however it ends. -EBUSY, with the holder's pid in *holder, when
 * another process holds it. */
int fs_lock(int *out_fd, const char *path, long *holder);
/* path made absolute, the caller's: its links resolved where it exists,
 * else joined to our working directory. */
char *fs_absolute(const char *path);
/* Gives path and what it holds to uid:gid, not following links. */
int fs_chown_r(const char *path, unsigned uid, unsigned gid);
/* Opens rel, a path relative to the directory dirfd, one component at a
 * time from dirfd with openat, following no symbolic link at any of them:
 * what a build left in its directory is read without being led out of it.
 * Empty and "." components are skipped. With dir the last component must
 * be a directory (opened O_DIRECTORY), else a regular file (opened
 * read-only, never waiting at the open). Returns the descriptor
 * (close-on-exec, the caller's) or, with the part of rel in err_last():
 * -ELOOP for a symbolic link, -EXDEV for "..", -ENOTDIR, -EISDIR, -EINVAL
 * for a FIFO, device or socket, another -errno where openat fails. */
int fs_open_beneath(int dirfd, const char *rel, bool dir);
/* "a FIFO", "a symbolic link", ... for a stat mode, in refusals. */
const char *fs_kind(unsigned mode);

/* proc.c: the process table as /proc shows it. proc_stat_read fills out
 * from /proc/WHO/stat (WHO a pid or "self"): false when it cannot be read.
 * proc_descendants puts root and every process below it (by parent, as it
 * is now), at most max, into *out (the caller's to free) and returns how
 * many. proc_state is the state of the process p names (its pid at its
 * start time) now, 0 once it is a zombie or gone; proc_is_there is true
 * while it is not 0.
 * proc_describe says which process pid is and its state ("pid 7 ('prog')
 * in state D (disk sleep), waiting in ..."), for people; the text is the
 * caller's. */
#define PROC_SCAN_MAX 65536          /* processes read from /proc at most */
struct proc_stat {
	long pid;
	long ppid;
	char state;                  /* R, S, D, Z, T, ... */
	unsigned long long start;    /* clock ticks since boot */
};
bool proc_stat_read(struct proc_stat *out, const char *who);
size_t proc_descendants(struct proc_stat **out, long root, size_t max);
char proc_state(const struct proc_stat *p);
bool proc_is_there(const struct proc_stat *p);
char *proc_describe(long pid);

/* owner.c: a process as the owner of a row left running, as text
 * "PID START NS BOOT": its pid, its start time in ticks since boot, its
 * pid namespace and the boot's id. owner_is_gone is true only when that
 * process is surely not running: another boot, or (in this pid namespace)
 * no process with that pid and start time; NULL, text of another shape or
 * another pid namespace give false. owner_pid is the pid in it, 0 when
 * none. */
#define OWNER_LEN 96
void owner_self(char out[OWNER_LEN]);
bool owner_is_gone(const char *owner);
/* True when owner ran in another boot than this one (the machine started
 * again since); the boot it names goes to boot_out ("" for text of another
 * shape) when that is not NULL. owner_boot gives this boot's id, from
 * /proc/sys/kernel/random/boot_id or the file PERFD_BOOT_ID_FILE names
 * (the tests' way to start the machine again); "-" when neither reads. */
bool owner_is_other_boot(const char *owner, char boot_out[40]);
void owner_boot(char out[40]);
long owner_pid(const char *owner);

/* ini.c: splits INI text into lines and hands each to the handler with its
 * 1-based number: a header "[name]" or "[name arg]" (arg NULL when none;
 * both trimmed), a "key = value" (both trimmed; the value may be empty), or
 * an error for a line that is neither, holds a NUL, or is longer than
 * INI_LINE_MAX bytes. Blank lines and lines starting '#' or ';' are
 * comments; there are no comments after a value. A malformed header is
 * an error, then a section with name NULL: the keys after it belong to no
 * section the handler knows. The handler checks names and values and
 * reports its own errors. */
#define INI_LINE_MAX 8192
struct ini_handler {
	void (*section)(void *ctx, unsigned line, char *name, char *arg);
	void (*key)(void *ctx, unsigned line, char *key, char *value);
	void (*error)(void *ctx, unsigned line, const char *msg);
	void *ctx;
};
void ini_parse(const char *text, size_t len, const struct ini_handler *h);

/* config.c: the values of configuration files, one way for all of them.
 * A report gathers a file's mistakes: config_refuse appends one as
 * "NAME:LINE: message\n" ("NAME: message\n" when line is 0), the form every
 * config file's errors take; a parse reports all of them, then fails with
 * config_report_end. name and errors are borrowed from the caller. */
#define CONFIG_SECONDS_MAX (7 * 86400.0)  /* a week: no timeout or interval is longer */
struct config_report {
	const char *name;            /* the file, for messages */
	unsigned line;               /* the line being read; 0: the file as a whole */
	struct strbuf *errors;       /* where the messages go */
	unsigned count;              /* how many were refused */
};
void config_refuse(struct config_report *r, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* 0 when nothing was refused, else -EINVAL with "N errors in 'NAME'". */
int config_report_end(const struct config_report *r);
/* fs_read_file for a configuration file: *out (the caller's) holds its
 * text; the detail of an error says "configuration ...". */
int config_read(char **out, size_t *out_len, const char *path, size_t max);
/* The file at path (at most max bytes) into *out (the caller's), which
 * must be PEM text: hold begin ("-----BEGIN "), and no NUL. Else said at
 * r's line, -EINVAL and *out NULL. */
int config_read_pem(char **out, struct config_report *r, const char *key, const char *path,
		    size_t max, const char *begin);
/* The whole of v as a number from lo to hi, else -EINVAL; nothing said. */
int config_parse_long(long *out, const char *v, long lo, long hi);
/* 1 to max letters, digits, '.', '_' or '-'. */
bool config_name_is_valid(const char *s, size_t max);
/* Starts with '/' (under /dev/, and more than it, for a device) and has no
 * segment "." or "..". */
bool config_path_is_absolute(const char *s);
bool config_path_is_device(const char *s);
/* config_path_is_device, and of a GPU's kind (a pattern's fixed start):
 * under /dev/dri/ or /dev/accel/, or /dev/kfd*, /dev/nvidia*, /dev/mali*,
 * /dev/dxg*. /dev/shm, /dev/mqueue, /dev/kmsg and the like are none. */
bool config_path_is_gpu_node(const char *s);
#define CONFIG_GPU_NODE_WHAT "a GPU's device node (under /dev/dri/ or /dev/accel/, or " \
	"/dev/kfd, /dev/nvidia*, /dev/mali*, /dev/dxg)"
/*
 * The setters: each reads the value v of key into *out, or says at r's
 * line "'KEY': expected WHAT, not 'V'" and returns -EINVAL with *out as it
 * was. Text (a name, a path) is refused empty or set twice (*out not NULL:
 * clear a default first); *out is then the caller's, to free.
 *   bool: true, yes, 1 or false, no, 0.
 *   choice: the index in words (NULL-terminated) of the one v is.
 *   long, int: a whole number from lo to hi.
 *   seconds: a duration above 0 and at most max.
 *   number: a number of unit (for messages: "hours") from lo to hi.
 *   fraction: from 0 up to, not including, 1.
 */
int config_set_text(char **out, struct config_report *r, const char *key, const char *v);
int config_set_name(char **out, struct config_report *r, const char *key, const char *v,
		    size_t max);
int config_set_path(char **out, struct config_report *r, const char *key, const char *v);
int config_set_bool(bool *out, struct config_report *r, const char *key, const char *v);
int config_set_choice(int *out, struct config_report *r, const char *key, const char *v,
		      const char *const *words);
int config_set_long(long *out, struct config_report *r, const char *key, const char *v,
		    long lo, long hi);
int config_set_int(int *out, struct config_report *r, const char *key, const char *v, int lo,
		   int hi);
int config_set_seconds(double *out, struct config_report *r, const char *key, const char *v,
		       double max);
int config_set_number(double *out, struct config_report *r, const char *key, const char *v,
		      double lo, double hi, const char *unit);
int config_set_fraction(double *out, struct config_report *r, const char *key, const char *v);
/* A list: v split at blanks, each word appended to *list (the caller's:
 * config_words_free). A word is refused when is_valid (NULL: any) says no
 * ("expected WHAT"), when once and it is listed already, or past max
 * entries; v without a word is refused too. -EINVAL when any was. */
struct config_words {
	size_t max;
	bool (*is_valid)(const char *word);
	const char *what;            /* what is_valid accepts: "an absolute path" */
	bool once;
};
int config_add_words(char ***list, size_t *n, struct config_report *r, const char *key,
		     const char *v, const struct config_words *how);
void config_words_free(char **list, size_t n);

/*
 * A section's keys as a table: a row per key, in the order the "unknown
 * key" message lists them, ended by a row whose key is NULL. Each row
 * names its field by offset in the section's struct (base), the setter
 * above that its kind stands for, and the bounds that setter takes; what
 * a kind cannot say is a custom row's set. seen, when not 0, is
 * CONFIG_SEEN's offset of a bool made true once the key is set; a row
 * with sub reads the key as that table's same key, its struct at offset.
 */
enum config_kind {
	CONFIG_TEXT,       /* char *: config_set_text */
	CONFIG_NAME,       /* char *: config_set_name, at most hi bytes */
	CONFIG_PATH,       /* char *: config_set_path */
	CONFIG_BOOL,       /* bool */
	CONFIG_CHOICE,     /* an enum: the index of v in choices */
	CONFIG_INT,        /* int from lo to hi */
	CONFIG_UNSIGNED,   /* unsigned from lo to hi, said as config_set_long */
	CONFIG_SECONDS,    /* double above 0, at most hi */
	CONFIG_NUMBER,     /* double of unit from lo to hi */
	CONFIG_FRACTION,   /* double in [0, 1) */
	CONFIG_WORDS,      /* char ** with its size_t count at count: config_add_words */
	CONFIG_CUSTOM,     /* set */
	CONFIG_SUB,        /* sub's row of the same key, with base + offset */
};
struct config_key {
	const char *key;
	enum config_kind kind;
	size_t offset;               /* of the field in base */
	double lo, hi;               /* bounds; a whole number's are whole */
	const char *const *choices;  /* CHOICE: NULL-terminated */
	const char *unit;            /* NUMBER: for messages, "hours" */
	size_t count;                /* WORDS: the offset of the size_t count */
	const struct config_words *words;   /* WORDS */
	size_t seen;                 /* CONFIG_SEEN(type, member), or 0 */
	const struct config_key *sub;       /* SUB */
	/* CUSTOM: sets row's key of the section at base to v, or says why
	 * not in r and returns -EINVAL. */
	int (*set)(void *base, const struct config_key *row, struct config_report *r,
		   const char *v);
};
#define CONFIG_SEEN(type, member) (offsetof(type, member) + 1)
/* The field of row in base, for a custom setter. */
void *config_key_field(void *base, const struct config_key *row);
/* The row of key k in table, or NULL. */
const struct config_key *config_table_find(const struct config_key *table, const char *k);
/* Sets row's field in base to v as its kind says: 0, or -EINVAL said. */
int config_key_set(const struct config_key *row, void *base, struct config_report *r,
		   const char *v);
/* Sets key k of section (its name as the message writes it between [],
 * "runner gpu") to v: 0, -EINVAL said, or -ENOENT for a key the table does
 * not hold, said as "unknown key 'K' in [SECTION] (KEY, KEY, ...)". */
int config_table_set(const struct config_key *table, void *base, struct config_report *r,
		     const char *section, const char *k, const char *v);

/* cpus.c: a CPU set in cpuset(7) list format ("4-7", "0,2,8-11");
 * embedded, no heap. */
#define CPUS_MAX 1024
struct cpus {
	uint64_t bits[CPUS_MAX / 64];
	unsigned count;              /* 0: no pinning */
};
/* Parses a CPU list ("", "3", "0,2", "4-7", "0-1,6-7"; "" is the empty set)
 * into *out, zeroed on entry. Returns 0, or -EINVAL with a sentence in
 * err_last() naming what was wrong (a CPU listed twice, a range that runs
 * backwards, a number at or above CPUS_MAX); *out is then the empty set. */
int cpus_parse(struct cpus *out, const char *text);
bool cpus_has(const struct cpus *cpus, unsigned cpu);
/* Appends the set in its shortest list form ("0-3,6"); "" for none. */
void cpus_format(struct strbuf *out, const struct cpus *cpus);

/* child.c: the fresh-process launcher. The child does setsid, resets
 * signals, sets its descriptors, pins itself when asked and execs; the
 * parent waits on a pidfd and a timer, and on a bound sends SIGTERM to the
 * process group, then SIGKILL after the grace period, and reaps. A process
 * of it that is still there CHILD_KILL_WAIT_S after its SIGKILL (a task
 * stuck in a driver, which no signal ends) is not waited for any longer:
 * it is named in unkillable, and the launcher returns. */
#define CHILD_CAPTURE_DEFAULT (1024 * 1024)
#define CHILD_GRACE_DEFAULT_S 2.0
#define CHILD_KILL_WAIT_S 10.0
#define CHILD_TREE_MAX 4096          /* processes of one child followed at its stop */

struct child {
	/* Filled by the caller. */
	const char *const *argv;     /* argv[0] is the program's path */
	const char *const *env;      /* the whole environment; NULL inherits ours */
	const char *dir;             /* working directory; NULL keeps ours */
	double timeout_s;            /* 0: no bound */
	double grace_s;              /* SIGTERM to SIGKILL; 0: the default */
	const struct cpus *cpus;     /* CPUs to pin to; NULL or an empty set: none */
	size_t capture_max;          /* bytes kept per stream; 0: the default */
	int cancel_fd;               /* readable means stop now; -1: none */
	void (*on_stdout)(void *ctx, const char *buf, size_t len);
	void *ctx;
	/* Runs it inside another program (struct child_wrap); NULL: as it is. */
	const struct child_wrap *wrap;
	int keep_fd;                 /* passed to it as descriptor 3; -1: none */

	/* Results, valid after child_run returns 0. */
	int exit_code;               /* -1 when killed or never started */
	int signal;
	bool timed_out;
	bool cancelled;              /* cut short by our stop (cancel_fd), not its own doing */
	char *spawn_error;           /* why the program could not start, or NULL */
	/* A process of it that outlived SIGKILL by CHILD_KILL_WAIT_S, and its
	 * state ("pid 7 ('prog') in state D (disk sleep)"), or NULL. What a
	 * child stopped by its time bound had started is followed so too; of
	 * one cut short by our own stop (cancelled), only the child itself. */
	char *unkillable;
	/* A bound of its wrap's that it passed (a memory bound), said in
	 * child_failure; NULL: none. */
	char *bound;
	double wall_ms;
	double user_ms;
	double sys_ms;
	int64_t maxrss_kb;
	double cpu_wait_ms;          /* the machine's CPU pressure while it ran: time
				      * some task waited for a CPU (PSI); NAN: unknown */
	struct strbuf out;           /* at most capture_max bytes of each stream */
	struct strbuf err;
	int64_t out_total;           /* bytes written, kept or not */
	int64_t err_total;
	char started_at[TIME_ISO_LEN];
	char ended_at[TIME_ISO_LEN];
};

/*
 * A wrap runs a child inside another program, as the sandbox
 * (common/sandbox/) runs it inside bubblewrap; the launcher knows no more
 * of it than these steps. start (before the fork) sets *out, which comes
 * zeroed but for fd3 (-1), for c: the command line to execute in place of
 * c->argv, a descriptor the child gets as its 3 in place of keep_fd, and
 * whether the program enters c->dir itself; it returns 0, or a negative
 * errno (err_last() says why) and the child is not started. exec_step
 * runs in the child last before its exec, with async-signal-safe calls
 * only and writing no memory but its own stack: NULL, or with errno set
 * what failed ("cannot ... for"), which spawn_error then says of argv[0].
 * finish reads the wrap's word on a program that started and exited (not
 * killed by a signal) and may set c's exit_code, signal or spawn_error
 * from it. ended follows for any child that started and ended, however,
 * and may set c->bound (a bound of the wrap's that it passed). release
 * follows a start that returned 0, whatever happened. exec_step, finish
 * and ended may be NULL.
 */
struct child_wrap_run {
	char **argv;                 /* NULL-terminated; the wrap's */
	int fd3;                     /* closed by the launcher once the child has it */
	bool enters_dir;
	void *state;                 /* the wrap's own */
};
struct child_wrap {
	int (*start)(struct child_wrap_run *out, const struct child *c, const void *ctx);
	const char *(*exec_step)(const struct child_wrap_run *run);
	void (*finish)(const struct child_wrap_run *run, struct child *c);
	void (*ended)(const struct child_wrap_run *run, struct child *c);
	void (*release)(struct child_wrap_run *run);
	const void *ctx;
};

/* An environment for a child: ours, with entries set by child_env_set
 * ("KEY=VALUE", replacing KEY where it is there already). env.v is
 * NULL-terminated, for struct child's env; the strings are its own. */
struct child_env {
	char **v;
	size_t n;
};
void child_env_init(struct child_env *e);
void child_env_set(struct child_env *e, const char *kv);
void child_env_setf(struct child_env *e, const char *fmt, ...) PRINTF_LIKE(2, 3);
void child_env_release(struct child_env *e);

void child_init(struct child *c);
/* Runs the child to its end. Returns 0 once it was reaped, whatever its
 * status (a program that cannot be executed is reported in spawn_error),
 * or a negative errno when the launcher itself could not set up. */
int child_run(struct child *c);
/* child_run of "/bin/sh -c command" with its stderr joined to its stdout
 * (c->out); c->argv is not used. */
int child_run_shell(struct child *c, const char *command);
/* Why a child that ran failed, as a sentence starting with what ("the build
 * recipe exited 2", "... timed out after 60 s", "... was killed by signal
 * 9", "... could not start: ..."); NULL when it exited 0. The caller's. */
char *child_failure(const struct child *c, const char *what);
void child_release(struct child *c);
/* Waits up to ms for cancel_fd (a stop) to become readable: true when it
 * did. With cancel_fd -1 it only waits (a cool-down) and returns false. */
bool child_cancel_wait(int cancel_fd, unsigned ms);

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
/* The bound on hashing files a build made, per pass over them (after the
 * build, at a restart's check, before a runner): bytes and seconds in all,
 * 0 for none. A pass starts it zeroed but for the two bounds; the first
 * file hashed starts its clock. */
struct sha256_bound {
	int64_t max_bytes;
	double max_s;
	int64_t bytes;               /* hashed so far in this pass */
	int64_t start_ns;            /* time_monotonic_ns() at the first file; 0 before */
};
/* sha256_file_hex of rel under dir, opened by fs_open_beneath (no symbolic
 * link followed, only a regular file read) and counted against *bound:
 * -EFBIG when the file would pass its bytes (said before a byte is read),
 * -ETIMEDOUT when hashing runs past its seconds; err_last() names rel and
 * the bound. The one way perfd hashes what a build made. */
int sha256_file_beneath(char out[SHA256_HEX_SIZE], int64_t *out_size, const char *dir,
			const char *rel, struct sha256_bound *bound);
/* Whether a and b are the same 64 hex digits, compared in a time that does
 * not depend on where they differ (a token's hash against the stored ones);
 * false for a string of another length. */
bool sha256_hex_equal(const char *a, const char *b);

/* base64.c: RFC 4648 base64 with padding, for bytes inside JSON. Encoding
 * appends to out. Decoding resets out and fills it; -EINVAL (the detail
 * names the character) for text that is not strict base64 (no blanks,
 * padding only at the end, unused bits zero), -EFBIG for more than max
 * bytes; out is then empty. */
void base64_encode(struct strbuf *out, const void *data, size_t len);
int base64_decode(struct strbuf *out, const char *text, size_t len, size_t max);

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

/*
 * json.c: C values as JSON values (jansson), the one vocabulary every
 * writer (receipts, the API, the records, the forge) uses. Each returns a
 * new value, the caller's (or the container's it is set into).
 *
 * - Text is repaired (utf8_repair) rather than refused by jansson, and
 *   NULL is null.
 * - Integers are integers everywhere: what perfd holds as an integer (an
 *   id, a size, a count) is a JSON integer in every output, and a figure
 *   that may be whole (a RESULT line's count, a metric in a receipt) is
 *   written with json_number: an integer when its value is whole, so
 *   "passed=2" is 2 in a receipt and in the API alike.
 * - Not finite (NAN: a REAL column's NULL, a figure not computed) is null.
 * - A REAL column that must stay a real is written with json_real_or_null:
 *   the records' canonical form holds every REAL column as a JSON real
 *   (docs/hub.md, "The canonical form"), and the API writes measurements
 *   and fractions as reals.
 * - Gains and spreads are fractions in JSON, rounded to six decimals
 *   (json_fraction), and percentages with three decimals in tables
 *   (runner_format_gain).
 */
struct json_t;
/* A JSON string of len bytes of s, repaired; never NULL. */
struct json_t *utf8_json(const char *s, size_t len);
/* o[key] set (v stolen) with the key repaired, since jansson drops a key
 * that is not UTF-8 (a line stored by an older perfd may hold one). */
void utf8_json_set(struct json_t *o, const char *key, struct json_t *v);
/* The string s (len bytes, or up to its NUL), repaired; null for NULL. */
struct json_t *json_textn(const char *s, size_t len);
struct json_t *json_text(const char *s);
/* The same, null also for "" (a field kept as "" when it is absent). */
struct json_t *json_text_or_null(const char *s);
/* An array of the n strings of v, each as json_text writes it. */
struct json_t *json_texts(char *const *v, size_t n);
/* A row's id: an integer; null for 0 (or less), which names no row. */
struct json_t *json_id(int64_t id);
/* A real; null when v is not finite. */
struct json_t *json_real_or_null(double v);
/* Magnitudes under this are whole doubles held exactly, written as
 * integers by json_number. */
#define JSON_WHOLE_MAX 1e15
/* An integer when v is whole and under JSON_WHOLE_MAX in magnitude, else a
 * real; null when v is not finite. */
struct json_t *json_number(double v);
/* A figure written as text (a RESULT line's count): json_number of its
 * value when strtod reads all of text, else the text as a string. */
struct json_t *json_number_text(const char *text);
/* A fraction (a gain, a spread, a share) as JSON shows it: rounded to six
 * decimals (docs/rule.md, "In JSON and tables"). */
double json_fraction(double v);
/* The whole-number member name of the JSON object in text (len bytes): true
 * with *out set, false (and *out 0) when text is no object or has no such
 * integer member. */
bool json_member_int(int64_t *out, const char *text, size_t len, const char *name);

#endif
