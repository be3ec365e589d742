/* perfd show, verify and list: reading what is stored. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "daemon.h"
#include "runners.h"

const char cmd_show_usage[] =
	"usage: perfd show [options] ID\n"
	"\n"
	"Prints stored comparison ID, rendered from its stored rows.\n"
	"\n"
	"options:\n"
	"  --format F         text (default), json (the receipt object), csv (one row\n"
	"                     per process in execution order) or md (Markdown)\n"
	"  --json             the same as --format json\n"
	"  --output SEQ       print the captured stdout of process SEQ instead\n"
	"  --stderr SEQ       print the captured stderr of process SEQ instead\n"
	"  --db FILE          database file (default ./perfd.db)\n";

const char cmd_verify_usage[] =
	"usage: perfd verify [options] [ID...]\n"
	"\n"
	"Recomputes every stored figure of each comparison (every one when no ID is\n"
	"given) from its raw process rows with the rule it names, and compares.\n"
	"Prints one line per comparison, one per figure that differs, and a last\n"
	"line counting the comparisons verified (also when there are none).\n"
	"\n"
	"options:\n"
	"  --db FILE          database file (default ./perfd.db)\n"
	"\n"
	"Exit status: 0 every figure matches; 1 a figure differs or a comparison\n"
	"has no summary; 2 a usage or database error.\n";

const char cmd_list_usage[] =
	"usage: perfd list [options]\n"
	"\n"
	"Lists stored comparisons, newest first, each with its kind (A/A: one build\n"
	"or program against itself, whose verdict is a calibration sample, not a\n"
	"change: its faster or slower reads \"false faster\", \"false slower\") and\n"
	"the first 12 hex digits of both programs' sha256 and of both\n"
	"arms' manifests (\"-\" for a comparison stored before manifests).\n"
	"\n"
	"options:\n"
	"  --limit N          at most N rows (default 50, at most 10000)\n"
	"  --db FILE          database file (default ./perfd.db)\n";

enum { OPT_FORMAT = 256, OPT_JSON, OPT_OUTPUT, OPT_STDERR, OPT_DB, OPT_LIMIT };

static const struct option read_options[] = {
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "stderr", required_argument, NULL, OPT_STDERR },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "db", required_argument, NULL, OPT_DB },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_show(int argc, char **argv)
{
	struct db_opts dbo = DB_OPTS_INIT;
	enum runner_format format = RUNNER_FORMAT_TEXT;
	struct db_comparison c;
	struct db_process p;
	struct strbuf out = STRBUF_INIT;
	struct db *db = NULL;
	long long id;
	int opt, seq = 0, ret = EXIT_USAGE;
	bool want_stderr = false;

	memset(&c, 0, sizeof(c));
	memset(&p, 0, sizeof(p));
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", read_options, NULL)) != -1) {
		switch (opt) {
		case OPT_FORMAT:
			if (runner_format_parse(&format, optarg) < 0) {
				log_warnx("--format: %s", err_last());
				goto out;
			}
			break;
		case OPT_JSON:
			format = RUNNER_FORMAT_JSON;
			break;
		case OPT_OUTPUT:
		case OPT_STDERR:
			if (cli_parse_int(&seq, opt == OPT_OUTPUT ? "--output" : "--stderr",
					  optarg, 1, 1 << 20) < 0)
				goto out;
			want_stderr = opt == OPT_STDERR;
			break;
		case OPT_DB:
			dbo.path = optarg;
			break;
		case 'h':
			fputs(cmd_show_usage, stdout);
			ret = EXIT_OK;
			goto out;
		default:
			ret = cli_usage_error("show");
			goto out;
		}
	}
	if (argc - optind != 1) {
		log_warnx("show: expected one comparison id");
		ret = cli_usage_error("show");
		goto out;
	}
	if (cli_parse_id(&id, argv[optind]) < 0)
		goto out;
	db = cli_db_open_readonly(&dbo);
	if (!db)
		goto out;
	if (seq) {
		if (db_process_output_load(db, &p, id, seq) < 0) {
			log_warnx("%s", err_last());
			goto out;
		}
		if (want_stderr)
			fwrite(p.err, 1, p.err_len, stdout);
		else
			fwrite(p.out, 1, p.out_len, stdout);
		ret = EXIT_OK;
		goto out;
	}
	if (db_comparison_load(db, &c, id) < 0) {
		log_warnx("%s", err_last());
		goto out;
	}
	runner_receipt_render(&out, &c, format);
	fwrite(out.buf, 1, out.len, stdout);
	ret = EXIT_OK;
out:
	strbuf_release(&out);
	db_process_release(&p);
	db_comparison_release(&c);
	db_close(db);
	return ret;
}

/* Verifies one comparison; returns 0 when it matches, 1 when not, -1 on a
 * database error. */
