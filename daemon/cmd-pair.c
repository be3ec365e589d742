/* perfd pair: interleaved timing pairs of two programs, with receipts. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builder.h"
#include "common.h"
#include "daemon.h"
#include "cli.h"
#include "runners.h"

const char cmd_pair_usage[] =
	"usage: perfd pair [options] OLD NEW [-- ARGS...]\n"
	"\n"
	"Runs OLD and NEW as fresh processes in interleaved pairs (old,new, new,old,\n"
	"old,new, ...), stores every process in the database before and after it runs,\n"
	"and derives the figures with the rule pairs-median/2.2 (docs/rule.md): a first\n"
	"stage of pairs, then more stages (doubling, up to --max-pairs) while the\n"
	"verdict is unresolved. ARGS are\n"
	"given to both programs; each child also gets PERFD_ARM (old or new),\n"
	"PERFD_PAIR (1-based; 0 for a warm-up), PERFD_SEQ (1-based position in\n"
	"execution order) and PERFD_WARMUP (0 or 1). When OLD and NEW are one program\n"
	"(the same sha256) with the same arguments, environment and files, the\n"
	"comparison is an A/A: stored as one, it calibrates later comparisons of the\n"
	"same host and case, and its verdict is noise, never a change; when OLD\n"
	"and NEW are one file (a wrapper that runs each arm's program by PERFD_ARM),\n"
	"name each arm's program with --old-file and --new-file to make it a\n"
	"comparison. Every\n"
	"comparison starts with its calibration: the newest A/A comparisons of its\n"
	"host, case and fingerprint (docs/rule.md), which the agent runs on its own\n"
	"(docs/config.md, [calibration]). Each arm's manifest, the sha256 over its\n"
	"program and the files named for it (docs/protocol.md), is stored and shown\n"
	"with the comparison, and so is the CPU pressure each process ran beside\n"
	"(/proc/pressure/cpu, or the file PERFD_CPU_PRESSURE names; none when it is\n"
	"empty), which the rule's load gate weighs against the calibration's.\n"
	"\n"
	"options:\n"
	"  --pairs N          pairs of the first stage (default 3; 1 to 64)\n"
	"  --max-pairs N      the most pairs later stages may reach (default 24, or\n"
	"                     --pairs when that is more; up to 64); in place of the\n"
	"                     --host profile's max_pairs or time_budget_s\n"
	"  --better DIR       lower (default) or higher: which way the metric improves;\n"
	"                     a metric not named as a time (_ns, _us, _ms, _s): a rate\n"
	"                     (_mb_s, _it_s, _per_s, _mbps, ...) or any other, needs it\n"
	"  --warmup N         warm-up processes per arm before the pairs, kept as\n"
	"                     records but outside the figures (default 1)\n"
	"  --metric NAME      TIMING metric to compare (default: the only one the\n"
	"                     programs print, else wall_ms, the process wall time)\n"
	"  --timeout S        per-process bound in seconds: SIGTERM to the process\n"
	"                     group, SIGKILL 2 s later (default 600)\n"
	"  --case NAME        name of what is measured (default \"default\"); A/As of\n"
	"                     this host and case calibrate its later comparisons, so\n"
	"                     only a comparison with --case given uses a calibration\n"
	"  --min-effect F     smallest gain that counts, as a fraction or a\n"
	"                     percentage (default 0.01, i.e. 1%)\n"
	"  --noise F          arm spread above which the result is flagged noisy\n"
	"                     (default 0.05)\n"
	"  --cpus LIST        pin every process to these CPUs (\"2\", \"0-3,6\"; each\n"
	"                     below 1024, once; \"\" for none); default: the profile's\n"
	"  --host PROFILE     GPU work on the host PROFILE describes (a name in hosts/\n"
	"                     or a file): refuses to run when its Vulkan device is\n"
	"                     absent (exit 3) or the host is quarantined; takes the\n"
	"                     per-process bound, CPUs, noise, minimum effect and\n"
	"                     cool-down from the profile (options given here win);\n"
	"                     watches the kernel log for the profile's fault lines;\n"
	"                     stores the Vulkan fingerprint with the comparison\n"
	"  --fault-log FILE   the kernel log to watch instead of the profile's\n"
	"  --env K=V          add to both programs' environment (repeatable)\n"
	"  --old-arg ARG      append ARG to OLD's arguments, after ARGS (repeatable)\n"
	"  --new-arg ARG      the same for NEW\n"
	"  --old-env K=V      add to OLD's environment only (repeatable)\n"
	"  --new-env K=V      the same for NEW\n"
	"  --file PATH        a file both programs read (an input, a shader, a\n"
	"                     library): its sha256 goes into both arms' manifests\n"
	"                     (repeatable; at most 64 files per arm in all)\n"
	"  --old-file PATH    a file only OLD reads, into OLD's manifest (repeatable)\n"
	"  --new-file PATH    the same for NEW\n"
	"  --capture BYTES    stdout and stderr bytes kept per process (default 1048576)\n"
	"  --host-name NAME   host name stored with the comparison (default: the\n"
	"                     profile's name, else this machine's host name)\n"
	"  --json             print the receipt as JSON (same as --format json)\n"
	"  --format F         text (default), json, csv or md\n"
	"  --progress         print a line per process on stderr (its place, arm,\n"
	"                     pair, wall time, metric, and each pair's gain once it\n"
	"                     is whole) even when stderr is not a terminal, where it\n"
	"                     is printed anyway; --quiet prints none\n"
	"  --db FILE          database file (default ./perfd.db)\n"
	"  --lock-timeout S   how long to wait for another writer (default 10)\n"
	"\n"
	"Exit status: 0 the comparison ran and has a verdict (faster, slower,\n"
	"unchanged or unresolved); 1 it is invalid (the reasons are printed and\n"
	"stored); 2 a usage, program or database error (nothing was run; or,\n"
	"when the database failed mid-run, a full disk or a lock held too long,\n"
	"the comparison is stored as abandoned with why, or marked so by the next\n"
	"perfd pair to open the database); 3 the profile's device is absent or\n"
	"the host is quarantined (nothing was run); 130 interrupted (the\n"
	"processes that ran are kept).\n";

enum {
	OPT_PAIRS = 256, OPT_MAX_PAIRS, OPT_BETTER, OPT_WARMUP, OPT_METRIC, OPT_TIMEOUT,
	OPT_CASE, OPT_MIN_EFFECT,
	OPT_NOISE, OPT_CPUS, OPT_ENV, OPT_OLD_ARG, OPT_NEW_ARG, OPT_OLD_ENV, OPT_NEW_ENV,
	OPT_CAPTURE, OPT_HOST, OPT_JSON, OPT_FORMAT, OPT_PROGRESS, OPT_QUIET, OPT_DB,
	OPT_LOCK_TIMEOUT, OPT_HOST_NAME, OPT_FAULT_LOG, OPT_FILE, OPT_OLD_FILE, OPT_NEW_FILE,
};

/* Files named with --file plus --old-file (or --new-file): at most this
 * many in one arm's manifest. */
