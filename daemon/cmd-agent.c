/* perfd agent: the loop that watches a repository and measures each head. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "agent.h"
#include "cli.h"
#include "common.h"
#include "daemon.h"
#include "forge.h"

const char cmd_agent_usage[] =
	"usage: perfd agent --config FILE [--check [--trial]] [--once]\n"
	"\n"
	"Watches the branch heads (and pull-request heads) of the repository the\n"
	"configuration names. Each head at a new commit becomes a job: the commit\n"
	"is built with the configured recipe (a tree already built with the same\n"
	"recipe on this host is not built again), its contract runners run, and\n"
	"each timing case is compared against the base's build with perfd pair's\n"
	"rule. Every step is stored before the next begins: an agent killed at any\n"
	"point and started again redoes what was running and nothing that was done.\n"
	"The configuration's keys are in docs/config.md. When stderr is a terminal,\n"
	"each measured process is a line there as it ends, as with perfd pair.\n"
	"\n"
	"The agent calibrates each case on its own ([calibration]): when a case has\n"
	"no A/A comparisons (one build against itself) on this host as it is now\n"
	"(a new case, a changed driver, kernel or device), it runs some of the base\n"
	"build before the case's comparison (or, with when = after, judges that\n"
	"comparison without them and runs them after its job); and when idle, one\n"
	"at a time for the case whose calibration is oldest, within an hourly budget.\n"
	"\n"
	"Every build, contract runner and timed process runs in a bubblewrap\n"
	"sandbox ([sandbox], docs/security.md) that shows it only the system's\n"
	"programs and libraries read-only, the parts of /etc toolchains read, its\n"
	"own directories and what [sandbox] ro and rw name; nothing else of the\n"
	"machine, and no network unless the recipe asks (--check prints the\n"
	"view). Without one (bubblewrap missing, or the kernel refusing its user\n"
	"namespaces) no pull head is built; any other failure to start it stops\n"
	"the agent.\n"
	"\n"
	"With [hub], every finished build, job update and done comparison is sent\n"
	"to the hub, oldest first, with a heartbeat each turn, and counts as sent\n"
	"once the hub answered: its database is the spool, and a hub out of reach\n"
	"leaves a backlog sent at a later turn. With [hub] and no [github], the\n"
	"pull heads built are those the hub hands out, against its base\n"
	"(docs/hub.md).\n"
	"\n"
	"With [history], a branch's head is also compared against an older\n"
	"reference every span_commits commits or span_hours hours; each change a\n"
	"head or span job finds on such a branch is compared again, raised as an\n"
	"alert when that agrees, and bisected by pairs when its range holds more\n"
	"than one commit (docs/history.md; perfd alerts lists them).\n"
	"\n"
	"options:\n"
	"  --config FILE      the agent's configuration (INI)\n"
	"  --check            check the configuration (and read its host profile and\n"
	"                     [github]'s and [hub]'s token files, sending nothing):\n"
	"                     print per case what this host can see with its\n"
	"                     calibration (\"case X: changes under 4.1% are not\n"
	"                     visible on this host within 24 pairs\"), then\n"
	"                     \"configuration OK\" or every error as\n"
	"                     file:line: message, and exit; it prints the sandbox's\n"
	"                     view and warns of each absolute path the suite names\n"
	"                     that a step will not see, with the key that shows it\n"
	"  --trial            with --check: then build the default branch's head once\n"
	"                     as a job would (the same sandbox, limits, environment,\n"
	"                     timeout and work directory), its output shown as it\n"
	"                     comes, in a scratch directory removed afterwards,\n"
	"                     storing nothing; say the recipe's exit, the end of its\n"
	"                     log and, when it failed, the paths it looked for that\n"
	"                     the sandbox does not show\n"
	"  --once             do everything pending, print a summary and exit (no\n"
	"                     idle A/A); without it the agent polls every poll_s\n"
	"                     seconds, and SIGHUP makes it poll at once\n"
	"\n"
	"Exit status: 0 done (with --once) or stopped by SIGINT or SIGTERM; 2 a\n"
	"configuration, repository or database error, or a sandbox that cannot\n"
	"start (other than for a missing bubblewrap or refused user namespaces,\n"
	"which [sandbox] mode = on also refuses); 3 the host\n"
	"profile's device is absent, or (with --once, after its push and\n"
	"heartbeat) the host is quarantined: without --once a quarantined host's\n"
	"agent stays up, sends its heartbeats and runs nothing on its device\n"
	"until it is cleared (docs/hosts.md). With --trial: 0\n"
	"the trial build passed, 1 it failed (its recipe, its timeout or its\n"
	"artifacts), 2 it could not be tried (the configuration, the repository,\n"
	"an agent running on the work directory), 130 stopped.\n";

static const struct option agent_options[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "check", no_argument, NULL, 'k' },
	{ "trial", no_argument, NULL, 't' },
	{ "once", no_argument, NULL, '1' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Waits up to ms for a stop (returns true) or a SIGHUP (returns false early). */