static int verify_one(struct db *db, long long id)
{
	struct db_comparison c;
	struct strbuf report = STRBUF_INIT;
	int checked = 0, n, ret;

	if (db_comparison_load(db, &c, id) < 0) {
		log_warnx("%s", err_last());
		return -1;
	}
	n = runner_verify(&report, &c, &checked);
	if (n < 0) {
		printf("comparison %lld: cannot verify: %s\n", id, err_last());
		ret = 1;
	} else if (n == 0) {
		printf("comparison %lld: %d figures match the rule %s\n", id, checked, c.rule);
		ret = 0;
	} else {
		printf("comparison %lld: %d of %d figures differ from the rule %s\n%s", id, n,
		       checked, c.rule, report.buf);
		ret = 1;
	}
	strbuf_release(&report);
	db_comparison_release(&c);
	return ret;
}

int cmd_verify(int argc, char **argv)
{
	struct db_opts dbo = DB_OPTS_INIT;
	struct db *db = NULL;
	int64_t *ids = NULL;
	size_t nids = 0, i;
	int opt, r, ret = EXIT_USAGE, bad = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", read_options, NULL)) != -1) {
		switch (opt) {
		case OPT_DB:
			dbo.path = optarg;
			break;
		case 'h':
			fputs(cmd_verify_usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("verify");
		}
	}
	for (i = (size_t)optind; i < (size_t)argc; i++) {
		long long id;

		if (cli_parse_id(&id, argv[i]) < 0)
			goto out;
		ids = xrealloc(ids, (nids + 1) * sizeof(*ids));
		ids[nids++] = id;
	}
	db = cli_db_open_readonly(&dbo);
	if (!db)
		goto out;
	if (!nids && db_comparison_ids(db, &ids, &nids) < 0) {
		log_warnx("%s", err_last());
		goto out;
	}
	for (i = 0; i < nids; i++) {
		r = verify_one(db, ids[i]);
		if (r < 0)
			goto out;
		bad += r;
	}
	/* Always a count, so that a script (or a reader of an empty
	 * database) sees that verify ran to its end. */
	printf("%zu comparison%s verified, %d with differences\n", nids, nids == 1 ? "" : "s",
	       bad);
	ret = bad ? EXIT_RESULT : EXIT_OK;
out:
	free(ids);
	db_close(db);
	return ret;
}

int cmd_list(int argc, char **argv)
{
	struct db_opts dbo = DB_OPTS_INIT;
	struct db_comparison_row *rows = NULL;
	struct db *db = NULL;
	int opt, limit = 50, n, i, ret = EXIT_USAGE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", read_options, NULL)) != -1) {
		switch (opt) {
		case OPT_LIMIT:
			if (cli_parse_int(&limit, "--limit", optarg, 1, 10000) < 0)
				return EXIT_USAGE;
			break;
		case OPT_DB:
			dbo.path = optarg;
			break;
		case 'h':
			fputs(cmd_list_usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("list");
		}
	}
	if (optind != argc)
		return cli_extra_argument("list", argv[optind]);
	db = cli_db_open_readonly(&dbo);
	if (!db)
		goto out;
	rows = xcalloc((size_t)limit, sizeof(*rows));
	n = db_comparison_list(db, rows, (size_t)limit, 0);
	if (n < 0) {
		log_warnx("%s", err_last());
		goto out;
	}
	printf("%-6s %-24s %-10s %-7s %-16s %-12s %-13s %9s  %-12s %-12s %-12s %s\n", "id",
	       "created", "state", "kind", "host", "case", "verdict", "gain", "old-sha256",
	       "new-sha256", "old-manifest", "new-manifest");
	for (i = 0; i < n; i++) {
		char gain[32], verdict[32];

		runner_format_gain(gain, sizeof(gain), rows[i].has_gain ? rows[i].gain_median : NAN);
		/* An A/A's faster or slower is a false verdict, never a change. */
		snprintf(verdict, sizeof(verdict), "%s%s", rows[i].aa &&
			 (!strcmp(rows[i].verdict, "faster") || !strcmp(rows[i].verdict, "slower")) ?
			 "false " : "", *rows[i].verdict ? rows[i].verdict : "-");
		printf("%-6lld %-24s %-10s %-7s %-16s %-12s %-13s %9s  %-12.12s %-12.12s %-12.12s "
		       "%.12s\n", (long long)rows[i].id, rows[i].created_at,
		       db_state_name(rows[i].state), rows[i].aa ? "A/A" : "compare", rows[i].host,
		       rows[i].case_name, verdict, gain,
		       rows[i].old_sha256, rows[i].new_sha256,
		       *rows[i].old_manifest ? rows[i].old_manifest : "-",
		       *rows[i].new_manifest ? rows[i].new_manifest : "-");
	}
	ret = EXIT_OK;
out:
	free(rows);
	db_close(db);
	return ret;
}
