#!/bin/bash
# Pull-request comments, commit statuses and the trust rule, against a local
# server on loopback that answers GitHub's REST endpoints with their
# documented JSON and records every request (tests/fake-github.py): the
# agent's first update creates one comment and the next edits it; a head
# that moves is described alone; an author off the allow list is not built
# until a listed maintainer's "/perfd run"; rate limits are waited out, 502s
# retried, a create answered 502 after it was done does not make a second
# comment; a deleted comment is made again once; a refused token, a reply
# that is not JSON and a deleted pull request are said clearly; a head
# whose build is its base's (an A/A) is never posted as a change; the token
# is never written anywhere.
. "$(dirname "$0")/lib.sh"
need git cc curl
GOLDEN="python3 $TESTS_DIR/fixtures/comment-golden.py"
TOKEN=ghp_perfdTestToken0123456789abcdef
HUB=http://hub.example:8080
CONTEXT="perfd/$(uname -n)"

# ---- a repository with pull heads ----
new_src
write_prog() { work_prog "$SRC/prog.c" "$1" 7; }
# The contract runner prints its whole environment into the stored output:
# the token must not be in it.
cat >"$SRC/check.sh" <<'SH'
#!/bin/sh
env
echo "RESULT contract on \"cpu\": passed=1 total=1"
SH
chmod +x "$SRC/check.sh"
write_prog 8000000
git -C "$SRC" add -A && git -C "$SRC" commit -qm "base"
C1=$(git -C "$SRC" rev-parse HEAD)
commit_on() { # BRANCH ROUNDS SUBJECT: a commit on BRANCH (made from main)
	git -C "$SRC" checkout -q -B "$1" main
	write_prog "$2"
	git -C "$SRC" commit -qam "$3"
	git -C "$SRC" rev-parse HEAD
}
C2=$(commit_on alice-1 4000000 "half the rounds")
C3=$(commit_on mallory-1 8000001 "one more round")
git -C "$SRC" checkout -q main
git -C "$SRC" update-ref refs/pull/5/head "$C2"
git -C "$SRC" update-ref refs/pull/6/head "$C3"

# ---- the server ----
fake_github "$TOKEN" --max-seconds 600
state() { ctl GET state >"$T/state.json"; js "$T/state.json" "$1"; }
requests() { ctl GET requests >"$T/req.json"; js "$T/req.json" "$1"; }
pull() { # NUMBER AUTHOR SHA
	ctl POST pulls "[{\"number\": $1, \"author\": \"$2\", \"head_sha\": \"$3\", \"head_ref\": \"b$1\", \"base_ref\": \"main\", \"base_sha\": \"$C1\"}]" >/dev/null
}
push() { # PR AUTHOR BRANCH ROUNDS SUBJECT: a new head for the pull request,
	# in git and on the server; prints its commit
	local c
	c=$(commit_on "$3" "$4" "$5")
	git -C "$SRC" checkout -q main
	git -C "$SRC" update-ref "refs/pull/$1/head" "$c"
	pull "$1" "$2" "$c"
	echo "$c"
}
say() { # PR AUTHOR BODY: a person's comment
	ctl POST comments "$(python3 -c 'import json, sys; print(json.dumps({"pr": int(sys.argv[1]), "author": sys.argv[2], "body": sys.argv[3]}))' "$@")" >/dev/null ||
		echo "  the server refused the comment: $*"
}
fault() { ctl POST faults "$1" >/dev/null; }
check "the server is up" test -n "$PORT"
pull 5 alice "$C2"
pull 6 mallory "$C3"

printf '%s\n' "$TOKEN" >token
chmod 600 token
cat >agent.conf <<CONF
$(agent_repo pulls=true)

$(github_conf allow="alice Bob" max_wait_s=5)

$(work_suite)
CONF
check "--check accepts [github]" run 0 "$PERFD" agent --config agent.conf --check
check "  and sends nothing" eq 0 "$(requests "len(d)")"
sed "s|^token_file = .*|token_file = $T/no-token|" agent.conf >missing-token.conf
check "--check reads the token file" run 2 "$PERFD" agent --config missing-token.conf --check
check "  naming it" has err "token file '$T/no-token': No such file or directory"

