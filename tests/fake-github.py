#!/usr/bin/env python3
"""A stand-in for the GitHub REST API on 127.0.0.1, for the tests.

Serves one repository (--repo OWNER/NAME) on an ephemeral port, printed alone
on the first line of stdout: its pull requests, their issue comments and
commit statuses, all held in memory. Every API request must carry the token
given by --token (as "Bearer TOKEN" or "token TOKEN"); the token itself is
never written anywhere.

Each API request is appended as one JSON line to --log and kept in memory:
{"t", "method", "path", "query", "auth", "user_agent", "body", "status",
"fault", "applied"}. A short line per request also goes to stderr.

Issues share the pull requests' numbers, as on GitHub: POST /repos/O/N/issues
makes one, PATCH /repos/O/N/issues/NUM edits its title, body and state, GET
/repos/O/N/issues lists issues and pull requests (state, creator, sort,
direction, since), and /issues/NUM/comments serves either (GET takes since,
which keeps the comments updated at or after that time). GET
/repos/O/N/commits/SHA/pulls answers the pull requests a commit belongs to:
those whose "commits" hold it, whose head it is, or whose merge commit it is.

A GET of /repos/O/N/compare/BASE...HEAD answers the merge base when
--git-dir names the repository, as git merge-base finds it; a GET of
/repos/O/N/git/commits/SHA answers that commit (its message, tree and
parents) from the same repository.

Unauthenticated control endpoints under /_fake/ let a test script shape the
state and inject failures:

  POST   /_fake/pulls           [{"number", "author", "head_sha", "head_ref",
                                  "base_ref", "base_sha", "state", "title",
                                  "head_repo", "draft", "body", "commits",
                                  "merged", "merge_commit_sha"}...]  upsert by
                                  number ("body": the description, or null;
                                  "commits": the commits it brought)
  DELETE /_fake/pulls/NUM       remove a pull and its comments
  POST   /_fake/comments        {"pr" (or "issue"), "author", "body",
                                  "author_association"}
  DELETE /_fake/comments/ID     delete a comment
  POST   /_fake/faults          [{"method", "path" (regex), "status",
                                  "headers", "body", "content_type", "times",
                                  "apply", "delay", "drop", "repeat"}...]
                                  append rules
  GET    /_fake/faults          the rules with times left
  DELETE /_fake/faults          drop every rule
  GET    /_fake/state           {"pulls", "issues", "comments", "statuses"}
  GET    /_fake/requests        the recorded API requests
  POST   /_fake/reset-requests  forget the recorded requests (not the log)

A fault rule answers the first API request whose method and path (re.search,
without the query) match, instead of the real answer; with "apply": true the
real request is carried out on the state first and its answer thrown away.
"delay" waits that many seconds before answering; "drop": true closes the
connection without any answer; "repeat": N sends the body N times over (a
reply larger than a control request may be).

Exits by itself after --max-seconds, or on SIGTERM/SIGINT, so a test that
dies leaves nothing running.
"""
import argparse
import base64
import calendar
import hashlib
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
from testserver import exit_on_signals  # noqa: E402

MAX_BODY = 1 << 20          # larger request bodies are answered 413
MAX_DRAIN = 16 << 20        # past this much, a too large body is not read
MAX_COMMENT = 65536
MAX_DESCRIPTION = 140
MAX_TITLE = 256
ISSUE_ID_BASE = (1 << 32) + 5000000
DOCS = "https://docs.github.com/rest"
JSON_TYPE = "application/json; charset=utf-8"
STATUS_STATES = ("pending", "success", "failure", "error")
SHA_RE = re.compile(r"^[0-9a-fA-F]{40}$")
PULL_ID_BASE = (1 << 32) + 7000000
STATUS_ID_BASE = 9000000000


def iso(ts):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def parse_iso(text):
    """GitHub's ISO 8601 time (YYYY-MM-DDTHH:MM:SSZ, with or without a
    fraction, or +00:00) as seconds since the epoch; None when it is not."""
    m = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|\+00:00)$", text)
    if not m:
        return None
    try:
        return calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")) + \
            float(m.group(2) or 0)
    except ValueError:
        return None


def node_id(prefix, n):
    raw = ("%s:%d" % (prefix, n)).encode()
    return prefix + "_" + base64.b64encode(raw).decode().rstrip("=")


def message(text, **extra):
    obj = {"message": text}
    obj.update(extra)
    obj["documentation_url"] = DOCS
    return obj


def invalid(resource, field, code, text=None):
    """A 422 answer as (status, object, link)."""
    err = {"resource": resource, "code": code, "field": field}
    if text:
        err["message"] = text
    return 422, message("Validation Failed", errors=[err]), None


class BadInput(Exception):
    """A control request the fake cannot make sense of: answered 400."""


