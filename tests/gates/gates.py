#!/usr/bin/env python3
"""The gates' verdicts, from what tests/gates/gates.sh had the tools find.

  gates.py length LIMIT ALLOW TAGS [--update]
      TAGS: universal-ctags' lines for the C functions (--fields=+ne, so
      each has line: and end:). Fails (exit 1) for a function over LIMIT
      lines that ALLOW does not list, for a line of ALLOW without its
      reason, and for a listed function no longer over LIMIT (or gone):
      the list only shrinks. --update deletes those stale lines from ALLOW
      and adds none: a new long function needs a person's reason.
  gates.py copies BASELINE REPORT [--update]
      REPORT: jscpd's JSON report. Fails (exit 1) for a clone that BASELINE
      does not hold. --update writes BASELINE from REPORT.
  gates.py docs CEILINGS DOC...
      DOC: the documents (README.md, docs/*.md) git tracks. Fails (exit 1)
      for a document longer than its line ceiling in CEILINGS, for one
      CEILINGS does not list, for a line of CEILINGS without its reason,
      and for a listed document that is gone. --update changes nothing
      here: a ceiling is a person's decision, and raising one says why.

A clone is keyed by its two files and a hash of its text with the
whitespace collapsed, never by line numbers, so that a line added above it
changes nothing. Exit 2 is a broken input (a file unreadable, a line of
BASELINE malformed).
"""
import collections
import hashlib
import json
import re
import sys

ALLOW_HINT = "tests/gates/long-functions.txt"
BASELINE_HINT = "tests/gates/clones.txt"
CEILINGS_HINT = "tests/gates/doc-ceilings.txt"


def length_gate(limit, allow_path, tags_path, update):
    long_fns = {}  # (file, function) -> (line, length)
    for raw in open(tags_path, encoding="utf-8", errors="replace"):
        f = raw.rstrip("\n").split("\t")
        if len(f) < 4 or raw.startswith("!_TAG_"):
            continue
        ext = dict(x.split(":", 1) for x in f[3:] if ":" in x)
        if "line" not in ext or "end" not in ext:
            continue
        n = int(ext["end"]) - int(ext["line"]) + 1
        if n > limit:
            long_fns[(f[1], f[0])] = (int(ext["line"]), n)

    lines = open(allow_path, encoding="utf-8").read().splitlines()
    listed = {}
    bad = []
    stale = []  # indexes into lines
    for i, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split(None, 2)
        if len(parts) < 3 or not parts[2].strip():
            bad.append("%s:%d: %r: wants FILE FUNCTION REASON, the reason "
                       "too" % (allow_path, i + 1, line))
            continue
        key = (parts[0], parts[1])
        listed[key] = i
        if key not in long_fns:
            stale.append(i)

    fail = list(bad)
    for (path, fn), (line, n) in sorted(long_fns.items()):
        if (path, fn) not in listed:
            fail.append("%s:%d: %s is %d lines, over %d: split it, or list "
                        "it with a reason in %s" % (path, line, fn, n, limit,
                                                     ALLOW_HINT))
    if update and stale:
        keep = [l for i, l in enumerate(lines) if i not in set(stale)]
        with open(allow_path, "w", encoding="utf-8") as out:
            out.write("\n".join(keep) + "\n")
        for i in stale:
            print("gate length: dropped %r from %s: no longer over %d lines"
                  % (" ".join(lines[i].split(None, 2)[:2]), ALLOW_HINT, limit))
        stale = []
    for i in stale:
        p = lines[i].split(None, 2)
        fail.append("%s:%d: %s %s is listed but no longer over %d lines (or "
                    "gone): delete its line, or run tests/gates/gates.sh "
                    "--update" % (allow_path, i + 1, p[0], p[1], limit))
    if fail:
        print("gate length: FAILED, functions of more than %d lines (from "
              "the line of the name to the closing brace):" % limit)
        for m in fail:
            print("  " + m)
        return 1
    print("gate length: ok, %d functions over %d lines, each listed in %s"
          % (len(long_fns), limit, ALLOW_HINT))
    return 0


def norm(text):
    return " ".join(text.split())


def clone_key(c):
    a, b = c["firstFile"], c["secondFile"]
    files = sorted([a["name"], b["name"]])
    h = hashlib.sha256(norm(c["fragment"]).encode()).hexdigest()[:16]
    return (files[0], files[1], h)


def first_line(text):
    for l in text.splitlines():
        if l.strip():
            return norm(l)[:60]
    return ""


def where(c):
    sides = sorted([c["firstFile"], c["secondFile"]], key=lambda s: s["name"])
    return " ~ ".join("%s:%d-%d" % (s["name"], s["start"], s["end"])
                      for s in sides)