# ---- the first update creates one comment ----
check "agent --once" run 0 "$PERFD" agent --config agent.conf --once
cp err agent1.err
check "its summary names the pull request left waiting" has out "pull/6 at ${C3:0:12} by mallory: waiting for a maintainer's /perfd run"
check "alice's pull request is built and compared" eq done "$(sql "select state from jobs where head = 'pull/5' and commit_oid = '$C2'")"
check "mallory's is not built" eq 0 "$(sql "select count(*) from jobs where head = 'pull/6'")"
check "  nor its head recorded as seen" eq 0 "$(sql "select count(*) from heads where name = 'pull/6'")"
check "one comment on pull request 5" eq 1 "$(state "len([c for c in d['comments'] if c['pr'] == 5])")"
check "  by the token's login" eq perfd-bot "$(state "[c for c in d['comments'] if c['pr'] == 5][0]['user']['login']")"
posted 5 >posted1.md
check "  its body is the comment derived from the stored rows" diff -u <($GOLDEN "$DB" "$C2" "$HUB") posted1.md
check "  which names the head" has posted1.md "### perfd: \`$C2\`"
check "none on pull request 6" eq 0 "$(state "len([c for c in d['comments'] if c['pr'] == 6])")"
verdict=$(sql "select c.verdict from comparisons c join jobs j on j.id = c.job_id where j.commit_oid = '$C2'")
want_state=success; [ "$verdict" = slower ] && want_state=failure
check "pull 5's head has its status ($verdict)" eq "$want_state" "$(state "[s['state'] for s in d['statuses'] if s['sha'] == '$C2' and s['context'] == '$CONTEXT'][-1]")"
check "  linking to the hub's page of its job" eq "$HUB/static/head.html?job=$(sql "select id from jobs where head = 'pull/5' and commit_oid = '$C2'")" "$(state "[s['target_url'] for s in d['statuses'] if s['sha'] == '$C2' and s['context'] == '$CONTEXT'][-1]")"
check "pull 6's head is pending, waiting for a maintainer" eq "pending waiting for a maintainer's /perfd run" "$(state "' '.join([s['state'] + ' ' + s['description'] for s in d['statuses'] if s['sha'] == '$C3'][:1])")"
check "the agent said so" has agent1.err "status $CONTEXT of ${C3:0:12}: pending, 'waiting for a maintainer's /perfd run'"
check "every request carried the token" eq "[]" "$(requests "[r['path'] for r in d if r['auth'] != 'ok']")"
check "and a User-Agent" eq "[]" "$(requests "[r['path'] for r in d if not r['user_agent'].startswith('perfd/')]")"
POSTS="len([r for r in d if r['method'] == 'POST' and r['path'] == '/repos/acme/engine/issues/5/comments'])"
PATCHES="len([r for r in d if r['method'] == 'PATCH'])"
check "one POST of a comment" eq 1 "$(requests "$POSTS")"

# Nothing new: nothing is sent.
ctl POST reset-requests >/dev/null
check "agent --once again" run 0 "$PERFD" agent --config agent.conf --once
check "  sends no comment and no status" eq "[]" "$(requests "[r['method'] + ' ' + r['path'] for r in d if r['method'] != 'GET']")"

# ---- the head moves: the second update edits the comment ----
C4=$(push 5 alice alice-2 2000000 "a quarter of the rounds")
check "agent --once on the moved head" run 0 "$PERFD" agent --config agent.conf --once
check "still one comment on pull request 5" eq 1 "$(state "len([c for c in d['comments'] if c['pr'] == 5])")"
# Edited twice: when the new head is queued (its results not in yet, so the
# old head's table goes) and when they are in.
check "  edited, not posted again" eq "0 2" "$(requests "$POSTS") $(requests "$PATCHES")"
posted 5 >posted2.md
check "  it describes the new head" diff -u <($GOLDEN "$DB" "$C4" "$HUB") posted2.md
check "  and never the old one" eq 0 "$(grep -c "$C2" posted2.md)"