#define PAIR_FILES_MAX 64

static const struct option pair_options[] = {
	{ "pairs", required_argument, NULL, OPT_PAIRS },
	{ "max-pairs", required_argument, NULL, OPT_MAX_PAIRS },
	{ "better", required_argument, NULL, OPT_BETTER },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "case", required_argument, NULL, OPT_CASE },
	{ "min-effect", required_argument, NULL, OPT_MIN_EFFECT },
	{ "noise", required_argument, NULL, OPT_NOISE },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "env", required_argument, NULL, OPT_ENV },
	{ "old-arg", required_argument, NULL, OPT_OLD_ARG },
	{ "new-arg", required_argument, NULL, OPT_NEW_ARG },
	{ "old-env", required_argument, NULL, OPT_OLD_ENV },
	{ "new-env", required_argument, NULL, OPT_NEW_ENV },
	{ "file", required_argument, NULL, OPT_FILE },
	{ "old-file", required_argument, NULL, OPT_OLD_FILE },
	{ "new-file", required_argument, NULL, OPT_NEW_FILE },
	{ "capture", required_argument, NULL, OPT_CAPTURE },
	{ "host", required_argument, NULL, OPT_HOST },
	{ "host-name", required_argument, NULL, OPT_HOST_NAME },
	{ "fault-log", required_argument, NULL, OPT_FAULT_LOG },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "db", required_argument, NULL, OPT_DB },
	{ "lock-timeout", required_argument, NULL, OPT_LOCK_TIMEOUT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct strv {
	const char **v;
	size_t n;
};

static void strv_push(struct strv *s, const char *x)
{
	s->v = xrealloc(s->v, (s->n + 2) * sizeof(char *));
	s->v[s->n++] = x;
	s->v[s->n] = NULL;
}

static bool strv_equal(const struct strv *a, const struct strv *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]))
			return false;
	return true;
}

