/*
 * perfd demo: the embedded default. The demo's history (kernels/demo/history:
 * a small Vulkan program whose commits show a speed-up, a changed output, a
 * slow-down and a failing contract runner) becomes a git repository, and the
 * agent measures every step of it on this machine's Vulkan device.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "builder.h"
#include "common.h"
#include "daemon.h"
#include "hub.h"

#define DEMO_STEPS_MAX 64

const char cmd_demo_usage[] =
	"usage: perfd demo [--once] [--dir DIR] [--host PROFILE] [--listen ADDR:PORT]\n"
	"\n"
	"Makes a git repository from the demo's history (a small Vulkan compute\n"
	"program: a base, a real speed-up with equal output, a change of output, a\n"
	"slow-down and a bug its contract runner catches; kernels/demo/README.md),\n"
	"with a branch demo/STEP at every step, and runs the agent on it: each step\n"
	"is built, its contract runner run, and its timing compared against the\n"
	"step before with the rule pairs-median/2.2.\n"
	"\n"
	"Without --once, the hub serves the dashboard and the API on the same\n"
	"database while the agent works, from one process, and both go on (the\n"
	"agent watching the demo repository) until SIGINT or SIGTERM.\n"
	"\n"
	"options:\n"
	"  --once             do it all, print the summary and exit\n"
	"  --listen ADDR:PORT where the hub listens (default " WEB_LISTEN_DEFAULT ")\n"
	"  --dir DIR          where the repository, the database (DIR/perfd.db) and\n"
	"                     the builds go (default ./perfd-demo)\n"
	"  --host PROFILE     a host profile for the comparisons (default: none, the\n"
	"                     first Vulkan device, lavapipe where there is no GPU)\n";

static const struct option demo_options[] = {
	{ "once", no_argument, NULL, '1' },
	{ "dir", required_argument, NULL, 'd' },
	{ "host", required_argument, NULL, 'H' },
	{ "listen", required_argument, NULL, 'l' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Lays the regular files of src over dst (a step holds only the files it
 * changes). */
static int overlay(const char *dst, const char *src)
{
	struct dirent *e;
	DIR *d = opendir(src);
	int r = 0;

	if (!d)
		return err_set(-errno, "the demo's step '%s': %s", src, strerror(errno));
	while (r == 0 && (e = readdir(d))) {
		char *from, *to;
		struct stat st;
		FILE *in = NULL, *out = NULL;
		char buf[65536];
		size_t n;

		if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, "..")))
			continue;
		from = xasprintf("%s/%s", src, e->d_name);
		to = xasprintf("%s/%s", dst, e->d_name);
		if (stat(from, &st) < 0 || !S_ISREG(st.st_mode)) {
			r = err_set(-EINVAL, "the demo's step file '%s' is not a regular file", from);
		} else if (!(in = fopen(from, "re")) || !(out = fopen(to, "we"))) {
			r = err_set(-errno, "copying '%s': %s", from, strerror(errno));
		} else {
			while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
				if (fwrite(buf, 1, n, out) != n)
					r = err_set(-EIO, "writing '%s'", to);
			if (fchmod(fileno(out), st.st_mode & 0777) < 0)
				r = err_set(-errno, "'%s': %s", to, strerror(errno));
		}
		if (in)
			fclose(in);
		if (out && fclose(out) != 0 && r == 0)
			r = err_set(-EIO, "writing '%s'", to);
		free(from);
		free(to);
	}
	closedir(d);
	return r;
}

/* Commits each step of the history once; a repository already made is
 * left as it is, so a second demo run measures nothing new. */
static int make_repository(const char *repo, const char *stage)
{
	char path[4096], line[1024], prev[BUILDER_OID_HEX] = "";
	FILE *f;
	int r = 0, n = 0;

	if (access(repo, F_OK) == 0)
		return 0;
	if (mkdir(stage, 0755) < 0 && errno != EEXIST)
		return err_set(-errno, "cannot create '%s': %s", stage, strerror(errno));
	snprintf(path, sizeof(path), "%s/steps", datadir_path(DATADIR_DEMO));
	f = fopen(path, "re");
	if (!f)
		return err_set(-errno, "the demo's history '%s': %s", path, strerror(errno));
	while (r == 0 && fgets(line, sizeof(line), f)) {
		char *dir, *branch, *subject, *save = NULL, *src, *tag, oid[BUILDER_OID_HEX];

		line[strcspn(line, "\n")] = '\0';
		if (!*line || *line == '#')
			continue;
		dir = strtok_r(line, "\t", &save);
		branch = strtok_r(NULL, "\t", &save);
		subject = strtok_r(NULL, "\t", &save);
		if (!dir || !branch || !subject || ++n > DEMO_STEPS_MAX) {
			r = err_set(-EINVAL, "%s:%d: expected DIR, BRANCH and subject", path, n);
			break;
		}
		/* A branch seen for the first time starts at the step before. */
		if (*prev && strcmp(branch, "main")) {
			char ref[600];

			snprintf(ref, sizeof(ref), "%s/refs/heads/%s", repo, branch);
			if (access(ref, F_OK) < 0)
				r = builder_history_branch(repo, branch, prev);
		}
		src = xasprintf("%s/%s", datadir_path(DATADIR_DEMO), dir);
		if (r == 0)
			r = overlay(stage, src);
		if (r == 0)
			r = builder_history_commit(oid, repo, branch, stage, subject);
		free(src);
		tag = xasprintf("demo/%s", dir);
		if (r == 0)
			r = builder_history_branch(repo, tag, oid);
		free(tag);
		if (r == 0)
			memcpy(prev, oid, sizeof(prev));
	}
	fclose(f);
	return r;
}