# A head that moved while its results were coming in: the job of C4 is
# done, but the pull request is at C5 by now. The comment names C5 and
# holds nothing of C4.
C5=$(commit_on alice-3 3000000 "three eighths")
git -C "$SRC" checkout -q main
pull 5 alice "$C5"
check "perfd comment for the pull request's head as the API gives it" run 0 "$PERFD" comment --pr 5 --config agent.conf
check "  says it edited the comment" has out "pull request 5, head $C5: comment edited"
posted 5 >posted3.md
check "  which names the new head, with nothing done yet" has posted3.md "Head commit \`$C5\`: no comparison of it is done yet."
check "  and nothing of the old head" eq 0 "$(grep -c "$C4" posted3.md)"
check "a commit other than the head is refused" run 2 "$PERFD" comment --pr 5 --config agent.conf --commit "$C4"
check "  naming the head" has err "pull request 5's head is $C5, not $C4"
git -C "$SRC" update-ref refs/pull/5/head "$C5"

# ---- trust: /perfd run ----
say 6 mallory "/perfd run"
say 6 carol "/perfd run"
check "agent --once after a non-listed user's /perfd run" run 0 "$PERFD" agent --config agent.conf --once
check "  mallory's pull request is still not built" eq 0 "$(sql "select count(*) from jobs where head = 'pull/6'")"
say 6 bob "Looks fine.
/perfd run"
check "  (that comment is there)" eq 1 "$(state "len([c for c in d['comments'] if c['pr'] == 6 and c['body'].startswith('Looks fine.\\n/perfd run')])")"
check "agent --once after a command not on the first line" run 0 "$PERFD" agent --config agent.conf --once
check "  still not built" eq 0 "$(sql "select count(*) from jobs where head = 'pull/6'")"
say 6 bob "/perfd run"
check "agent --once after a listed maintainer's /perfd run (any case)" run 0 "$PERFD" agent --config agent.conf --once
check "  it is built" eq done "$(sql "select state from jobs where head = 'pull/6' and commit_oid = '$C3'")"
check "  the approval is stored, with who gave it" eq bob "$(sql "select approver from pull_approvals where pr = 6 and commit_oid = '$C3'")"
check "  the agent said who approved" has err "pull request 6 at ${C3:0:12}: approved by bob"
check "  and its comment is posted" eq 1 "$(state "len([c for c in d['comments'] if c['pr'] == 6 and c['user']['login'] == 'perfd-bot'])")"
C6=$(push 6 mallory mallory-2 8000002 "and another")
check "agent --once after mallory pushes again" run 0 "$PERFD" agent --config agent.conf --once
check "  the approval was for the old head: the new one waits" eq 0 "$(sql "select count(*) from jobs where head = 'pull/6' and commit_oid = '$C6'")"
posted 6 >posted6.md
check "  the comment now names the waiting head" has posted6.md "Head commit \`$C6\`: no comparison of it is done yet."
check "  and holds nothing of the old one" eq 0 "$(grep -c "$C3" posted6.md)"
say 6 bob "/perfd run ${C3:0:10}"
check "agent --once after an approval naming the old head" run 0 "$PERFD" agent --config agent.conf --once
check "  still waits" eq 0 "$(sql "select count(*) from jobs where head = 'pull/6' and commit_oid = '$C6'")"
say 6 alice "/perfd run ${C6:0:7}"
check "agent --once after an approval naming the new head" run 0 "$PERFD" agent --config agent.conf --once
check "  it is built" eq done "$(sql "select state from jobs where head = 'pull/6' and commit_oid = '$C6'")"
# A bare "/perfd run" made before a push that perfd sees after it: the
# maintainer may have meant the head before, so the pushed one waits.
say 6 bob "/perfd run"
sleep 1.2
C7=$(push 6 mallory mallory-3 8000003 "pushed after the review")
check "agent --once after a push that follows a bare /perfd run" run 0 "$PERFD" agent --config agent.conf --once
check "  the pushed head waits" eq 0 "$(sql "select count(*) from jobs where head = 'pull/6' and commit_oid = '$C7'")"
sleep 1
say 6 bob "/perfd run"
check "agent --once after a bare /perfd run made after perfd saw the head" run 0 "$PERFD" agent --config agent.conf --once
check "  it is built" eq done "$(sql "select state from jobs where head = 'pull/6' and commit_oid = '$C7'")"

