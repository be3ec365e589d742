/* Shared by the files of web/forge/ and their unit tests alone. */
#ifndef PERFD_WEB_FORGE_INTERNAL_H
#define PERFD_WEB_FORGE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "forge.h"

/* Whether a comment's body starts, on its first line, with "/perfd run"
 * (then *sha is "") or "/perfd run SHA" (SHA 7 to 40 hex digits, copied
 * lower-cased into sha); blanks before the command are skipped and
 * anything after it on the line makes it no command. */
bool web_run_command(char sha[41], const char *body);

enum web_command { WEB_COMMAND_NONE, WEB_COMMAND_OK, WEB_COMMAND_BAD };
/* A "/perfd triage" command, as web_triage_command reads it. */
struct web_triage_command {
	enum db_alert_triage triage;
	int64_t fixed_by;            /* fixed's comparison; 0 for the others */
	/* OK: the command as understood ("/perfd triage fixed 57"); BAD: its
	 * line as written, repaired, blanks for control characters, cut. */
	char text[DB_ALERT_COMMAND_TEXT_MAX + 1];
	char why[160];               /* BAD: what was wrong */
};
/* Reads a comment's first line (blanks and empty lines before it skipped)
 * as "/perfd triage STATE": STATE acknowledged, false-alarm (or
 * false_alarm), new, or fixed COMPARISON (a comparison's id, 1 to 15
 * digits), blanks after it allowed. NONE when the line does not start
 * with "/perfd triage" and a blank or its end; BAD, with why, when it does
 * but the rest is not one of these. Case matters, as for /perfd run. */
enum web_command web_triage_command(struct web_triage_command *out, const char *body);

/* Appends s escaped for Markdown text and table cells (comment.c): what
 * opens emphasis, code, links or HTML, the pipe that ends a cell, and the #
 * and @ of references and mentions; a line break becomes a blank, bytes
 * that are not UTF-8 are repaired. NULL appends nothing. */
void web_md_text(struct strbuf *out, const char *s);
/* Appends lines verbatim (UTF-8 repaired, line breaks made blanks) in a
 * code fence longer than the longest run of backticks in them: the one
 * writer of a fence in what perfd posts. */
void web_md_fenced(struct strbuf *out, const char *const *lines, size_t n);
/* Whether a runner's line is shown in a comment: one that starts with
 * RESULT or SUMMARY, then a blank or its end; the rest are left out and
 * counted. */
bool web_runner_line_is_shown(const char *s);
/* Whether url may go into a link target unescaped: http:// or https://
 * with nothing to escape. */
bool web_hub_url_is_valid(const char *url);
/* Whether text's first line is marker, alone on it. */
bool web_has_marker_line(const char *text, const char *marker);
/* The newest comment of pull request or issue number by the token's own
 * login whose first line is marker (alone on it), into *out; 0 when none. */
int web_comment_find_marked(struct web_gh_client *gh, int64_t *out, int number,
			    const char *marker);
/* Whether login is on the list (logins, any case). */
bool web_login_allowed(const char *login, const char *const *allow, size_t n);

/* A reply's body read as the client reads it after a 2xx (github.c), without
 * a request: one page of the open pull requests (or of a commit's pull
 * requests), one page of an issue's comments, one pull request, a
 * compare's merge base, an issue, a page of issues. For the fuzz targets
 * (tests/fuzz/); the client itself reads each page of a list the same way.
 * -EPROTO naming what is wrong; *out is zeroed on entry, and a list is the
 * caller's (free, web_gh_comments_free) only on success. */
int web_gh_pulls_read(struct web_gh_pull **out, size_t *out_n, const char *text, size_t len);
int web_gh_comments_read(struct web_gh_comment **out, size_t *out_n, const char *text,
			 size_t len);
int web_gh_pull_read(struct web_gh_pull *out, const char *text, size_t len);
int web_gh_compare_read(char out[41], const char *text, size_t len);
/* An issue as a create answers it, and a page of the issues' list. */
int web_gh_issue_read(struct web_gh_issue *out, const char *text, size_t len);
int web_gh_issues_read(struct web_gh_issue **out, size_t *out_n, const char *text, size_t len);

#endif