class State:
    """Everything the fake knows, guarded by one lock."""

    def __init__(self, repo, login, log_path):
        self.lock = threading.RLock()
        self.repo = repo
        self.owner = repo.split("/", 1)[0]
        self.login = login
        self.git_dir = None
        self.port = 0
        self.pulls = {}           # number -> dict
        self.issues = {}          # number -> dict; numbers shared with pulls
        self.comments = {}        # id -> dict (with "pr": the pull's or issue's number)
        self.statuses = []        # oldest first
        self.faults = []
        self.requests = []
        self.user_ids = {login: 1}
        self.next_comment = 1000
        self.next_status = 1
        self.next_request = 1
        self.remaining = 5000
        self.log = open(log_path, "a", encoding="utf-8")

    # --- rendering -------------------------------------------------------

    @property
    def api_base(self):
        return "http://127.0.0.1:%d" % self.port

    def user(self, login):
        if login not in self.user_ids:
            self.user_ids[login] = 100 + len(self.user_ids)
        return {"login": login, "id": self.user_ids[login], "type": "User"}

    def repo_obj(self, full_name):
        owner, _, name = full_name.partition("/")
        return {"full_name": full_name, "name": name, "owner": {"login": owner}}

    def pull_obj(self, p):
        n = p["number"]
        head_owner = p["head_repo"].split("/", 1)[0]
        return {
            "url": "%s/repos/%s/pulls/%d" % (self.api_base, self.repo, n),
            "id": PULL_ID_BASE + n,
            "node_id": node_id("PR", PULL_ID_BASE + n),
            "html_url": "https://github.com/%s/pull/%d" % (self.repo, n),
            "number": n,
            "state": p["state"],
            "locked": False,
            "title": p["title"],
            "user": self.user(p["author"]),
            "body": p.get("body"),
            "created_at": iso(p["created"]),
            "updated_at": iso(p["updated"]),
            "closed_at": iso(p["updated"]) if p["state"] == "closed" else None,
            "merged_at": iso(p["updated"]) if p.get("merged") else None,
            "merge_commit_sha": p.get("merge_commit_sha"),
            "draft": p["draft"],
            "head": {
                "label": "%s:%s" % (head_owner, p["head_ref"]),
                "ref": p["head_ref"],
                "sha": p["head_sha"],
                "user": self.user(head_owner),
                "repo": self.repo_obj(p["head_repo"]),
            },
            "base": {
                "label": "%s:%s" % (self.owner, p["base_ref"]),
                "ref": p["base_ref"],
                "sha": p["base_sha"],
                "user": self.user(self.owner),
                "repo": self.repo_obj(self.repo),
            },
            "author_association": "CONTRIBUTOR",
        }

    def issue_obj(self, i):
        n = i["number"]
        return {
            "url": "%s/repos/%s/issues/%d" % (self.api_base, self.repo, n),
            "repository_url": "%s/repos/%s" % (self.api_base, self.repo),
            "comments_url": "%s/repos/%s/issues/%d/comments" % (self.api_base,
                                                                self.repo, n),
            "html_url": "https://github.com/%s/issues/%d" % (self.repo, n),
            "id": ISSUE_ID_BASE + n,
            "node_id": node_id("I", ISSUE_ID_BASE + n),
            "number": n,
            "title": i["title"],
            "user": self.user(i["author"]),
            "labels": [],
            "state": i["state"],
            "state_reason": i.get("state_reason"),
            "locked": False,
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "comments": len([c for c in self.comments.values() if c["pr"] == n]),
            "created_at": iso(i["created"]),
            "updated_at": iso(i["updated"]),
            "closed_at": iso(i["closed"]) if i["state"] == "closed" else None,
            "author_association": "NONE",
            "body": i["body"],
        }

    def pull_as_issue(self, p):
        """A pull request as the issues endpoints list it."""
        obj = self.pull_obj(p)
        return {
            "url": "%s/repos/%s/issues/%d" % (self.api_base, self.repo, p["number"]),
            "html_url": obj["html_url"], "id": obj["id"], "node_id": obj["node_id"],
            "number": p["number"], "title": p["title"], "user": obj["user"],
            "labels": [], "state": p["state"], "locked": False,
            "comments": len([c for c in self.comments.values()
                             if c["pr"] == p["number"]]),
            "created_at": obj["created_at"], "updated_at": obj["updated_at"],
            "closed_at": obj["closed_at"], "author_association": "CONTRIBUTOR",
            "body": p.get("body"),
            "pull_request": {"url": obj["url"], "html_url": obj["html_url"],
                             "merged_at": obj["merged_at"]},
        }

    def next_number(self):
        return max(list(self.pulls) + list(self.issues) + [0]) + 1

    def comment_obj(self, c, with_pr=False):
        cid, pr = c["id"], c["pr"]
        kind = "issues" if pr in self.issues else "pull"
        obj = {
            "url": "%s/repos/%s/issues/comments/%d" % (self.api_base, self.repo, cid),
            "html_url": "https://github.com/%s/%s/%d#issuecomment-%d"
                        % (self.repo, kind, pr, cid),
            "issue_url": "%s/repos/%s/issues/%d" % (self.api_base, self.repo, pr),
            "id": cid,
            "node_id": node_id("IC", cid),
            "user": self.user(c["author"]),
            "created_at": iso(c["created"]),
            "updated_at": iso(c["updated"]),
            "author_association": c["association"],
            "body": c["body"],
        }
        if with_pr:
            obj["pr"] = pr
        return obj

    def status_obj(self, s):
        return {
            "url": "%s/repos/%s/statuses/%s" % (self.api_base, self.repo, s["sha"]),
            "id": s["id"],
            "node_id": node_id("SC", s["id"]),
            "state": s["state"],
            "description": s["description"],
            "target_url": s["target_url"],
            "context": s["context"],
            "created_at": iso(s["created"]),
            "updated_at": iso(s["created"]),
            "creator": self.user(s["creator"]),
        }

    def state_obj(self):
        return {
            "pulls": [self.pull_obj(self.pulls[n]) for n in sorted(self.pulls)],
            "issues": [self.issue_obj(self.issues[n]) for n in sorted(self.issues)],
            "comments": [self.comment_obj(self.comments[i], True)
                         for i in sorted(self.comments)],
            "statuses": [{"id": s["id"], "sha": s["sha"], "state": s["state"],
                          "context": s["context"], "description": s["description"],
                          "target_url": s["target_url"], "creator": s["creator"],
                          "created_at": iso(s["created"])}
                         for s in self.statuses],
        }

    # --- control ---------------------------------------------------------

    def upsert_pulls(self, items):
        if isinstance(items, dict):
            items = [items]
        if not isinstance(items, list):
            raise BadInput("expected a list of pulls")
        checked = []
        for item in items:
            if not isinstance(item, dict):
                raise BadInput("each pull must be an object")
            n = item.get("number")
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise BadInput("number must be a positive integer")
            for key in ("head_sha", "base_sha"):
                if key in item and not (isinstance(item[key], str)
                                        and SHA_RE.match(item[key])):
                    raise BadInput("%s must be 40 hex digits" % key)
            for key in ("author", "head_ref", "base_ref", "title", "head_repo"):
                if key in item and not isinstance(item[key], str):
                    raise BadInput("%s must be a string" % key)
            if "state" in item and item["state"] not in ("open", "closed"):
                raise BadInput("state must be open or closed")
            if "draft" in item and not isinstance(item["draft"], bool):
                raise BadInput("draft must be true or false")
            if "body" in item and not (item["body"] is None
                                       or isinstance(item["body"], str)):
                raise BadInput("body must be a string or null")
            if "commits" in item and not (isinstance(item["commits"], list) and all(
                    isinstance(c, str) and SHA_RE.match(c) for c in item["commits"])):
                raise BadInput("commits must be a list of 40 hex digits each")
            if "merged" in item and not isinstance(item["merged"], bool):
                raise BadInput("merged must be true or false")
            if "merge_commit_sha" in item and not (
                    item["merge_commit_sha"] is None or (
                        isinstance(item["merge_commit_sha"], str)
                        and SHA_RE.match(item["merge_commit_sha"]))):
                raise BadInput("merge_commit_sha must be 40 hex digits or null")
            if item.get("number") in self.issues:
                raise BadInput("number %d is an issue's" % item["number"])
            checked.append(item)
        now = time.time()
        for item in checked:
            n = item["number"]
            p = self.pulls.get(n)
            if p is None:
                p = {"number": n, "author": "contributor", "head_ref": "pr-%d" % n,
                     "head_sha": hashlib.sha1(b"head %d" % n).hexdigest(),
                     "base_ref": "main",
                     "base_sha": hashlib.sha1(b"base").hexdigest(),
                     "state": "open", "title": "Pull request #%d" % n,
                     "head_repo": self.repo, "draft": False, "created": now}
                self.pulls[n] = p
            for key in ("author", "head_ref", "head_sha", "base_ref", "base_sha",
                        "state", "title", "head_repo", "draft", "body", "merged",
                        "merge_commit_sha"):
                if key in item:
                    value = item[key]
                    p[key] = value.lower() if key.endswith("_sha") and value else value
            if "commits" in item:
                p["commits"] = [c.lower() for c in item["commits"]]
            p["updated"] = now
        return self.state_obj()["pulls"]

    def add_comment(self, pr, author, body, association="NONE"):
        cid = self.next_comment
        self.next_comment += 1
        now = time.time()
        c = {"id": cid, "pr": pr, "author": author, "body": body,
             "association": association, "created": now, "updated": now}
        self.comments[cid] = c
        return c

    def add_faults(self, items):
        if isinstance(items, dict):
            items = [items]
        if not isinstance(items, list):
            raise BadInput("expected a list of fault rules")
        rules = []
        for item in items:
            if not isinstance(item, dict):
                raise BadInput("each fault rule must be an object")
            status = item.get("status")
            if not item.get("drop") and not (isinstance(status, int)
                                             and 100 <= status <= 599):
                raise BadInput("status must be an HTTP status code")
            method = item.get("method", "*")
            path = item.get("path", "")
            if not isinstance(method, str) or not isinstance(path, str):
                raise BadInput("method and path must be strings")
            try:
                regex = re.compile(path)
            except re.error as e:
                raise BadInput("bad path regex: %s" % e)
            headers = item.get("headers") or {}
            if not isinstance(headers, dict) or not all(
                    isinstance(k, str) and isinstance(v, (str, int))
                    for k, v in headers.items()):
                raise BadInput("headers must map names to strings")
            body = item.get("body")
            if body is not None and not isinstance(body, str):
                raise BadInput("body must be a string")
            repeat = item.get("repeat", 1)
            if not isinstance(repeat, int) or not 1 <= repeat <= 1 << 16:
                raise BadInput("repeat must be an integer from 1 to 65536")
            if body is not None:
                body *= repeat
            ctype = item.get("content_type", JSON_TYPE)
            times = item.get("times", 1)
            if not isinstance(times, int) or times < 1:
                raise BadInput("times must be a positive integer")
            delay = item.get("delay", 0)
            if not isinstance(delay, (int, float)) or delay < 0:
                raise BadInput("delay must be a number of seconds")
            rules.append({"method": method.upper(), "path": path, "regex": regex,
                          "status": status, "headers": {k: str(v) for k, v in
                                                        headers.items()},
                          "body": body, "content_type": str(ctype),
                          "times": times, "apply": bool(item.get("apply")),
                          "delay": delay, "drop": bool(item.get("drop"))})
        self.faults.extend(rules)
        return self.faults_obj()

    def faults_obj(self):
        return [{k: v for k, v in r.items() if k != "regex"} for r in self.faults]

    def take_fault(self, method, path):
        for rule in self.faults:
            if rule["method"] in ("*", method) and rule["regex"].search(path):
                rule["times"] -= 1
                if rule["times"] <= 0:
                    self.faults.remove(rule)
                return rule
        return None

    def record(self, entry):
        self.requests.append(entry)
        self.log.write(json.dumps(entry) + "\n")
        self.log.flush()

    # --- the API ---------------------------------------------------------

    def page(self, items, query, pairs, path):
        """Slices ITEMS by per_page/page; returns the slice and a Link value."""
        def number(name, default):
            try:
                return int(query.get(name, ""))
            except ValueError:
                return default
        per_page = number("per_page", 30)
        if per_page < 1:
            per_page = 30
        per_page = min(per_page, 100)
        page = max(number("page", 1), 1)
        last = max((len(items) + per_page - 1) // per_page, 1)
        chunk = items[(page - 1) * per_page:page * per_page]

        def link(p, rel):
            out, seen = [], False
            for k, v in pairs:
                if k == "page":
                    if seen:
                        continue
                    v, seen = str(p), True
                out.append((k, v))
            if not seen:
                out.append(("page", str(p)))
            return '<%s%s?%s>; rel="%s"' % (self.api_base, path,
                                             urllib.parse.urlencode(out), rel)
        links = []
        if page > 1:
            links.append(link(min(page - 1, last), "prev"))
        if page < last:
            links.append(link(page + 1, "next"))
            links.append(link(last, "last"))
        if page > 1:
            links.append(link(1, "first"))
        return chunk, ", ".join(links) if links else None

    def api(self, method, path, query, pairs, body):
        """Answers one authenticated API request: (status, object, link)."""
        if path == "/user" and method == "GET":
            return 200, {"login": self.login, "id": 1, "type": "Bot"}, None
        m = re.match(r"^/repos/([^/]+)/([^/]+)(/.*)?$", path)
        if not m:
            return 404, message("Not Found"), None
        if ("%s/%s" % (m.group(1), m.group(2))).lower() != self.repo.lower():
            return 404, message("Not Found"), None
        rest, base = m.group(3) or "", "/repos/%s/%s" % (m.group(1), m.group(2))

        if rest == "/pulls" and method == "GET":
            state = query.get("state", "open")
            if state not in ("open", "closed", "all"):
                return invalid("PullRequest", "state", "invalid")
            pulls = [p for n, p in sorted(self.pulls.items(), reverse=True)
                     if state == "all" or p["state"] == state]
            if "base" in query:
                pulls = [p for p in pulls if p["base_ref"] == query["base"]]
            if "head" in query:
                pulls = [p for p in pulls if "%s:%s" % (
                    p["head_repo"].split("/", 1)[0], p["head_ref"]) == query["head"]]
            chunk, link = self.page(pulls, query, pairs, base + rest)
            return 200, [self.pull_obj(p) for p in chunk], link

        m = re.match(r"^/pulls/(\d+)$", rest)
        if m and method == "GET":
            p = self.pulls.get(int(m.group(1)))
            if p is None:
                return 404, message("Not Found"), None
            return 200, self.pull_obj(p), None

        if rest == "/issues" and method == "GET":
            return self.list_issues(query, pairs, base + rest)

        if rest == "/issues" and method == "POST":
            return self.create_issue(body)

        m = re.match(r"^/issues/(\d+)$", rest)
        if m and method in ("GET", "PATCH"):
            n = int(m.group(1))
            if n in self.pulls and method == "GET":
                return 200, self.pull_as_issue(self.pulls[n]), None
            if n not in self.issues:
                return 404, message("Not Found"), None
            if method == "GET":
                return 200, self.issue_obj(self.issues[n]), None
            return self.edit_issue(self.issues[n], body)

        m = re.match(r"^/issues/(\d+)/comments$", rest)
        if m and method in ("GET", "POST"):
            pr = int(m.group(1))
            if pr not in self.pulls and pr not in self.issues:
                return 404, message("Not Found"), None
            if method == "GET":
                since = None
                if "since" in query:
                    since = parse_iso(query["since"])
                    if since is None:
                        return invalid("IssueComment", "since", "invalid")
                mine = [self.comments[i] for i in sorted(self.comments)
                        if self.comments[i]["pr"] == pr and (
                            since is None or int(self.comments[i]["updated"]) >= since)]
                chunk, link = self.page(mine, query, pairs, base + rest)
                return 200, [self.comment_obj(c) for c in chunk], link
            ok, text = self.comment_body(body)
            if not ok:
                return text
            return 201, self.comment_obj(self.add_comment(pr, self.login, text)), None

        m = re.match(r"^/issues/comments/(\d+)$", rest)
        if m and method in ("GET", "PATCH", "DELETE"):
            c = self.comments.get(int(m.group(1)))
            if c is None:
                return 404, message("Not Found"), None
            if method == "GET":
                return 200, self.comment_obj(c), None
            if method == "DELETE":
                del self.comments[c["id"]]
                return 204, None, None
            ok, text = self.comment_body(body)
            if not ok:
                return text
            c["body"] = text
            # updated_at must show the edit even within the same second
            c["updated"] = max(time.time(), int(c["updated"]) + 1)
            return 200, self.comment_obj(c), None

        m = re.match(r"^/compare/([A-Za-z0-9._/-]+)\.\.\.([0-9a-f]{40})$", rest)
        if m and method == "GET":
            return self.compare(m.group(1), m.group(2))

        m = re.match(r"^/git/commits/([0-9a-f]{40})$", rest)
        if m and method == "GET":
            return self.git_commit(m.group(1), base + rest)

        m = re.match(r"^/statuses/([^/]+)$", rest)
        if m and method == "POST":
            return self.create_status(m.group(1), body)

        m = re.match(r"^/commits/([0-9a-fA-F]{40})/pulls$", rest)
        if m and method == "GET":
            sha = m.group(1).lower()
            mine = [p for n, p in sorted(self.pulls.items())
                    if sha in p.get("commits", []) or p["head_sha"] == sha
                    or p.get("merge_commit_sha") == sha]
            chunk, link = self.page(mine, query, pairs, base + rest)
            return 200, [self.pull_obj(p) for p in chunk], link

        m = re.match(r"^/commits/([^/]+)/statuses$", rest)
        if m and method == "GET":
            sha = m.group(1).lower()
            mine = [s for s in reversed(self.statuses) if s["sha"] == sha]
            chunk, link = self.page(mine, query, pairs, base + rest)
            return 200, [self.status_obj(s) for s in chunk], link

        return 404, message("Not Found"), None

    def list_issues(self, query, pairs, path):
        """GET /issues: issues and pull requests, as GitHub lists them."""
        state = query.get("state", "open")
        if state not in ("open", "closed", "all"):
            return invalid("Issue", "state", "invalid")
        sort = query.get("sort", "created")
        if sort not in ("created", "updated", "comments"):
            return invalid("Issue", "sort", "invalid")
        direction = query.get("direction", "desc")
        if direction not in ("asc", "desc"):
            return invalid("Issue", "direction", "invalid")
        since = None
        if "since" in query:
            since = parse_iso(query["since"])
            if since is None:
                return invalid("Issue", "since", "invalid")
        items = [self.issue_obj(i) for i in self.issues.values()] + \
            [self.pull_as_issue(p) for p in self.pulls.values()]
        items = [o for o in items if (state == "all" or o["state"] == state)
                 and ("creator" not in query
                      or o["user"]["login"].lower() == query["creator"].lower())
                 and (since is None or parse_iso(o["updated_at"]) >= since)]
        key = {"created": "created_at", "updated": "updated_at",
               "comments": "comments"}[sort]
        items.sort(key=lambda o: (o[key], o["number"]), reverse=direction == "desc")
        chunk, link = self.page(items, query, pairs, path)
        return 200, chunk, link

    def issue_fields(self, body, creating):
        """The title, body, state and state_reason of a create or an edit,
        or an error answer."""
        ok, obj = self.parse_json(body)
        if not ok:
            return False, obj
        if not isinstance(obj, dict):
            return False, invalid("Issue", "title", "missing_field")
        out = {}
        if "title" in obj or creating:
            title = obj.get("title")
            if isinstance(title, int) and not isinstance(title, bool):
                title = str(title)
            if not isinstance(title, str) or not title.strip():
                return False, invalid("Issue", "title", "missing_field")
            if len(title) > MAX_TITLE:
                return False, invalid("Issue", "title", "custom",
                                      "title is too long (maximum is %d characters)"
                                      % MAX_TITLE)
            out["title"] = title
        if "body" in obj:
            text = obj["body"]
            if text is not None and not isinstance(text, str):
                return False, invalid("Issue", "body", "invalid")
            if text is not None and len(text) > MAX_COMMENT:
                return False, invalid("Issue", "body", "custom",
                                      "body is too long (maximum is %d characters)"
                                      % MAX_COMMENT)
            out["body"] = text
        if "state" in obj:
            if creating or obj["state"] not in ("open", "closed"):
                return False, invalid("Issue", "state", "invalid")
            out["state"] = obj["state"]
        if "state_reason" in obj:
            if obj["state_reason"] not in ("completed", "not_planned", "reopened", None):
                return False, invalid("Issue", "state_reason", "invalid")
            out["state_reason"] = obj["state_reason"]
        return True, out

    def create_issue(self, body):
        ok, fields = self.issue_fields(body, True)
        if not ok:
            return fields
        now = time.time()
        n = self.next_number()
        self.issues[n] = {"number": n, "title": fields["title"],
                          "body": fields.get("body"), "author": self.login,
                          "state": "open", "state_reason": None, "created": now,
                          "updated": now, "closed": None}
        return 201, self.issue_obj(self.issues[n]), None

    def edit_issue(self, i, body):
        ok, fields = self.issue_fields(body, False)
        if not ok:
            return fields
        now = time.time()
        for key in ("title", "body"):
            if key in fields:
                i[key] = fields[key]
        if "state" in fields and fields["state"] != i["state"]:
            i["state"] = fields["state"]
            i["closed"] = now if i["state"] == "closed" else None
            i["state_reason"] = fields.get(
                "state_reason", "completed" if i["state"] == "closed" else "reopened")
        i["updated"] = max(now, int(i["updated"]) + 1)
        return 200, self.issue_obj(i), None

    def git_commit(self, sha, path):
        """GET /git/commits/SHA: the commit object from --git-dir (404
        without one, or for a commit it lacks)."""
        if not self.git_dir:
            return 404, message("Not Found"), None
        r = subprocess.run(["git", "-C", self.git_dir, "cat-file", "commit", sha],
                           capture_output=True)
        if r.returncode != 0:
            return 404, message("Not Found"), None
        head, _, msg = r.stdout.decode("utf-8", "replace").partition("\n\n")
        fields = [line.split(" ", 1) for line in head.split("\n") if " " in line]
        tree = [v for k, v in fields if k == "tree"][0]
        parents = [v for k, v in fields if k == "parent"]
        return 200, {
            "sha": sha, "node_id": node_id("C", int(sha[:8], 16)),
            "url": "%s%s" % (self.api_base, path),
            "message": msg,
            "tree": {"sha": tree, "url": "%s/repos/%s/git/trees/%s" % (
                self.api_base, self.repo, tree)},
            "parents": [{"sha": p, "url": "%s/repos/%s/git/commits/%s" % (
                self.api_base, self.repo, p)} for p in parents],
        }, None

    def compare(self, base, head):
        """GET /compare/BASE...HEAD: the merge base, from the git
        repository given with --git-dir (404 without one, as an API with no
        compare would answer)."""
        if not self.git_dir:
            return 404, message("Not Found"), None
        r = subprocess.run(["git", "-C", self.git_dir, "merge-base", base, head],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return 404, message("Not Found"), None
        sha = r.stdout.strip()
        return 200, {"status": "ahead", "merge_base_commit": {"sha": sha},
                     "base_commit": {"sha": sha}}, None

    @staticmethod
    def parse_json(body):
        if not body.strip():
            return True, {}
        try:
            return True, json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return False, (400, message("Problems parsing JSON"), None)

    def comment_body(self, body):
        ok, obj = self.parse_json(body)
        if not ok:
            return False, obj
        text = obj.get("body") if isinstance(obj, dict) else None
        if not isinstance(text, str) or not text:
            return False, invalid("IssueComment", "body", "missing_field")
        if len(text) > MAX_COMMENT:
            return False, invalid("IssueComment", "data", "unprocessable",
                                  "Body is too long (maximum is %d characters)"
                                  % MAX_COMMENT)
        return True, text

    def create_status(self, sha, body):
        ok, obj = self.parse_json(body)
        if not ok:
            return obj
        if not SHA_RE.match(sha):
            return invalid("Status", "sha", "custom",
                           "No commit found for SHA: %s" % sha)
        if not isinstance(obj, dict):
            return invalid("Status", "state", "missing_field")
        state = obj.get("state")
        if state not in STATUS_STATES:
            return invalid("Status", "state", "custom",
                           "state is not included in the list")
        fields = {}
        for key, default in (("target_url", None), ("description", None),
                             ("context", "default")):
            value = obj.get(key, default)
            if value is None:
                value = default
            if value is not None and not isinstance(value, str):
                return invalid("Status", key, "invalid")
            fields[key] = value
        if fields["description"] is not None and \
                len(fields["description"]) > MAX_DESCRIPTION:
            return invalid("Status", "description", "custom",
                           "description is too long (maximum is %d characters)"
                           % MAX_DESCRIPTION)
        s = {"id": STATUS_ID_BASE + self.next_status, "sha": sha.lower(),
             "state": state, "creator": self.login, "created": time.time()}
        s.update(fields)
        self.next_status += 1
        self.statuses.append(s)
        return 201, self.status_obj(s), None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None
    token = None

    def do_GET(self):
        self.handle_any()

    def do_POST(self):
        self.handle_any()

    def do_PATCH(self):
        self.handle_any()

    def do_PUT(self):
        self.handle_any()

    def do_DELETE(self):
        self.handle_any()

    def handle_expect_100(self):
        # A body declared too large is refused before the client sends it.
        self.refuse_body = self.declared_length() > MAX_BODY
        if self.refuse_body:
            return True
        return super().handle_expect_100()

    def declared_length(self):
        try:
            return int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return -1

    def read_body(self):
        """The request body, or None when it is over MAX_BODY."""
        if self.__dict__.pop("refuse_body", False):
            self.close_connection = True
            return None
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body, total = bytearray(), 0
            while True:
                line = self.rfile.readline(1024)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                total += size
                if total > MAX_DRAIN:
                    self.close_connection = True
                    return None
                chunk = self.rfile.read(size)
                if total <= MAX_BODY:
                    body += chunk
                self.rfile.readline(1024)
            return bytes(body) if total <= MAX_BODY else None
        length = self.declared_length()
        if length < 0:
            raise ValueError("bad Content-Length")
        if length > MAX_BODY:
            if length > MAX_DRAIN:
                self.close_connection = True
            else:
                while length > 0:
                    chunk = self.rfile.read(min(length, 65536))
                    if not chunk:
                        break
                    length -= len(chunk)
            return None
        return self.rfile.read(length) if length else b""

    def handle_any(self):
        arrived = time.time()
        url = urllib.parse.urlsplit(self.path)
        path = url.path
        pairs = urllib.parse.parse_qsl(url.query, keep_blank_values=True)
        query = {}
        for k, v in pairs:
            query.setdefault(k, v)
        try:
            body = self.read_body()
        except ValueError:
            self.close_connection = True
            self.send_json(400, message("Bad Request"))
            return
        if path == "/_fake" or path.startswith("/_fake/"):
            self.control(path, body)
        else:
            self.api(arrived, path, query, pairs, body)

    def auth_result(self):
        value = self.headers.get("Authorization")
        if value is None:
            return "missing"
        scheme, _, given = value.strip().partition(" ")
        if scheme.lower() in ("bearer", "token") and given.strip() == self.token:
            return "ok"
        return "wrong"

    def api(self, arrived, path, query, pairs, body):
        st = self.state
        auth = self.auth_result()
        if body is None:
            logged = None
        elif not body:
            logged = None
        else:
            try:
                logged = json.loads(body.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                logged = body.decode("utf-8", errors="replace")
        link, fault, applied = None, None, False
        with st.lock:
            if body is not None:
                fault = st.take_fault(self.command, path)
            if body is None:
                status, obj = 413, message("Payload Too Large")
            elif fault is not None and not fault["apply"]:
                status, obj = None, None
            elif auth != "ok":
                status, obj = 401, message("Bad credentials")
            else:
                status, obj, link = st.api(self.command, path, query, pairs, body)
            if fault is not None:
                applied = fault["apply"]
                status = fault["status"]
            st.remaining = max(st.remaining - 1, 0)
            headers = [("X-RateLimit-Limit", "5000"),
                       ("X-RateLimit-Remaining", str(st.remaining)),
                       ("X-RateLimit-Reset", str(int(time.time()) + 3600)),
                       ("X-RateLimit-Used", str(5000 - st.remaining)),
                       ("X-GitHub-Request-Id", str(st.next_request))]
            st.next_request += 1
            if link and fault is None:
                headers.append(("Link", link))
            st.record({"t": arrived, "method": self.command, "path": path,
                       "query": query, "auth": auth,
                       "user_agent": self.headers.get("User-Agent", ""),
                       "body": logged,
                       "status": None if fault and fault["drop"] else status,
                       "fault": fault is not None, "applied": applied})
        if fault is None:
            self.send_json(status, obj, headers)
            return
        if fault["delay"]:
            time.sleep(fault["delay"])
        if fault["drop"]:
            self.close_connection = True
            self.log_message('"%s" dropped by a fault rule', self.requestline)
            return
        if fault["body"] is not None:
            payload = fault["body"].encode("utf-8")
        else:
            payload = json.dumps(message(self.responses.get(
                status, ("Error",))[0])).encode()
        names = {k.lower() for k in fault["headers"]}
        headers = [(k, v) for k, v in headers if k.lower() not in names]
        if "content-type" not in names:
            headers.append(("Content-Type", fault["content_type"]))
        headers.extend(fault["headers"].items())
        self.send_raw(status, payload, headers)

    def control(self, path, body):
        st = self.state
        if body is None:
            self.send_json(413, message("Payload Too Large"))
            return
        method = self.command
        try:
            with st.lock:
                status, obj = self.control_locked(st, method, path, body)
        except BadInput as e:
            status, obj = 400, {"message": str(e)}
        self.send_json(status, obj)

    def control_locked(self, st, method, path, body):
        def parsed():
            try:
                return json.loads(body.decode("utf-8")) if body.strip() else None
            except (UnicodeDecodeError, ValueError):
                raise BadInput("the body is not JSON")

        if path == "/_fake/state" and method == "GET":
            return 200, st.state_obj()
        if path == "/_fake/requests" and method == "GET":
            return 200, st.requests
        if path == "/_fake/reset-requests" and method == "POST":
            st.requests = []
            return 200, st.requests
        if path == "/_fake/pulls" and method == "POST":
            return 200, st.upsert_pulls(parsed())
        if path == "/_fake/faults":
            if method == "POST":
                return 200, st.add_faults(parsed())
            if method == "GET":
                return 200, st.faults_obj()
            if method == "DELETE":
                st.faults = []
                return 200, []
        if path == "/_fake/comments" and method == "POST":
            obj = parsed()
            if not isinstance(obj, dict):
                raise BadInput("expected {\"pr\", \"author\", \"body\"}")
            pr, author, text = obj.get("pr", obj.get("issue")), obj.get("author"), \
                obj.get("body")
            assoc = obj.get("author_association", "NONE")
            if not isinstance(author, str) or not isinstance(text, str) \
                    or not isinstance(assoc, str):
                raise BadInput("author, body and author_association must be strings")
            if pr not in st.pulls and pr not in st.issues:
                return 404, {"message": "no pull request or issue %r" % (pr,)}
            return 201, st.comment_obj(st.add_comment(pr, author, text, assoc), True)
        m = re.match(r"^/_fake/comments/(\d+)$", path)
        if m and method == "DELETE":
            if st.comments.pop(int(m.group(1)), None) is None:
                return 404, {"message": "no such comment"}
            return 204, None
        m = re.match(r"^/_fake/pulls/(\d+)$", path)
        if m and method == "DELETE":
            n = int(m.group(1))
            if st.pulls.pop(n, None) is None:
                return 404, {"message": "no such pull request"}
            for cid in [i for i, c in st.comments.items() if c["pr"] == n]:
                del st.comments[cid]
            return 204, None
        return 404, {"message": "no such control endpoint"}

    def send_json(self, status, obj, headers=()):
        payload = b"" if obj is None else json.dumps(obj).encode()
        self.send_raw(status, payload,
                      list(headers) + [("Content-Type", JSON_TYPE)])

    def send_raw(self, status, payload, headers):
        self.send_response(status)
        no_body = status == 204 or status == 304 or status < 200
        for name, value in headers:
            if name.lower() in ("content-length", "connection"):
                continue
            if no_body and name.lower() == "content-type":
                continue
            self.send_header(name, value)
        if not no_body:
            self.send_header("Content-Length", str(len(payload)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if not no_body:
            self.wfile.write(payload)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True, help="OWNER/NAME")
    ap.add_argument("--token", required=True)
    ap.add_argument("--log", required=True, help="JSON lines, one per API request")
    ap.add_argument("--login", default="perfd-bot",
                    help="the token's user, author of comments and statuses")
    ap.add_argument("--max-seconds", type=int, default=600)
    ap.add_argument("--git-dir", help="a repository whose merge bases GET /compare answers")
    args = ap.parse_args()
    if not re.match(r"^[^/\s]+/[^/\s]+$", args.repo):
        ap.error("--repo must be OWNER/NAME")

    exit_on_signals(args.max_seconds)
    Handler.state = State(args.repo, args.login, args.log)
    Handler.state.git_dir = args.git_dir
    Handler.token = args.token
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    Handler.state.port = server.server_address[1]
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