# ---- rate limits, 5xx, a create whose reply was lost ----
ctl POST reset-requests >/dev/null
fault '[{"method": "PATCH", "path": "/issues/comments/", "status": 403, "headers": {"Retry-After": "1"}, "body": "{\"message\": \"You have exceeded a secondary rate limit.\"}"}]'
check "a 403 with Retry-After is waited out" run 0 "$PERFD" comment --pr 6 --config agent.conf --hub http://hub2.example
check "  (edited)" has out "comment edited"
check "  the second PATCH came a second or more after the first" eq true "$(requests "[r['t'] for r in d if r['method'] == 'PATCH'][1] - [r['t'] for r in d if r['method'] == 'PATCH'][0] >= 1.0")"
ctl POST reset-requests >/dev/null
reset=$(( $(date +%s) + 2 ))
fault '[{"method": "PATCH", "path": "/issues/comments/", "status": 403, "headers": {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "'$reset'"}, "body": "{\"message\": \"API rate limit exceeded\"}"}]'
check "a 403 with X-RateLimit-Remaining: 0 waits for X-RateLimit-Reset" run 0 "$PERFD" comment --pr 6 --config agent.conf --hub http://hub2a.example
check "  the second PATCH came after the reset" eq true "$(requests "[r['t'] for r in d if r['method'] == 'PATCH'][1] >= $reset")"
# A reply that succeeds but says the quota is spent: the next request waits
# for the reset rather than be refused.
ctl POST reset-requests >/dev/null
reset=$(( $(date +%s) + 2 ))
curl -sf -H "Authorization: Bearer $TOKEN" "$API/repos/acme/engine/pulls/6" >pull6.json
fault "$(python3 -c 'import json, sys; print(json.dumps([{"method": "GET", "path": "/pulls/6$", "status": 200, "body": open(sys.argv[1]).read(), "headers": {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": sys.argv[2]}}]))' pull6.json "$reset")"
check "a spent quota delays the next request" run 0 "$PERFD" comment --pr 6 --config agent.conf --hub http://hub2b.example
check "  until the reset" eq true "$(requests "[r['t'] for r in d if r['method'] == 'PATCH'][0] >= $reset")"
ctl POST reset-requests >/dev/null
fault '[{"method": "PATCH", "path": "/issues/comments/", "status": 502, "body": "<html>Bad gateway</html>", "content_type": "text/html"}]'
check "a 502 is retried" run 0 "$PERFD" comment --pr 6 --config agent.conf --hub http://hub3.example
check "  two PATCHes" eq 2 "$(requests "$PATCHES")"
ctl POST reset-requests >/dev/null
fault '[{"method": "GET", "path": "/pulls/6$", "status": 429, "headers": {"Retry-After": "3600"}}]'
check "a rate limit longer than max_wait_s is not waited for" run 2 "$PERFD" comment --pr 6 --config agent.conf --hub http://hub4.example
check "  saying so" has err "rate limited (429"
check "  and how long it was asked to wait" has err "asked to wait 3600 s; perfd waits at most 5 s"
fault '[{"method": "GET", "path": "/pulls/6$", "status": 403, "body": "{\"message\": \"You have exceeded a secondary rate limit.\"}"}]'
check "a 403 naming a rate limit, with no time, asks for a minute" run 2 "$PERFD" comment --pr 6 --config agent.conf --hub http://hub4.example
check "  (over max_wait_s here: said, not waited)" has err "asked to wait 60 s; perfd waits at most 5 s"
fault '[{"method": "GET", "path": "/pulls/6$", "status": 403, "body": "{\"message\": \"Resource not accessible by integration\"}"}]'
check "a 403 that is no rate limit fails at once" run 2 "$PERFD" comment --pr 6 --config agent.conf --hub http://hub4.example
check "  naming a permission" has err "forbidden (403: Resource not accessible by integration); the token may lack a permission"
ctl POST reset-requests >/dev/null
fault '[{"method": "GET", "path": "/pulls/6$", "status": 502, "times": 10}]'
check "a 502 that lasts fails after the retries" run 2 "$PERFD" comment --pr 6 --config agent.conf --hub http://hub4.example
check "  saying so" has err "after 4 tries"
check "  four tries, no more" eq 4 "$(requests "len(d)")"
ctl DELETE faults >/dev/null