def copies_gate(baseline_path, report_path, update):
    clones = json.load(open(report_path, encoding="utf-8"))["duplicates"]
    clones.sort(key=lambda c: (clone_key(c), where(c)))
    now = collections.Counter(clone_key(c) for c in clones)

    if update:
        with open(baseline_path, "w", encoding="utf-8") as out:
            out.write("# The duplicated blocks jscpd finds today, which the gate lets be\n"
                      "# (tests/gates/gates.sh; docs/testing.md). Written by\n"
                      "# tests/gates/gates.sh --update, not by hand. One clone a line:\n"
                      "# FILE_A FILE_B KEY LINES FIRST_LINE, tab-separated; KEY hashes the\n"
                      "# clone's text with its whitespace collapsed, and no line number is\n"
                      "# kept, so moving a copy within its file changes nothing.\n")
            for c in clones:
                a, b, h = clone_key(c)
                out.write("\t".join([a, b, h, str(c["lines"]),
                                     first_line(c["fragment"])]) + "\n")
        print("gate copies: %s now holds the %d clones of today"
              % (BASELINE_HINT, len(clones)))
        return 0

    base = collections.Counter()
    for i, line in enumerate(open(baseline_path, encoding="utf-8")):
        if not line.strip() or line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        if len(f) < 3 or not re.fullmatch(r"[0-9a-f]{16}", f[2]):
            print("%s:%d: malformed line; tests/gates/gates.sh --update "
                  "writes this file" % (baseline_path, i + 1))
            return 2
        base[(f[0], f[1], f[2])] += 1

    new = []
    extra = now - base
    for c in clones:
        k = clone_key(c)
        if extra[k] > 0:
            extra[k] -= 1
            new.append(c)
    gone = sum((base - now).values())
    if gone:
        print("gate copies: note: %d clones of %s are gone; "
              "tests/gates/gates.sh --update drops them" % (gone, BASELINE_HINT))
    if new:
        print("gate copies: FAILED, %d new duplicated block%s (jscpd, "
              "settings in .jscpd.json); move the shared code into one "
              "function:" % (len(new), "" if len(new) == 1 else "s"))
        for c in new:
            print("  %s (%d lines, %d tokens)" % (where(c), c["lines"],
                                                  c["tokens"]))
            frag = c["fragment"].splitlines()
            for l in frag[:4]:
                print("      | " + l.expandtabs(4))
            if len(frag) > 4:
                print("      | ...")
        return 1
    print("gate copies: ok, %d clones, none new (baseline %s)"
          % (len(clones), BASELINE_HINT))
    return 0


def docs_gate(ceilings_path, docs):
    ceiling = {}
    fail = []
    for i, line in enumerate(open(ceilings_path, encoding="utf-8")):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split(None, 2)
        if len(parts) < 3 or not parts[1].isdigit() or not parts[2].strip():
            fail.append("%s:%d: %r: wants PATH LINES REASON, the reason too"
                        % (ceilings_path, i + 1, line.rstrip("\n")))
            continue
        ceiling[parts[0]] = int(parts[1])

    for doc in sorted(docs):
        with open(doc, "rb") as f:
            n = sum(1 for _ in f)
        if doc not in ceiling:
            fail.append("%s: %d line%s and no ceiling: add its line to %s, "
                        "with a reason" % (doc, n, "" if n == 1 else "s",
                                           CEILINGS_HINT))
        elif n > ceiling[doc]:
            fail.append("%s: %d lines, over its ceiling of %d (%s): say it "
                        "in fewer lines, or raise the ceiling and say why"
                        % (doc, n, ceiling[doc], CEILINGS_HINT))
    for doc in sorted(set(ceiling) - set(docs)):
        fail.append("%s: %s has a ceiling but is gone: delete its line"
                    % (CEILINGS_HINT, doc))
    if fail:
        print("gate docs: FAILED, each document stays within the line "
              "ceiling %s states:" % CEILINGS_HINT)
        for m in fail:
            print("  " + m)
        return 1
    print("gate docs: ok, %d documents, each within its ceiling in %s"
          % (len(docs), CEILINGS_HINT))
    return 0


def main(argv):
    update = "--update" in argv
    args = [a for a in argv if a != "--update"]
    try:
        if len(args) == 4 and args[0] == "length":
            return length_gate(int(args[1]), args[2], args[3], update)
        if len(args) == 3 and args[0] == "copies":
            return copies_gate(args[1], args[2], update)
        if len(args) >= 2 and args[0] == "docs":
            return docs_gate(args[1], args[2:])
    except (OSError, ValueError, KeyError) as e:
        print("gates.py: %s" % e, file=sys.stderr)
        return 2
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
