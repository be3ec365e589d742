#!/usr/bin/env python3
"""What another version of the rule says of comparisons already stored.

    rule-replay.py PERFD DB CASE KIND RULE

Copies DB (SQLite's backup, so a database still being written is read
whole), names RULE as the rule of CASE's done comparisons of KIND (aa or
compare) in the copy, and runs `PERFD verify` on it: verify applies the
named rule to the stored rows again and reports every stage whose verdict
it recomputes otherwise. A comparison's verdict under RULE is the first
stage, in order, that is not unresolved, over the stages that ran (a rule
that would have gone on past the last stored stage has no rows to go on
with, and counts as unresolved there). Prints one line: the counts of
each verdict and the comparisons that said faster or slower. DB itself is
not changed.

docs/performance.md reads "2.1 on the same rows" so: pairs-median/2.1
against the processes bench/power.sh ran under pairs-median/2.2.
"""
import collections
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) != 6:
        sys.exit("usage: rule-replay.py PERFD DB CASE KIND RULE")
    perfd, db, case, kind, rule = sys.argv[1:]
    tmp = tempfile.mkdtemp(prefix="rule-replay.")
    try:
        copy = os.path.join(tmp, "replay.db")
        src = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        dst = sqlite3.connect(copy)
        src.backup(dst)
        src.close()
        dst.execute("UPDATE comparisons SET rule = ? WHERE case_name = ? AND kind = ?"
                    " AND state = 'done'", (rule, case, kind))
        dst.commit()
        ids = [r[0] for r in dst.execute(
            "SELECT id FROM comparisons WHERE case_name = ? AND kind = ? AND state = 'done'"
            " ORDER BY id", (case, kind))]
        stages = collections.defaultdict(dict)
        for cid, stage, verdict in dst.execute(
                "SELECT comparison_id, stage, verdict FROM comparison_stages"):
            stages[cid][stage] = verdict
        dst.close()
        out = subprocess.run([perfd, "verify", "--db", copy], capture_output=True,
                             text=True).stdout
    finally:
        shutil.rmtree(tmp)
    cur = None
    for line in out.splitlines():
        m = re.match(r"comparison (\d+): ", line)
        if m:
            cur = int(m.group(1))
            continue
        m = re.match(r"stage (\d+) verdict: stored '(\w+)', recomputed '(\w+)'", line)
        if m and cur is not None:
            stages[cur][int(m.group(1))] = m.group(3)
    counts = collections.Counter()
    changes = []
    for cid in ids:
        verdict = "unresolved"
        for stage in sorted(stages[cid]):
            if stages[cid][stage] != "unresolved":
                verdict = stages[cid][stage]
                break
        counts[verdict] += 1
        if verdict in ("faster", "slower"):
            changes.append("%d %s" % (cid, verdict))
    print("%s, case %s, %s: %d comparisons: %s; faster or slower: %s" % (
        rule, case, kind, len(ids),
        ", ".join("%s %d" % (v, n) for v, n in sorted(counts.items())),
        ", ".join(changes) or "none"))


main()