# perfd's comment on 6 is deleted by someone: made again, once, and a create
# answered 502 after it was carried out is found, not sent again.
cid=$(state "[c['id'] for c in d['comments'] if c['pr'] == 6 and c['user']['login'] == 'perfd-bot'][0]")
ctl DELETE "comments/$cid" >/dev/null
ctl POST reset-requests >/dev/null
fault '[{"method": "POST", "path": "/issues/6/comments$", "status": 502, "apply": true}]'
check "a deleted comment is made again" run 0 "$PERFD" comment --pr 6 --config agent.conf --hub http://hub5.example
check "  (said)" has out "comment made again"
check "  one POST, answered 502 after it was done" eq 1 "$(requests "len([r for r in d if r['method'] == 'POST'])")"
check "  one comment by perfd, not two" eq 1 "$(state "len([c for c in d['comments'] if c['pr'] == 6 and c['user']['login'] == 'perfd-bot'])")"
check "  its id remembered" eq "$(state "[c['id'] for c in d['comments'] if c['pr'] == 6 and c['user']['login'] == 'perfd-bot'][0]")" "$(sql "select comment_id from pull_comments where pr = 6")"
cid=$(state "[c['id'] for c in d['comments'] if c['pr'] == 6 and c['user']['login'] == 'perfd-bot'][0]")
ctl DELETE "comments/$cid" >/dev/null
check "deleted again: perfd stays off" run 0 "$PERFD" comment --pr 6 --config agent.conf --hub http://hub6.example
check "  (said)" has out "deleted twice: perfd stays off this pull request"
check "  no comment by perfd" eq 0 "$(state "len([c for c in d['comments'] if c['pr'] == 6 and c['user']['login'] == 'perfd-bot'])")"

# A create whose connection drops before any answer, not carried out: looked
# for, not found, sent again.
cid=$(state "[c['id'] for c in d['comments'] if c['pr'] == 5 and c['user']['login'] == 'perfd-bot'][0]")
ctl DELETE "comments/$cid" >/dev/null
ctl POST reset-requests >/dev/null
fault '[{"method": "POST", "path": "/issues/5/comments$", "drop": true}]'
check "a create dropped unanswered is sent again" run 0 "$PERFD" comment --pr 5 --config agent.conf --hub http://hub7.example
check "  two POSTs" eq 2 "$(requests "len([r for r in d if r['method'] == 'POST'])")"
check "  one comment by perfd" eq 1 "$(state "len([c for c in d['comments'] if c['pr'] == 5 and c['user']['login'] == 'perfd-bot'])")"

# A database that lost the comment's row finds the comment by its marker
# among the token's own comments, on the second page of 100, and edits it;
# a copy of the marker by someone else is left alone.
python3 -c 'import json, sys, urllib.request
for i in range(120):
	urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/_fake/comments", json.dumps({"pr": 5, "author": "carol", "body": "comment %d" % i}).encode(), {"Content-Type": "application/json"}))' "$API"
say 5 mallory "<!-- perfd:comment -->
not perfd's"
sql "delete from pull_comments where pr = 5"
ctl POST reset-requests >/dev/null
check "a lost row: the comment is found by its marker" run 0 "$PERFD" comment --pr 5 --config agent.conf --hub http://hub8.example
check "  and edited" has out "comment edited"
check "  the comments were read to their second page" eq 2 "$(requests "max([int(r['query'].get('page', 1)) for r in d if r['path'].endswith('/issues/5/comments')])")"
check "  no POST" eq 0 "$(requests "len([r for r in d if r['method'] == 'POST'])")"
check "  the PATCH went to perfd's own comment" eq "$(state "[c['id'] for c in d['comments'] if c['pr'] == 5 and c['user']['login'] == 'perfd-bot'][0]")" "$(requests "[r['path'].rsplit('/', 1)[1] for r in d if r['method'] == 'PATCH'][0]")"
check "  mallory's copy is as it was" eq "not perfd's" "$(state "[c['body'] for c in d['comments'] if c['user']['login'] == 'mallory' and c['pr'] == 5][0].splitlines()[1]")"