static int check_env(const char *opt, const char *kv)
{
	const char *eq = strchr(kv, '=');

	if (!eq || eq == kv) {
		log_warnx("%s: '%s' is not K=V", opt, kv);
		return -1;
	}
	if (!strncmp(kv, "PERFD_", 6)) {
		log_warnx("%s: '%s': PERFD_ variables are set by perfd itself", opt, kv);
		return -1;
	}
	return 0;
}

static int hash_artifact(struct db *db, int64_t *out_id, char sha[65], int64_t *out_size,
			 const char *path)
{
	struct db_artifact a;
	int r;

	sha[0] = '\0';
	*out_size = 0;
	memset(&a, 0, sizeof(a));
	r = sha256_file_hex(a.sha256, &a.size, path);
	if (r < 0)
		return r;
	a.path = (char *)path;
	memcpy(sha, a.sha256, 65);
	*out_size = a.size;
	return db_artifact_put(db, out_id, &a);
}

/* Adds the file at path to m under its base name; -EINVAL or the read's
 * error, naming opt and path, when it is not a regular file it can read. */
static int manifest_add_file(struct db_manifest *m, const char *opt, const char *path)
{
	const char *base = strrchr(path, '/');
	struct stat st;
	char sha[65];
	int64_t size;
	int r;

	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return err_set(-EINVAL, "%s '%s': not a regular file", opt, path);
	r = sha256_file_hex(sha, &size, path);
	if (r < 0)
		return err_set(r, "%s: %s", opt, err_last());
	db_manifest_add(m, base ? base + 1 : path, size, sha);
	return 0;
}

/* One arm's manifest, stored, with its hash in out: its program (hashed
 * already) and each file named for both arms or for this one, under their
 * base names. */
static int arm_manifest(struct db *db, char out[65], const char *arm, const char *program,
			int64_t size, const char *sha, const struct strv *shared,
			const struct strv *own, const char *own_opt)
{
	const char *base = strrchr(program, '/');
	struct db_manifest m;
	size_t i;
	int r = 0;

	out[0] = '\0';
	memset(&m, 0, sizeof(m));
	db_manifest_add(&m, base ? base + 1 : program, size, sha);
	for (i = 0; r == 0 && i < shared->n; i++)
		r = manifest_add_file(&m, "--file", shared->v[i]);
	for (i = 0; r == 0 && i < own->n; i++)
		r = manifest_add_file(&m, own_opt, own->v[i]);
	if (r == 0) {
		r = db_manifest_hash(m.hash, &m);
		if (r == -EINVAL)  /* two of one base name: the rest is checked above */
			r = err_set(r, "%s: %s; a program and the files of its arm need distinct "
				    "base names", arm, err_last());
	}
	if (r == 0)
		r = db_manifest_put(db, &m);
	if (r == 0)
		memcpy(out, m.hash, sizeof(m.hash));
	db_manifest_release(&m);
	return r;
}

