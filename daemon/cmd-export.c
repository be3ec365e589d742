/* perfd export: a stored comparison as the record the hub ingests. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "daemon.h"
#include "runners.h"
#include "wire.h"

const char cmd_export_usage[] =
	"usage: perfd export [options] ID\n"
	"\n"
	"Prints stored comparison ID as the record the hub ingests\n"
	"(POST /api/v1/ingest/comparisons, docs/hub.md): its settings, artifacts,\n"
	"every process record, its calibration's ids and its summary, as one line\n"
	"of canonical JSON with the sha256 of that form. The hub accepts only a\n"
	"done comparison; export prints any.\n"
	"\n"
	"options:\n"
	"  --output           also carry each process's captured stdout and stderr\n"
	"                     (base64; at most 1 MiB a stream, as stored)\n"
	"  --db FILE          database file (default ./perfd.db)\n"
	"\n"
	"Exit status: 0 printed; 2 a usage or database error.\n";

enum { OPT_DB = 256, OPT_OUTPUT };

static const struct option export_options[] = {
	{ "db", required_argument, NULL, OPT_DB },
	{ "output", no_argument, NULL, OPT_OUTPUT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Loads the captured output of each process that has any. */
static int load_output(struct db *db, struct db_comparison *c)
{
	size_t i;
	int r;

	for (i = 0; i < c->nprocesses; i++) {
		r = db_process_output_load(db, &c->processes[i], c->id, c->processes[i].seq);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	return 0;
}

int cmd_export(int argc, char **argv)
{
	struct db_opts dbo = DB_OPTS_INIT;
	struct strbuf out = STRBUF_INIT;
	struct db_comparison c;
	struct db *db = NULL;
	bool with_output = false;
	long long id;
	int opt, ret = EXIT_USAGE;

	memset(&c, 0, sizeof(c));
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", export_options, NULL)) != -1) {
		switch (opt) {
		case OPT_DB:
			dbo.path = optarg;
			break;
		case OPT_OUTPUT:
			with_output = true;
			break;
		case 'h':
			fputs(cmd_export_usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("export");
		}
	}
	if (argc - optind != 1) {
		log_warnx("export: expected one comparison id");
		return cli_usage_error("export");
	}
	if (cli_parse_id(&id, argv[optind]) < 0)
		return EXIT_USAGE;
	db = cli_db_open_readonly(&dbo);
	if (!db)
		goto out;
	if (db_comparison_load(db, &c, id) < 0 || (with_output && load_output(db, &c) < 0) ||
	    wire_record_build(&out, &c, with_output) < 0) {
		log_warnx("%s", err_last());
		goto out;
	}
	fwrite(out.buf, 1, out.len, stdout);
	ret = EXIT_OK;
out:
	strbuf_release(&out);
	db_comparison_release(&c);
	db_close(db);
	return ret;
}