static bool wait_poll(int stop_fd, int hup_fd, int ms)
{
	struct pollfd p[2] = { { .fd = stop_fd, .events = POLLIN },
			       { .fd = hup_fd, .events = POLLIN } };
	struct signalfd_siginfo si;

	if (poll(p, 2, ms) <= 0)
		return false;
	if (p[1].revents) {
		while (read(hup_fd, &si, sizeof(si)) > 0)
			;
		log_info("SIGHUP: polling now");
	}
	return p[0].revents != 0;
}

/* perfd agent --check: the configuration, its host profile and its token
 * files read as the agent would read them (the device is not looked for
 * and nothing is sent: a check may run elsewhere), then what it sets. */
static int agent_check(const struct agent_config *cfg)
{
	struct host_profile *hp = NULL;
	int r;

	if (cfg->host && host_check_load(&hp, cfg->host) != EXIT_OK)
		return EXIT_USAGE;
	r = agent_sandbox_view(cfg, hp);
	if (r < 0) {
		host_profile_free(hp);
		log_warnx("sandbox: %s", err_last());
		return EXIT_USAGE;
	}
	r = agent_check_visibility(stdout, cfg, hp);
	host_profile_free(hp);
	if (r < 0) {
		log_warnx("%s", err_last());
		return EXIT_USAGE;
	}
	/* The token file is read as the agent would read it; nothing is sent. */
	if (cfg->github.on && forge_check(&cfg->github) < 0) {
		log_warnx("%s", err_last());
		return EXIT_USAGE;
	}
	if (cfg->hub.on) {
		char *auth = NULL;

		if (agent_push_token(&auth, &cfg->hub) < 0) {
			log_warnx("%s", err_last());
			return EXIT_USAGE;
		}
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	printf("calibration: %d A/A comparison%s %s when it has none on this host; idle A/As "
	       "up to %g s an hour%s\n", cfg->calibration.runs, cfg->calibration.runs == 1 ? "" : "s",
	       cfg->calibration.when == AGENT_CALIBRATE_BEFORE ? "before a case's comparison" :
	       "after a case's first job", cfg->calibration.idle_budget_s,
	       cfg->calibration.idle_budget_s > 0 ? "" : " (none)");
	printf("sandbox: %s, passing %zu environment pattern%s; processes %ld, memory %ld "
	       "MB, file size %ld MB, open files %ld, each private tmpfs %ld MB (0: none)\n",
	       cfg->sandbox.mode == AGENT_SANDBOX_ON ? "on (the agent starts only with it)" :
	       cfg->sandbox.mode == AGENT_SANDBOX_OFF ? "off (no pull head is built)" :
	       "auto (without it only where bubblewrap is absent or user namespaces are "
	       "refused, and then no pull head is built)",
	       cfg->sandbox.nenv, cfg->sandbox.nenv == 1 ? "" : "s",
	       cfg->sandbox.limits.processes, cfg->sandbox.limits.memory_mb,
	       cfg->sandbox.limits.file_size_mb, cfg->sandbox.limits.open_files,
	       cfg->sandbox.limits.tmp_mb);
	printf("configuration OK\n");
	return EXIT_OK;
}

/* perfd agent --check --trial, after the check: 0 passed, 1 failed, 2
 * not tried, 130 stopped by SIGINT or SIGTERM. */
static int agent_check_trial(struct agent_config *cfg)
{
	struct host_profile *hp = NULL;
	int stop_fd, r;

	if (cfg->host && host_check_load(&hp, cfg->host) != EXIT_OK)
		return EXIT_USAGE;
	stop_fd = cli_signal_fd((const int[]){ SIGINT, SIGTERM, 0 });
	if (stop_fd < 0) {
		host_profile_free(hp);
		return EXIT_USAGE;
	}
	r = agent_trial(cfg, hp, stop_fd);
	close(stop_fd);
	if (r == -ECANCELED)
		log_warnx("%s", err_last());
	else if (r < 0)
		log_warnx("trial: %s", err_last());
	return r == 0 ? EXIT_OK : r == 1 ? EXIT_RESULT : r == -ECANCELED ? EXIT_INTERRUPTED :
	       EXIT_USAGE;
}

/* The agent's loop until it is stopped (or, with once, the queue is
 * empty): poll, work, push, then an idle A/A or a wait for the next poll.
 * Returns the verb's exit status. */
static int agent_loop(struct agent *a, const struct agent_config *cfg, bool once, int stop_fd,
		      int hup_fd)
{
	bool quarantine_said = false, quarantined;
	int r;

	for (;;) {
		/* An unreachable remote is said and the queue still runs. */
		r = agent_poll(a);
		if (r < 0 && r != -ECANCELED)
			log_warnx("%s", err_last());
		if (r != -ECANCELED)
			r = agent_work(a);
		/* A quarantined host stays up, runs nothing on its device and
		 * keeps telling the hub why (its heartbeat's holds, whose
		 * answer may release one), until a person clears it; said
		 * once. With --once it ends after that push, exit 3. */
		quarantined = r == -EPERM;
		if (quarantined) {
			if (!quarantine_said || once)
				log_warnx("%s", err_last());
			quarantine_said = true;
			r = 0;
		} else if (r == 0) {
			quarantine_said = false;
		}
		if (r == 0)
			r = agent_push_turn(a);
		if (r > 0)
			r = 0;
		if (r == -ECANCELED) {
			log_info("%s", err_last());
			break;
		}
		if (r < 0) {
			log_warnx("%s", err_last());
			return r == -EPERM ? EXIT_NODEVICE : EXIT_USAGE;
		}
		if (once) {
			agent_summary(a, stdout);
			agent_holds_say(a, stdout);
			return quarantined ? EXIT_NODEVICE : EXIT_OK;
		}
		/* Idle: an A/A within the hour's budget, then a poll at once, so
		 * that a new head waits one A/A at most. */
		r = agent_idle(a);
		if (r == -ECANCELED) {
			log_info("%s", err_last());
			break;
		}
		if (r < 0)
			log_warnx("idle A/A: %s", err_last());
		if (r == 1) {
			/* A SIGHUP that came during it is said, and answered by
			 * the poll that follows at once. */
			if (wait_poll(stop_fd, hup_fd, 0)) {
				log_info("stopped");
				break;
			}
			continue;
		}
		if (wait_poll(stop_fd, hup_fd, (int)(cfg->poll_s * 1000))) {
			log_info("stopped");
			break;
		}
	}
	return EXIT_OK;
}

int cmd_agent(int argc, char **argv)
{
	struct agent_config *cfg = NULL;
	struct agent *a = NULL;
	struct host_profile *profile = NULL;
	struct kernel_probe *probe = NULL;
	struct strbuf errors = STRBUF_INIT;
	const char *path = NULL;
	bool check = false, trial = false, once = false;
	int opt, r, stop_fd = -1, hup_fd = -1, ret = EXIT_USAGE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", agent_options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			path = optarg;
			break;
		case 'k':
			check = true;
			break;
		case 't':
			trial = true;
			break;
		case '1':
			once = true;
			break;
		case 'h':
			fputs(cmd_agent_usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("agent");
		}
	}
	if (!path || optind != argc) {
		log_warnx("agent: expected --config FILE and no other argument");
		return cli_usage_error("agent");
	}
	if (trial && (!check || once)) {
		log_warnx("agent: --trial goes with --check, and not with --once");
		return cli_usage_error("agent");
	}
	r = agent_config_load(&cfg, path, &errors);
	if (r < 0) {
		fputs(errors.buf, stderr);
		log_warnx("%s", err_last());
		goto out;
	}
	if (check) {
		ret = agent_check(cfg);
		if (ret == EXIT_OK && trial)
			ret = agent_check_trial(cfg);
		goto out;
	}
	stop_fd = cli_signal_fd((const int[]){ SIGINT, SIGTERM, 0 });
	hup_fd = cli_signal_fd((const int[]){ SIGHUP, 0 });
	if (stop_fd < 0 || hup_fd < 0)
		goto out;
	if (cfg->host) {
		ret = host_check_device(&profile, &probe, cfg->host);
		if (ret != EXIT_OK)
			goto out;
		ret = EXIT_USAGE;
	}
	r = agent_open(&a, cfg, profile, probe, stop_fd);
	if (r < 0) {
		log_warnx("%s", err_last());
		goto out;
	}
	log_info("agent on host '%s'%s: watching %s", agent_host(a),
		 cfg->host ? "" : " (no profile)", cfg->url);
	agent_holds_say(a, NULL);
	ret = agent_loop(a, cfg, once, stop_fd, hup_fd);
out:
	agent_free(a);
	agent_config_free(cfg);
	strbuf_release(&errors);
	if (stop_fd >= 0)
		close(stop_fd);
	if (hup_fd >= 0)
		close(hup_fd);
	return ret;
}