# A GitHub App's installation token may not ask GET /user (403): the agent
# goes on; with [github] login set it asks nothing and finds its comment by
# that login. A login longer than any fails no list.
fault '[{"method": "GET", "path": "^/repos/acme/engine/user$|^/user$", "status": 403, "times": 1, "body": "{\"message\": \"Resource not accessible by integration\"}"}]'
check "a token that may not ask its login does not stop the agent" run 0 "$PERFD" agent --config agent.conf --once
check "  (said)" has err "GET /user: forbidden (403: Resource not accessible by integration)"
ctl DELETE faults >/dev/null
sed 's/^allow = alice Bob$/allow = alice Bob\nlogin = perfd-bot/' agent.conf >app.conf
say 5 "$(printf 'u%.0s' $(seq 80))" "a comment by a login longer than any"
sql "delete from pull_comments where pr = 5"
ctl POST reset-requests >/dev/null
check "with login set" run 0 "$PERFD" comment --pr 5 --config app.conf --hub http://hub9.example
check "  GET /user is not asked" eq 0 "$(requests "len([r for r in d if r['path'] == '/user'])")"
check "  the comment is found by that login and edited" has out "comment edited"
check "  no POST" eq 0 "$(requests "len([r for r in d if r['method'] == 'POST'])")"

# An agent with a database of its own keeps a comment of its own, by its
# comment_key, and never edits the other's.
cp "$DB" "$T/other.db"
sed -e "s|^database = .*|database = $T/other.db|" -e 's/^allow = alice Bob$/allow = alice Bob\ncomment_key = gfx1201/' agent.conf >keyed.conf
unkeyed=$(posted 5 | sha256sum)
check "a keyed comment" run 0 "$PERFD" comment --pr 5 --config keyed.conf
check "  is made beside the other" has out "comment created"
check "  two comments by perfd now" eq 2 "$(state "len([c for c in d['comments'] if c['pr'] == 5 and c['user']['login'] == 'perfd-bot'])")"
check "  the new one starts with its key's marker" eq 1 "$(state "len([c for c in d['comments'] if c['pr'] == 5 and c['body'].startswith('<!-- perfd:comment gfx1201 -->\\n')])")"
check "edited again by its key" run 0 "$PERFD" comment --pr 5 --config keyed.conf --hub http://hub10.example
check "  (edited)" has out "comment edited"
check "  the unkeyed comment is as it was" eq "$unkeyed" "$(posted 5 | sha256sum)"

# ---- bad replies and bad tokens ----
fault '[{"method": "GET", "path": "/pulls/5$", "status": 200, "body": "<html>a proxy page</html>", "content_type": "text/html"}]'
check "a reply that is not JSON fails" run 2 "$PERFD" comment --pr 5 --config agent.conf --dry-run
check "  saying so" has err "the reply is not JSON (text/html"
fault '[{"method": "GET", "path": "/pulls/5$", "status": 200, "body": "{\"number\": 5, \"head\": {}}"}]'
check "JSON of another shape fails" run 2 "$PERFD" comment --pr 5 --config agent.conf --dry-run
check "  naming the field" has err "head.ref is missing or not a string"
fault '[{"method": "GET", "path": "/pulls/5$", "status": 200, "body": "'"$(printf 'x%.0s' $(seq 1024))"'", "repeat": 9216}]'
check "a reply over 8 MiB fails" run 2 "$PERFD" comment --pr 5 --config agent.conf --dry-run
check "  saying so" has err "GET /repos/acme/engine/pulls/5: the reply is over 8 MiB"
fault '[{"method": "GET", "path": "/pulls/5$", "status": 301, "headers": {"Location": "http://elsewhere.example/repos/acme/engine/pulls/5"}}]'
check "a redirect is not followed" run 2 "$PERFD" comment --pr 5 --config agent.conf --dry-run
check "  saying so" has err "answered 301 (a redirect); perfd does not follow it"
ctl POST reset-requests >/dev/null
# The next page named by another host name (the same server here, so that
# a request sent there would be seen): not asked, the token stays home.
fault '[{"method": "GET", "path": "/pulls$", "status": 200, "body": "[]", "headers": {"Link": "<http://localhost:'"$PORT"'/repos/acme/engine/pulls?page=2>; rel=\"next\""}}]'
check "a list whose next page is under another URL" run 0 "$PERFD" agent --config agent.conf --once
check "  is refused, and pull heads wait" has err "a list's next page is not under the API URL $API"
check "  the next page is not asked for" eq 1 "$(requests "len([r for r in d if r['path'] == '/repos/acme/engine/pulls'])")"
# A list longer than 30 pages of 100 is not read to its end.
pull 9 alice "$C1"
python3 -c 'import json, sys, urllib.request
for i in range(3001):
	urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/_fake/comments", json.dumps({"pr": 9, "author": "carol", "body": "c%d" % i}).encode(), {"Content-Type": "application/json"}))' "$API"