/* True, after saying why, when the host is quarantined. */
static bool refuse_quarantined(struct db *db, const char *name, const char *db_path)
{
	struct db_host h;
	bool refuse = false;

	if (db_host_load(db, &h, name) < 0)
		return false;
	if (h.quarantined) {
		log_warnx("host '%s' is quarantined since %s (comparison %lld): %s", name, h.since,
			  (long long)h.comparison_id, h.fault ? h.fault : "");
		log_warnx("once the machine is checked, lift it with: perfd host clear --db %s %s",
			  db_path, name);
		refuse = true;
	}
	db_host_release(&h);
	return refuse;
}

/* What the command line says, before anything is opened. */
struct pair_cli {
	struct runner_pair_opts o;
	struct db_opts dbo;
	struct strv env, old_args, new_args, old_env, new_env;
	struct strv files, old_files, new_files;
	struct cli_progress pr;
	enum runner_format format;
	struct cpus cpus;
	const char *host_arg, *fault_log;
	bool given_timeout, given_noise, given_effect, given_pairs, given_max_pairs;
	int capture;
	int split;                   /* argv index of "--", or argc */
};

static void pair_cli_release(struct pair_cli *p)
{
	free(p->env.v);
	free(p->old_args.v);
	free(p->new_args.v);
	free(p->old_env.v);
	free(p->new_env.v);
	free(p->files.v);
	free(p->old_files.v);
	free(p->new_files.v);
}

static const char *file_option(int opt)
{
	return opt == OPT_FILE ? "--file" : opt == OPT_OLD_FILE ? "--old-file" : "--new-file";
}

/* A --file, --old-file or --new-file path into p; -1 after saying what was
 * wrong. */
static int add_file(struct pair_cli *p, int opt, const char *path)
{
	struct strv *own = opt == OPT_FILE ? &p->files : opt == OPT_OLD_FILE ? &p->old_files :
			   &p->new_files;
	size_t most = p->old_files.n > p->new_files.n ? p->old_files.n : p->new_files.n;

	if (!*path) {
		log_warnx("%s: a path is expected", file_option(opt));
		return -1;
	}
	if (p->files.n + (opt == OPT_FILE ? most : own->n) >= PAIR_FILES_MAX) {
		log_warnx("%s '%s': more than %d files for one arm", file_option(opt), path,
			  PAIR_FILES_MAX);
		return -1;
	}
	strv_push(own, path);
	return 0;
}

/* One option into p; -1 after saying what was wrong. */
/* The options that set how the comparison is measured and judged: 0, -1
 * after saying what was wrong, or 1 when opt is not one of them. */
static int measure_option(struct pair_cli *p, int opt, const char *arg)
{
	struct runner_pair_opts *o = &p->o;

	switch (opt) {
	case OPT_PAIRS:
		p->given_pairs = true;
		return cli_parse_int(&o->pairs, "--pairs", arg, 1, HOST_MAX_PAIRS);
	case OPT_MAX_PAIRS:
		p->given_max_pairs = true;
		return cli_parse_int(&o->max_pairs, "--max-pairs", arg, 1, HOST_MAX_PAIRS);
	case OPT_BETTER:
		if (runner_better_parse(&o->higher_better, arg) < 0) {
			log_warnx("--better: %s", err_last());
			return -1;
		}
		o->better_given = true;
		return 0;
	case OPT_WARMUP:
		return cli_parse_int(&o->warmup, "--warmup", arg, 0, 100);
	case OPT_METRIC:
		if (!runner_metric_name_is_valid(arg)) {
			log_warnx("--metric: '%s' is not a metric name (a letter or '_' first, then "
				  "letters, digits, '_', '.', ':' or '-', at most 64)", arg);
			return -1;
		}
		o->metric = arg;
		return 0;
	case OPT_TIMEOUT:
		p->given_timeout = true;
		return cli_parse_double(&o->timeout_s, "--timeout", arg, 0.001, 86400);
	case OPT_CASE:
	case OPT_HOST_NAME:
		if (!*arg || strlen(arg) > 63) {
			log_warnx("%s: a name of 1 to 63 characters is expected",
				  opt == OPT_CASE ? "--case" : "--host-name");
			return -1;
		}
		*(opt == OPT_CASE ? &o->case_name : &o->host) = arg;
		return 0;
	case OPT_MIN_EFFECT:
		p->given_effect = true;
		return cli_parse_fraction(&o->min_effect, "--min-effect", arg);
	case OPT_NOISE:
		p->given_noise = true;
		return cli_parse_fraction(&o->noise, "--noise", arg);
	case OPT_CPUS:
		if (cpus_parse(&p->cpus, arg) < 0) {
			log_warnx("--cpus: %s", err_last());
			return -1;
		}
		o->cpus = &p->cpus;
		return 0;
	}
	return 1;
}

