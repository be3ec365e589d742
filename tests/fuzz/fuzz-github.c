/*
 * The forge's JSON replies as the client reads them after a 2xx
 * (web/forge/github.c): the same bytes as a page of open pull requests (or
 * of a commit's pull requests), a page of an issue's comments, one pull
 * request, a compare, an issue and a page of issues; and as the hub's list
 * of pull heads its agents read (web_hub_pulls_parse). Each comment's body,
 * and the input itself, as a "/perfd triage" command (web_triage_command).
 * What a reader accepts holds what the agent and the hub rely on.
 */
#include <errno.h>
#include <string.h>

#include "forge-internal.h"
#include "fuzz.h"

static bool is_oid(const char *s)
{
	return strlen(s) == 40 && strspn(s, "0123456789abcdef") == 40;
}

/* What web_triage_command promises: a command understood names a state,
 * a comparison with fixed alone, and says itself; one refused says why;
 * no command fills nothing. */
static void check_triage(const char *body)
{
	struct web_triage_command c;
	enum web_command k = web_triage_command(&c, body);

	FUZZ_CHECK(strlen(c.text) <= DB_ALERT_COMMAND_TEXT_MAX);
	if (k == WEB_COMMAND_NONE) {
		FUZZ_CHECK(!*c.text && !*c.why);
		return;
	}
	FUZZ_CHECK(!strncmp(c.text, "/perfd triage", 13));
	if (k == WEB_COMMAND_BAD) {
		FUZZ_CHECK(*c.why && !c.fixed_by);
		return;
	}
	FUZZ_CHECK(k == WEB_COMMAND_OK && !*c.why);
	FUZZ_CHECK((c.triage == DB_TRIAGE_FIXED) == (c.fixed_by >= 1));
	FUZZ_CHECK(c.fixed_by < 1000000000000000LL);
}

static void check_pull(const struct web_gh_pull *p)
{
	FUZZ_CHECK(p->number >= 1);
	FUZZ_CHECK(is_oid(p->head_sha));
	FUZZ_CHECK(strlen(p->author) <= WEB_GH_LOGIN_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct web_gh_pull *pulls, pull;
	struct web_gh_comment *comments;
	struct web_hub_pull *heads;
	struct web_gh_issue issue, *issues;
	size_t n, i;
	char sha[41];

	if (web_gh_pulls_read(&pulls, &n, text, size) == 0) {
		for (i = 0; i < n; i++)
			check_pull(&pulls[i]);
		free(pulls);
	} else {
		FUZZ_CHECK(!pulls && !n && *err_last());
	}
	if (web_gh_comments_read(&comments, &n, text, size) == 0) {
		for (i = 0; i < n; i++) {
			FUZZ_CHECK(comments[i].id >= 1 && comments[i].body);
			check_triage(comments[i].body);
		}
		web_gh_comments_free(comments, n);
	} else {
		FUZZ_CHECK(!comments && !n);
	}
	if (web_gh_pull_read(&pull, text, size) == 0)
		check_pull(&pull);
	if (web_gh_compare_read(sha, text, size) == 0)
		FUZZ_CHECK(is_oid(sha));
	if (web_gh_issue_read(&issue, text, size) == 0)
		FUZZ_CHECK(issue.number >= 1 && strlen(issue.head) <= WEB_GH_ISSUE_HEAD_MAX &&
			   strlen(issue.author) <= WEB_GH_LOGIN_MAX);
	if (web_gh_issues_read(&issues, &n, text, size) == 0) {
		for (i = 0; i < n; i++)
			FUZZ_CHECK(issues[i].number >= 1 &&
				   strlen(issues[i].head) <= WEB_GH_ISSUE_HEAD_MAX);
		free(issues);
	} else {
		FUZZ_CHECK(!issues && !n);
	}
	if (size < 4096 && !memchr(data, '\0', size)) {
		char *s = xstrndup(text, size);

		check_triage(s);
		free(s);
	}
	if (web_hub_pulls_parse(&heads, &n, text, size) == 0) {
		for (i = 0; i < n; i++)
			FUZZ_CHECK(heads[i].number >= 1 && is_oid(heads[i].head) &&
				   is_oid(heads[i].base));
		free(heads);
	} else {
		FUZZ_CHECK(!heads && !n);
	}
	return 0;
}