static int write_config(const char *path, const char *dir, const char *host)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return err_set(-errno, "cannot write '%s': %s", path, strerror(errno));
	fprintf(f, "# Written by perfd demo.\n"
		"[agent]\ndatabase = %s/perfd.db\nworkdir = %s/work\n%s%s%s"
		"[repo]\nurl = %s/repo.git\nbranches = demo/*\n"
		"[build]\ncommand = glslc shader.comp -o shader.spv && cc -O2 -std=c11 -o demo demo.c"
		" -lvulkan -lm && cc -O2 -std=c11 -o contract contract.c -lvulkan -lm\n"
		"artifacts = demo contract shader.spv\ntimeout_s = 300\ntoolchain = cc --version\n"
		"[runner contract]\ncommand = ./contract\ntimeout_s = 120\n"
		"[case kernel]\ncommand = ./demo\nmetric = kernel_ms\npairs = 3\ntimeout_s = 120\n",
		dir, dir, host ? "host = " : "", host ? host : "", host ? "\n" : "", dir);
	if (fclose(f) != 0)
		return err_set(-EIO, "cannot write '%s'", path);
	return 0;
}

int cmd_demo(int argc, char **argv)
{
	const char *dir = "perfd-demo", *host = NULL, *listen = WEB_LISTEN_DEFAULT;
	struct web_server *srv = NULL;
	struct db *web_db = NULL;
	char *abs = NULL, *repo = NULL, *conf = NULL, *stage = NULL;
	char *agent_argv[5];
	bool once = false;
	int opt, ret = EXIT_USAGE, n = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", demo_options, NULL)) != -1) {
		switch (opt) {
		case '1':
			once = true;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'H':
			host = optarg;
			break;
		case 'l':
			listen = optarg;
			break;
		case 'h':
			fputs(cmd_demo_usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("demo");
		}
	}
	if (optind != argc)
		return cli_extra_argument("demo", argv[optind]);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		log_warn("cannot create '%s'", dir);
		goto out;
	}
	abs = realpath(dir, NULL);
	if (!abs) {
		log_warn("'%s'", dir);
		goto out;
	}
	repo = xasprintf("%s/repo.git", abs);
	conf = xasprintf("%s/agent.conf", abs);
	stage = xasprintf("%s/stage", abs);
	if (make_repository(repo, stage) < 0 || write_config(conf, abs, host) < 0) {
		log_warnx("%s", err_last());
		goto out;
	}
	log_info("demo repository %s, configuration %s", repo, conf);
	if (!once) {
		char *db_path = xasprintf("%s/perfd.db", abs);
		int r;

		/* The hub's thread must not take the signals the agent waits for. */
		cli_signals_block((const int[]){ SIGINT, SIGTERM, SIGHUP, 0 });
		/* The hub reads through a handle of its own; SQLite's WAL lets it
		 * read while the agent writes through another. */
		r = db_open(&web_db, db_path, 10000);
		free(db_path);
		if (r == 0) {
			const struct web_server_opts wo = {
				.listen = listen,
				.static_dir = datadir_path(DATADIR_STATIC),
				.docs_dir = datadir_path(DATADIR_DOCS),
			};

			r = web_server_start(&srv, web_db, &wo);
		}
		if (r < 0) {
			log_warnx("%s", err_last());
			goto out;
		}
		cli_log_url("dashboard", "http", listen, web_server_port(srv));
	}
	agent_argv[n++] = "agent";
	agent_argv[n++] = "--config";
	agent_argv[n++] = conf;
	if (once)
		agent_argv[n++] = "--once";
	agent_argv[n] = NULL;
	ret = cmd_agent(n, agent_argv);
	if (ret == EXIT_OK && once)
		printf("\nreceipts: perfd show --db %s/perfd.db ID (text, --json, --format md); "
		       "perfd verify --db %s/perfd.db\n", abs, abs);
out:
	web_server_free(srv);
	db_close(web_db);
	free(abs);
	free(repo);
	free(conf);
	free(stage);
	return ret;
}