static int pair_option(struct pair_cli *p, int opt, const char *arg)
{
	int r = measure_option(p, opt, arg);

	if (r != 1)
		return r;
	switch (opt) {
	case OPT_ENV:
	case OPT_OLD_ENV:
	case OPT_NEW_ENV:
		if (check_env(opt == OPT_ENV ? "--env" : opt == OPT_OLD_ENV ? "--old-env" :
			      "--new-env", arg) < 0)
			return -1;
		strv_push(opt == OPT_ENV ? &p->env : opt == OPT_OLD_ENV ? &p->old_env :
			  &p->new_env, arg);
		return 0;
	case OPT_OLD_ARG:
		strv_push(&p->old_args, arg);
		return 0;
	case OPT_NEW_ARG:
		strv_push(&p->new_args, arg);
		return 0;
	case OPT_FILE:
	case OPT_OLD_FILE:
	case OPT_NEW_FILE:
		return add_file(p, opt, arg);
	case OPT_CAPTURE:
		return cli_parse_int(&p->capture, "--capture", arg, 0, 1 << 30);
	case OPT_HOST:
		p->host_arg = arg;
		return 0;
	case OPT_FAULT_LOG:
		p->fault_log = arg;
		return 0;
	case OPT_JSON:
		p->format = RUNNER_FORMAT_JSON;
		return 0;
	case OPT_FORMAT:
		if (runner_format_parse(&p->format, arg) < 0) {
			log_warnx("--format: %s", err_last());
			return -1;
		}
		return 0;
	case OPT_PROGRESS:
	case OPT_QUIET:
		p->pr.on = opt == OPT_PROGRESS;
		return 0;
	case OPT_DB:
		p->dbo.path = arg;
		return 0;
	case OPT_LOCK_TIMEOUT:
		return cli_parse_double(&p->dbo.lock_timeout_s, "--lock-timeout", arg, 0, 3600);
	}
	return -1;
}

/* Parses argv into p, which holds the defaults. Returns -1 to go on with
 * OLD and NEW at argv[optind] and argv[optind + 1], else the exit status
 * (0 after --help). */
static int pair_parse(struct pair_cli *p, int argc, char **argv)
{
	int i, opt;

	/* Everything after the first "--" is ARGS, never an option. */
	p->split = argc;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			p->split = i;
			break;
		}
	}
	optind = 1;
	/* getopt_long permutes: options may come before or after OLD and NEW. */
	while ((opt = getopt_long(p->split, argv, "h", pair_options, NULL)) != -1) {
		if (opt == 'h') {
			fputs(cmd_pair_usage, stdout);
			return EXIT_OK;
		}
		if (opt == '?')
			return cli_usage_error("pair");
		if (pair_option(p, opt, optarg) < 0)
			return EXIT_USAGE;
	}
	if (p->split - optind != 2) {
		log_warnx("pair: expected OLD and NEW, got %d program%s", p->split - optind,
			  p->split - optind == 1 ? "" : "s");
		return cli_usage_error("pair");
	}
	return -1;
}