ctl POST reset-requests >/dev/null
check "a list of more than 30 pages fails" run 2 "$PERFD" comment --pr 9 --config agent.conf
check "  saying so" has err "/issues/9/comments?per_page=100&page=31: more than 30 pages"
check "  after 30 requests" eq 30 "$(requests "len([r for r in d if r['path'].endswith('/issues/9/comments')])")"
ctl DELETE pulls/5 >/dev/null
check "a deleted pull request fails" run 2 "$PERFD" comment --pr 5 --config agent.conf
check "  saying so" has err "not found (404"

printf 'ghp_expired\n' >token
ctl POST reset-requests >/dev/null
check "a refused token stops the agent" run 2 "$PERFD" agent --config agent.conf --once
check "  saying so" has err "the token was refused (401: Bad credentials)"
check "  after one request, not retried" eq 1 "$(requests "len(d)")"
check "a refused token fails perfd comment" run 2 "$PERFD" comment --pr 6 --config agent.conf --dry-run
printf 'ghp with blank\n' >token
check "a token file with a blank is refused" run 2 "$PERFD" comment --pr 6 --config agent.conf --dry-run
check "  naming the byte, not the token" has err "byte 4 is a blank"
check "  (the token is not in the message)" eq 0 "$(grep -c 'ghp with' err)"
chmod 644 token
printf '%s\n' "$TOKEN" >token
check "a token file others may read is refused" run 2 "$PERFD" comment --pr 6 --config agent.conf --dry-run
check "  naming the file, its mode and the fix" has err "[github] token file '$T/token' is mode 0644: others than its owner can read it; refused: chmod 600 '$T/token'"
check "  by agent --check too" run 2 "$PERFD" agent --config agent.conf --check
check "  saying so" has err "[github] token file '$T/token' is mode 0644"
chmod 640 token
check "  and readable by its group" run 2 "$PERFD" agent --config agent.conf --check
check "  saying so" has err "is mode 0640"
chmod 600 token
printf '[github]\nrepo = acme\ntoken_file = %s\ncolour = blue\ncomment_key = a/b\nlogin = two words\napi = http://github.example.org/api/v3\n[repo]\nurl = x\npulls = true\n' "$T/token" >bad.conf
check "a bad [github] section is refused" run 2 "$PERFD" agent --config bad.conf --check
check "  the repository" has err "bad.conf:2: 'repo': expected OWNER/NAME, not 'acme'"
check "  the unknown key" has err "bad.conf:4: unknown key 'colour' in [github]"
check "  the missing allow list" has err "[github] needs 'allow' with 'pulls = true'"
check "  the comment key" has err "bad.conf:5: 'comment_key': expected a name of 1 to 63 letters, digits, '.', '_' or '-', not 'a/b'"
check "  the login" has err "bad.conf:6: 'login': expected a GitHub login, not 'two words'"
check "  plain HTTP to another host" has err "bad.conf:7: 'api': 'http://github.example.org/api/v3' is plain HTTP to a host other than this one"

# ---- a private repository, fetched with the token ----
mkdir -p "$T/srv"
git clone -q --mirror "$SRC" "$T/srv/src.git"
exec 4< <(exec python3 "$TESTS_DIR/git-http-server.py" --root "$T/srv" \
	--auth "x-access-token:$TOKEN" --max-seconds 300 2>"$T/git-http.err")
read -r GPORT <&4
sed -e "s|^url = .*|url = http://127.0.0.1:$GPORT/src.git|" -e "s|^database = .*|database = $T/private.db|" \
	-e "s|^workdir = .*|workdir = $T/private-work|" -e "s|^pulls = true|pulls = false|" \
	-e "s|^allow = .*||" agent.conf >private.conf
