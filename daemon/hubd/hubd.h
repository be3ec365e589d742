/*
 * daemon/hubd: the hub's own long-running side, above its HTTP server
 * (web/hub): its configuration (config.c, docs/hub.md), read by perfd serve
 * --config and perfd token, its database as they open it (store.c), and
 * its loop with the pull requests' host (forge.c). Only daemon/ includes
 * this.
 */
#ifndef PERFD_DAEMON_HUBD_H
#define PERFD_DAEMON_HUBD_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"
#include "daemon.h"
#include "forge.h"

#define HUB_CONFIG_MAX (64 * 1024)   /* bytes of the file */
#define HUB_PEM_MAX (1024 * 1024)    /* bytes of a certificate or key file */
#define HUB_HOSTS_MAX 1024
#define HUB_NAME_MAX 63              /* a host's or a maintainer's name */

struct hub_config {
	char *path;
	char *database;              /* default perfd.db */
	char *listen;                /* default 127.0.0.1:8080 */
	char *tls_cert;              /* the files' paths, both or neither */
	char *tls_key;
	char *cert_pem;              /* their text, read with the configuration */
	char *key_pem;
	bool allow_plain_http;       /* plain HTTP on an address other than loopback */
	char **hosts;                /* the hosts whose records the hub accepts */
	size_t nhosts;
	/* The server's bounds (docs/hub.md, "Bounds"): 0 for the defaults. */
	unsigned max_connections;
	double header_timeout_s;
	double body_timeout_s;
	char **trusted_proxies;      /* numeric addresses held to no share */
	size_t ntrusted_proxies;
	char *default_branch;        /* the branch whose change points are shown */
	/* [github]: the hub posts the comment and statuses (docs/hub.md). */
	struct forge_config github;
	char **expect;               /* the hosts each pull head is measured on */
	size_t nexpect;
	double poll_s;               /* how often the open pull requests are listed */
	double silent_after_s;       /* a host not heard from for this long is "silent" */
	/* [github]'s alerts on the forge (docs/github.md, "Alerts on the
	 * forge"): an issue per raised alert of default_branch, a comment on
	 * its culprits' pull requests. */
	bool alert_issues;
	bool culprit_comments;
	/* The logins whose "/perfd triage" on an issue is applied; none: allow's. */
	char **triage_allow;
	size_t ntriage_allow;
	/* Each host's actions on the forge for its alerts (issues made or
	 * edited, culprits' comments) per hour; past it they wait. */
	int forge_actions_per_hour;
};
#define HUB_ALERT_ISSUES_MAX 500     /* the newest raised alerts kept on the forge */
#define HUB_ALERT_READS_MAX 30       /* issues whose comments are read at a poll */
#define HUB_POLL_S 60.0
#define HUB_SILENT_AFTER_S 900.0
#define HUB_FORGE_ACTIONS_PER_HOUR 60
#define HUB_FORGE_ACTIONS_MAX 100000

/* Reads and checks the configuration at path into a new *out (the caller's,
 * hub_config_free): the certificate and key are read too, and plain HTTP on
 * an address other than loopback is refused unless allowed. Every mistake is
 * appended to errors as "FILE:LINE: message" (a line each), all of them;
 * -EINVAL then, with a count in err_last(), or the error of reading the
 * file. *out is NULL on failure. */
int hub_config_load(struct hub_config **out, const char *path, struct strbuf *errors);
/* hub_config_load's parse and checks of the configuration's text (len
 * bytes, not NUL-terminated); path names it in messages. */
int hub_config_parse(struct hub_config **out, const char *path, const char *text, size_t len,
		     struct strbuf *errors);
void hub_config_free(struct hub_config *c);
/* Opens the hub's database (cli_db_open of c's; store.c): from here on what the
 * process makes (the file, its -wal and -shm) is its owner's alone, with
 * umask 077: it holds the tokens' hashes and every host's records. NULL
 * after saying why. */
struct db *hub_db_open(const struct hub_config *c);
/* Whether host is one of the configuration's hosts. */
bool hub_config_accepts(const struct hub_config *c, const char *host);
/* Whether name is letters, digits, '.', '_' and '-', 1 to HUB_NAME_MAX of
 * them: a host's or a maintainer's name. */
bool hub_name_is_valid(const char *name);

/* ---- forge.c: the hub and the pull requests' host ---- */

struct hub_forge;
/* Opens [github]'s client (a refused token is an error) and a database
 * handle of the loop's own. cancel_fd ends the client's waits. */
int hub_forge_open(struct hub_forge **out, const struct hub_config *cfg, int cancel_fd);
void hub_forge_free(struct hub_forge *f);
/* A descriptor that is readable when the loop has work: poll it with the
 * timeout hub_forge_timeout_ms gives, then call hub_forge_run. */
int hub_forge_fd(const struct hub_forge *f);
int hub_forge_timeout_ms(const struct hub_forge *f);
/* Marks head commit changed and wakes the loop: called on the server's
 * thread after a record changed what the hub holds of it (ctx is the
 * hub_forge); urgent when the record brought a result (a comparison, a
 * job's end), which is published before heads whose rows only moved.
 * commit "" says an alert changed: its issue is brought up to date. */
void hub_forge_kick(void *ctx, const char *commit, bool urgent);
/* Appends the forge loop's counters to /metrics (web_server_opts'
 * metrics): per host, its actions on the forge done and those refused by
 * forge_actions_per_hour. Called on the server's thread. */
void hub_forge_metrics(void *ctx, struct strbuf *out);
/* Brings the changed heads' statuses and comments up to date, the urgent
 * ones first; when a poll is due, lists the open pull requests and does
 * every open head too, a changed one always before those left. Then, with
 * alert_issues, when a poll is due or an alert changed, brings the issues
 * of the alerts up to date, and with culprit_comments their culprits'
 * pull requests' comments; at a poll, with alert_issues, the triage
 * commands of the issues read longest ago. */
void hub_forge_run(struct hub_forge *f);

#endif