/* The host profile's settings where the command line gave none. */
static void apply_profile(struct pair_cli *p, const struct host_profile *profile)
{
	struct runner_pair_opts *o = &p->o;

	if (!p->given_timeout)
		o->timeout_s = profile->process_timeout_s;
	if (!p->given_noise)
		o->noise = profile->noise;
	if (!p->given_effect)
		o->min_effect = profile->min_effect;
	if (!o->cpus)
		o->cpus = &profile->cpus;
	if (!p->given_pairs)
		o->pairs = profile->pairs;
	if (!p->given_max_pairs) {
		o->max_pairs = profile->max_pairs;
		o->time_budget_s = profile->time_budget_s;   /* --max-pairs overrides it */
	}
	o->cooldown_ms = profile->cooldown_ms;
	if (!o->host)
		o->host = profile->name;
}

/* The stages' bounds and the metric's direction, once the profile had its
 * say; -1 after saying what is wrong. */
static int settle_stages(struct pair_cli *p)
{
	struct runner_pair_opts *o = &p->o;

	if (o->max_pairs < o->pairs) {
		if (p->given_max_pairs) {
			log_warnx("--max-pairs %d is under the first stage's %d pairs",
				  o->max_pairs, o->pairs);
			return -1;
		}
		o->max_pairs = o->pairs;
	}
	if (o->metric && !o->better_given && runner_metric_needs_better(o->metric)) {
		log_warnx("metric '%s' reads as a rate: say which way is better with "
			  "--better higher (or --better lower)", o->metric);
		return -1;
	}
	return 0;
}

/* The arms, ARGS and the rest of the run's options into p->o. */
static void fill_run(struct pair_cli *p, int argc, char **argv, const char *old_path,
		     const char *new_path)
{
	struct runner_pair_opts *o = &p->o;

	o->old.path = old_path;
	o->old.args = p->old_args.v;
	o->old.nargs = p->old_args.n;
	o->old.env = p->old_env.v;
	o->old.nenv = p->old_env.n;
	o->new.path = new_path;
	o->new.args = p->new_args.v;
	o->new.nargs = p->new_args.n;
	o->new.env = p->new_env.v;
	o->new.nenv = p->new_env.n;
	o->args = (const char *const *)argv + p->split + (p->split < argc);
	o->nargs = (size_t)(argc - p->split - (p->split < argc));
	o->env = p->env.v;
	o->nenv = p->env.n;
	o->capture_max = (size_t)p->capture;
	o->progress = cli_progress_line;
	o->progress_ctx = &p->pr;
}

/* Prints the stored comparison's receipt and says what the run left: an
 * interruption, a quarantine. Returns the exit status. */
static int report(struct db *db, const struct pair_cli *p, int64_t cid, int run_r)
{
	struct db_comparison c;
	struct strbuf out = STRBUF_INIT;
	struct db_host host;
	int ret;

	if (db_comparison_load(db, &c, cid) < 0) {
		log_warnx("%s", err_last());
		db_comparison_release(&c);
		return EXIT_USAGE;
	}
	runner_receipt_render(&out, &c, p->format);
	fwrite(out.buf, 1, out.len, stdout);
	strbuf_release(&out);
	if (run_r == -ECANCELED) {
		log_warnx("interrupted: comparison %lld is stored as abandoned", (long long)cid);
		ret = EXIT_INTERRUPTED;
	} else {
		ret = strcmp(c.summary.verdict, "invalid") ? EXIT_OK : EXIT_RESULT;
	}
	db_comparison_release(&c);
	if (run_r == 0 && db_host_load(db, &host, p->o.host) == 0) {
		if (host.quarantined && host.comparison_id == cid) {
			log_warnx("%s", host.fault);
			log_warnx("host '%s' is quarantined: no GPU work runs on it until "
				  "'perfd host clear %s' (after the machine has been checked)",
				  p->o.host, p->o.host);
		}
		db_host_release(&host);
	}
	return ret;
}

/* True when OLD and NEW, resolved, are one file: one path (realpath has
 * followed the symbolic links) or one inode (a hard link). */