check "a private repository without fetch_token" run 0 "$PERFD" agent --config private.conf --once
check "  cannot be fetched, and says why" has err "wants credentials"
check "  nothing is built" eq 0 "$(sqlite3 "$T/private.db" "select count(*) from jobs")"
sed 's/^repo = acme\/engine$/repo = acme\/engine\nfetch_token = true/' private.conf >private-token.conf
check "with fetch_token = true" run 0 "$PERFD" agent --config private-token.conf --once
check "  main is fetched and built" eq done "$(sqlite3 "$T/private.db" "select state from jobs where head = 'main'")"
# A token the git server refuses (with login set, the API is not asked).
printf 'ghp_wrong\n' >wrong-token
chmod 600 wrong-token
sed -e "s|^token_file = .*|token_file = $T/wrong-token\nlogin = perfd-bot|" private-token.conf >private-wrong.conf
check "a refused token" run 0 "$PERFD" agent --config private-wrong.conf --once
check "  fails the fetch once, saying so" has err "the credentials given were refused"
printf '[agent]\n[repo]\nurl = file:///x\nbranches = main\n[github]\nrepo = a/b\ntoken_file = %s\nfetch_token = true\n' "$T/token" >local-token.conf
check "fetch_token with a file:// url is refused" run 2 "$PERFD" agent --config local-token.conf --check
check "  naming it" has err "'fetch_token' is for an http(s) [repo] url, not 'file:///x'"
check "the token is not in the git server's log" eq 0 "$(grep -c "$TOKEN" "$T/git-http.err")"

# ---- a stop during a request: SIGTERM does not wait out the request ----
# Held 20 s, and the stop's bound 3 s: both scaled (PERFD_TEST_SLOW).
fault "[{\"method\": \"GET\", \"path\": \"/pulls\$\", \"status\": 200, \"delay\": $(slow_s 20), \"times\": 5}]"
faulted=$(grep -c '"fault": true' "$T/gh.log")
"$PERFD" agent --config agent.conf >stop.out 2>stop.err &
p=$!
held() { [ "$(grep -c '"fault": true' "$T/gh.log")" -gt "$faulted" ]; }
check "  the agent's request is held" wait_for "the agent's held request" 10 held
t0=$(date +%s.%N)
kill -TERM "$p"
wait "$p"
rc=$?
t=$(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)")
check "SIGTERM during a delayed request: exit 0 (got $rc)" eq 0 "$rc"
check "  within $(slow_s 3) s, not the $(slow_s 20) s delay (took ${t} s)" python3 -c "import sys; sys.exit(not $t < $(slow_s 3))"
ctl DELETE faults >/dev/null

# ---- an A/A: a head whose build is its base's, byte for byte ----
# Its comparison is no change: the status counts it apart, and the comment
# never calls it faster or slower.
git -C "$SRC" checkout -q -B alice-aa main
git -C "$SRC" commit -q --allow-empty -m "nothing to measure"
CAA=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" checkout -q main
git -C "$SRC" update-ref refs/pull/21/head "$CAA"
pull 21 alice "$CAA"
check "agent --once on a head that changes no artifact" run 0 "$PERFD" agent --config agent.conf --once
check "  its comparison is an A/A" eq aa "$(sql "select c.kind from comparisons c join jobs j on j.id = c.job_id where j.commit_oid = '$CAA'")"
check "  its status: success, the A/A counted apart" eq "success 1 A/A (the same build: not a change)" "$(state "[s['state'] + ' ' + s['description'] for s in d['statuses'] if s['sha'] == '$CAA' and s['context'] == '$CONTEXT'][-1]")"
posted 21 >posted21.md
check "  its comment is the one derived from the stored rows" diff -u <($GOLDEN "$DB" "$CAA" "$HUB") posted21.md
check "  which says A/A" has posted21.md "[A/A: "
check "  and never faster or slower" eq 0 "$(grep -ciE 'faster|slower' posted21.md)"

# ---- the token is written nowhere ----
check "not in the database" eq 0 "$(grep -c "$TOKEN" "$DB")"
check "not in the request log" eq 0 "$(grep -c "$TOKEN" "$T/gh.log")"
check "not in the agent's messages" eq 0 "$(cat agent1.err err | grep -c "$TOKEN")"
check "not in the builds' directories" eq 0 "$(grep -rl "$TOKEN" "$T/work" | wc -l)"
check "not in a runner's environment" eq 0 "$(sql "select count(*) from runner_results where instr(output, '$TOKEN') > 0")"
check "  (whose environment is stored)" test "$(sql "select count(*) from runner_results where instr(output, 'PATH=') > 0")" -gt 0
finish
