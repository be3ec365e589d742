/* perfd token: the hub's tokens for hosts and maintainers (docs/hub.md). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common.h"
#include "daemon.h"
#include "hubd.h"

#define TOKEN_BYTES 32
#define TOKENS_LISTED 100000

const char cmd_token_usage[] =
	"usage: perfd token new HOST --config FILE\n"
	"       perfd token new --maintainer NAME --config FILE\n"
	"       perfd token revoke HOST --config FILE\n"
	"       perfd token revoke --maintainer NAME --config FILE\n"
	"       perfd token list --config FILE\n"
	"\n"
	"The tokens with which the hub knows who writes (docs/hub.md). 'new' prints\n"
	"a new token on stdout, once: 32 random bytes (getrandom) as 64 lower-case\n"
	"hex digits. The hub's database keeps only its sha256, so it cannot be shown\n"
	"again. A host's token lets that host's agent push that host's records and\n"
	"no other's; HOST must be one of the configuration's hosts. A maintainer's\n"
	"token is for the writes people make (none is accepted yet). A host or a\n"
	"maintainer may hold several tokens (a new one leaves the older ones live,\n"
	"for a change without a gap); 'revoke' ends every live token of one at once,\n"
	"a running hub included. 'list' shows every token, live and revoked, by the\n"
	"first 12 hex digits of its sha256.\n"
	"\n"
	"options:\n"
	"  --config FILE      the hub's configuration: its database and hosts\n"
	"  --maintainer NAME  a maintainer's token rather than a host's (a name of 1\n"
	"                     to 63 letters, digits, '.', '_' or '-')\n"
	"\n"
	"Exit status: 0 done; 2 a usage, configuration or database error, or no\n"
	"live token to revoke.\n";

enum { OPT_CONFIG = 256, OPT_MAINTAINER };

static const struct option token_options[] = {
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "maintainer", required_argument, NULL, OPT_MAINTAINER },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* A new token's text into out (64 hex digits and NUL). */
static int token_make(char out[2 * TOKEN_BYTES + 1])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char raw[TOKEN_BYTES];
	size_t got = 0;
	ssize_t n;
	int i;

	while (got < sizeof(raw)) {
		n = getrandom(raw + got, sizeof(raw) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err_set(-errno, "getrandom: %s", strerror(errno));
		got += (size_t)n;
	}
	for (i = 0; i < TOKEN_BYTES; i++) {
		out[2 * i] = digits[raw[i] >> 4];
		out[2 * i + 1] = digits[raw[i] & 15];
	}
	out[2 * TOKEN_BYTES] = '\0';
	explicit_bzero(raw, sizeof(raw));
	return 0;
}

static int token_new(struct db *db, enum db_token_kind kind, const char *name)
{
	char token[2 * TOKEN_BYTES + 1], hash[SHA256_HEX_SIZE];
	int64_t id;
	int r;

	r = token_make(token);
	if (r == 0)
		r = sha256_hex(hash, token, strlen(token));
	if (r == 0)
		r = db_token_add(db, &id, kind, name, hash);
	if (r < 0) {
		log_warnx("%s", err_last());
		explicit_bzero(token, sizeof(token));
		return EXIT_USAGE;
	}
	printf("%s\n", token);
	fflush(stdout);
	explicit_bzero(token, sizeof(token));
	log_info("token %lld of %s '%s' (sha256 %.12s): shown this once; the hub keeps only "
		 "its sha256", (long long)id, db_token_kind_name(kind), name, hash);
	return EXIT_OK;
}

static int token_revoke(struct db *db, enum db_token_kind kind, const char *name)
{
	int n = db_token_revoke(db, kind, name);

	if (n < 0) {
		log_warnx("%s", err_last());
		return EXIT_USAGE;
	}
	if (n == 0) {
		log_warnx("%s '%s' has no live token to revoke", db_token_kind_name(kind), name);
		return EXIT_USAGE;
	}
	log_info("revoked %d token%s of %s '%s'", n, n == 1 ? "" : "s", db_token_kind_name(kind),
		 name);
	return EXIT_OK;
}

static int token_list(struct db *db)
{
	struct db_token *t = NULL;
	size_t n = 0, i;

	if (db_token_list(db, &t, &n, false, TOKENS_LISTED) < 0) {
		log_warnx("%s", err_last());
		return EXIT_USAGE;
	}
	printf("%-6s %-10s %-24s %-24s %-24s %s\n", "id", "kind", "name", "created", "revoked",
	       "sha256");
	for (i = 0; i < n; i++)
		printf("%-6lld %-10s %-24s %-24s %-24s %.12s\n", (long long)t[i].id,
		       db_token_kind_name(t[i].kind), t[i].name, t[i].created_at,
		       *t[i].revoked_at ? t[i].revoked_at : "-", t[i].sha256);
	free(t);
	return EXIT_OK;
}

int cmd_token(int argc, char **argv)
{
	struct strbuf errors = STRBUF_INIT;
	struct hub_config *cfg = NULL;
	const char *config = NULL, *maintainer = NULL, *what, *name = NULL;
	enum db_token_kind kind = DB_TOKEN_HOST;
	struct db *db = NULL;
	int opt, nargs, ret = EXIT_USAGE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", token_options, NULL)) != -1) {
		switch (opt) {
		case OPT_CONFIG:
			config = optarg;
			break;
		case OPT_MAINTAINER:
			maintainer = optarg;
			break;
		case 'h':
			fputs(cmd_token_usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("token");
		}
	}
	nargs = argc - optind;
	what = nargs ? argv[optind] : "";
	if (!strcmp(what, "list")) {
		if (nargs != 1 || maintainer) {
			log_warnx("token list: expected no name");
			return cli_usage_error("token");
		}
	} else if (!strcmp(what, "new") || !strcmp(what, "revoke")) {
		if (nargs != (maintainer ? 1 : 2)) {
			log_warnx("token %s: expected a HOST or --maintainer NAME", what);
			return cli_usage_error("token");
		}
		name = maintainer ? maintainer : argv[optind + 1];
		kind = maintainer ? DB_TOKEN_MAINTAINER : DB_TOKEN_HOST;
		if (!hub_name_is_valid(name)) {
			log_warnx("token %s: '%s' is not a name (1 to 63 letters, digits, '.', '_' or "
				  "'-')", what, name);
			return EXIT_USAGE;
		}
	} else {
		log_warnx("token: expected new, revoke or list");
		return cli_usage_error("token");
	}
	if (!config) {
		log_warnx("token: expected --config FILE, the hub's configuration");
		return cli_usage_error("token");
	}
	if (hub_config_load(&cfg, config, &errors) < 0) {
		fputs(errors.buf, stderr);
		log_warnx("%s", err_last());
		goto out;
	}
	if (!strcmp(what, "new") && kind == DB_TOKEN_HOST && !hub_config_accepts(cfg, name)) {
		log_warnx("token new: host '%s' is not among the hosts of '%s' (hosts = ...): the "
			  "hub would refuse its records", name, config);
		goto out;
	}
	db = hub_db_open(cfg);
	if (!db)
		goto out;
	if (!strcmp(what, "new"))
		ret = token_new(db, kind, name);
	else if (!strcmp(what, "revoke"))
		ret = token_revoke(db, kind, name);
	else
		ret = token_list(db);
out:
	db_close(db);
	hub_config_free(cfg);
	strbuf_release(&errors);
	return ret;
}