static bool one_file(const char *old_path, const char *new_path)
{
	struct stat a, b;

	if (!strcmp(old_path, new_path))
		return true;
	return stat(old_path, &a) == 0 && stat(new_path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* Hashes both arms' programs into artifacts and their manifests (the
 * program and the files named for the arm), and says when the two arms are
 * one program run alike: an A/A. 0, or -1 after saying why. */
static int hash_arms(struct db *db, struct pair_cli *p, const char *old_path,
		     const char *new_path, char old_sha[65], char new_sha[65],
		     char old_manifest[65], char new_manifest[65])
{
	int64_t old_size, new_size;
	int r;

	r = hash_artifact(db, &p->o.old_artifact, old_sha, &old_size, old_path);
	if (r == 0)
		r = hash_artifact(db, &p->o.new_artifact, new_sha, &new_size, new_path);
	if (r < 0) {
		log_warnx("%s", err_last());
		return -1;
	}
	p->o.old_sha256 = old_sha;
	p->o.new_sha256 = new_sha;
	r = arm_manifest(db, old_manifest, "OLD", old_path, old_size, old_sha, &p->files,
			 &p->old_files, "--old-file");
	if (r == 0)
		r = arm_manifest(db, new_manifest, "NEW", new_path, new_size, new_sha, &p->files,
				 &p->new_files, "--new-file");
	if (r < 0) {
		log_warnx("%s", err_last());
		return -1;
	}
	p->o.old_manifest = old_manifest;
	p->o.new_manifest = new_manifest;
	p->o.aa = !strcmp(old_sha, new_sha) && strv_equal(&p->old_args, &p->new_args) &&
		  strv_equal(&p->old_env, &p->new_env) && strv_equal(&p->old_files, &p->new_files);
	if (p->o.aa)
		log_warnx("OLD and NEW are the same program (sha256 %.12s) with the same arguments: "
			  "this is an A/A comparison, stored as one; any verdict it gives is "
			  "noise, not a change", old_sha);
	/* The wrapper trap: one script that runs the arm's binary by
	 * PERFD_ARM hashes alike in both arms. A deliberate A/A goes on. */
	if (p->o.aa && one_file(old_path, new_path))
		log_warnx("OLD and NEW are one file, '%s': if it is a wrapper that runs another "
			  "program per arm (by PERFD_ARM), name each arm's program with --old-file "
			  "and --new-file, so that the arms' manifests differ and it is stored as a "
			  "comparison (docs/protocol.md, \"Manifests\"); an A/A meant as one needs "
			  "nothing more", old_path);
	return 0;
}

/* Opens the database, marks what a perfd that is gone left running
 * (killed by its own measured program, say; a perfd that runs keeps its
 * rows), and refuses a quarantined host. Returns -1 to go on with *out,
 * or the verb's exit status after saying why. */
static int pair_db_open(struct db **out, const struct pair_cli *p,
			const struct host_profile *profile)
{
	struct db *db;
	int r;

	*out = db = cli_db_open(&p->dbo);
	if (!db)
		return EXIT_USAGE;
	r = runner_orphans_abandon(db, false);
	if (r < 0) {
		log_warnx("%s", err_last());
		return EXIT_USAGE;
	}
	if (r > 0)
		log_info("%d comparison%s left running by a perfd that is gone: stored as "
			 "abandoned", r, r == 1 ? "" : "s");
	if (profile && refuse_quarantined(db, p->o.host, p->dbo.path))
		return EXIT_NODEVICE;
	return -1;
}

/* The host's probe: the profile's device with --host (its settings taken),
 * else the host alone. Returns EXIT_OK, or the verb's exit status after
 * saying why. */
static int pair_probe(struct pair_cli *p, struct host_profile **profile,
		      struct kernel_probe **probe)
{
	int ret;

	if (p->host_arg) {
		ret = host_check_device(profile, probe, p->host_arg);
		if (ret == EXIT_OK)
			apply_profile(p, *profile);
		return ret;
	}
	*probe = kernel_probe_host_only();
	return EXIT_OK;
}

int cmd_pair(int argc, char **argv)
{
	struct pair_cli p = {
		.o = { .pairs = HOST_DEFAULT_PAIRS, .max_pairs = HOST_DEFAULT_MAX_PAIRS,
		       .warmup = 1, .timeout_s = 600, .min_effect = HOST_DEFAULT_MIN_EFFECT,
		       .noise = HOST_DEFAULT_NOISE,
		       .cancel_fd = -1 },
		.dbo = DB_OPTS_INIT, .pr = { .on = isatty(2) }, .format = RUNNER_FORMAT_TEXT,
		.capture = CHILD_CAPTURE_DEFAULT,
	};
	char hostname[256] = "", old_sha[65], new_sha[65], old_manifest[65], new_manifest[65];
	char *old_path = NULL, *new_path = NULL;
	struct db *db = NULL;
	struct host_profile *profile = NULL;
	struct kernel_probe *probe = NULL;
	struct runner_fault_watch watch = { .fd = -1 };
	struct runner_calibration cal = { 0 };
	char *fingerprint = NULL;
	int64_t cid = 0;
	int r, ret;

	ret = pair_parse(&p, argc, argv);
	if (ret >= 0)
		goto out;
	ret = EXIT_USAGE;
	if (builder_program_resolve(&old_path, argv[optind]) < 0) {
		log_warnx("OLD: %s", err_last());
		goto out;
	}
	if (builder_program_resolve(&new_path, argv[optind + 1]) < 0) {
		log_warnx("NEW: %s", err_last());
		goto out;
	}
	ret = pair_probe(&p, &profile, &probe);
	if (ret != EXIT_OK)
		goto out;
	ret = EXIT_USAGE;
	if (settle_stages(&p) < 0) {
		ret = cli_usage_error("pair");
		goto out;
	}
	fingerprint = kernel_probe_json(probe, false);
	p.o.fingerprint = fingerprint;
	if (!p.o.host) {
		if (gethostname(hostname, sizeof(hostname) - 1) < 0 || !*hostname)
			snprintf(hostname, sizeof(hostname), "local");
		hostname[63] = '\0';
		p.o.host = hostname;
	}
	ret = pair_db_open(&db, &p, profile);
	if (ret >= 0)
		goto out;
	ret = EXIT_USAGE;
	if (hash_arms(db, &p, old_path, new_path, old_sha, new_sha, old_manifest,
		      new_manifest) < 0)
		goto out;
	fill_run(&p, argc, argv, old_path, new_path);
	/* SIGINT, SIGTERM or SIGHUP stop the process in hand: the comparison
	 * is stored as abandoned rather than lost. */
	p.o.cancel_fd = cli_signal_fd((const int[]){ SIGINT, SIGTERM, SIGHUP, 0 });
	if (profile) {
		runner_fault_watch_open(&watch, p.fault_log ? p.fault_log : profile->fault_log,
					profile);
		if (watch.off_reason)
			log_warnx("fault watch off: %s; every process is recorded so", watch.off_reason);
		p.o.watch = &watch;
	}
	/* Without --case every program shares "default": another program's
	 * A/As would calibrate this one, so none does. */
	r = p.o.case_name ? runner_calibration_choose(&cal, db, &p.o) : 0;
	if (r == 0)
		r = runner_pair_run(db, &cid, &p.o);
	if (r < 0 && r != -ECANCELED) {
		/* The detail says whether the comparison is stored as abandoned. */
		log_warnx("%s", err_last());
		goto out;
	}
	ret = report(db, &p, cid, r);
out:
	if (p.o.cancel_fd >= 0)
		close(p.o.cancel_fd);
	runner_calibration_release(&cal);
	runner_fault_watch_close(&watch);
	host_profile_free(profile);
	kernel_probe_free(probe);
	free(fingerprint);
	db_close(db);
	free(old_path);
	free(new_path);
	pair_cli_release(&p);
	return ret;
}
