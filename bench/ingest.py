#!/usr/bin/env python3
"""bench/ingest.py RECORD HUB_URL TOKEN HUB_DB RAW_DB N: the hub's ingest
rate against SQLite's own, on the same rows (issue 12's figure).

1. N copies of RECORD (a `perfd export` record), each with its own id and
   its sha256 recomputed over the canonical form of docs/hub.md, are POSTed
   one after another on one keep-alive connection to
   HUB_URL/api/v1/ingest/comparisons; every answer must be 201.
2. The rows the hub stored for the first of them (its comparison, the
   comparison's processes, metrics, lines, output, pair gains, stages,
   notes and origin) are read back from HUB_DB and inserted N times, with
   new ids, into RAW_DB (the hub's schema, empty but for the artifacts
   they name), one transaction per copy, with Python's sqlite3 and the
   pragmas perfd sets (db/db.c): SQLite's own rate for the same rows.
Prints "hub SECONDS RATE" and "raw SECONDS RATE", rates in comparisons/s."""
import hashlib, http.client, json, os, sqlite3, sys, time, urllib.parse

# docs/hub.md's canonical form, as the hub's test checks it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures'))
from canon import canon  # noqa: E402


def with_id(rec, i):
    d = dict(rec)
    d['id'] = i
    d.pop('sha256', None)
    d['sha256'] = hashlib.sha256(canon(d).encode()).hexdigest()
    return json.dumps(d).encode()


def hub(rec, url, token, n):
    u = urllib.parse.urlsplit(url)
    bodies = [with_id(rec, 1000000 + i) for i in range(n)]
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    head = {'Authorization': 'Bearer ' + token, 'Content-Type': 'application/json'}
    start = time.monotonic()
    for b in bodies:
        conn.request('POST', '/api/v1/ingest/comparisons', body=b, headers=head)
        r = conn.getresponse()
        text = r.read()
        if r.status != 201:
            sys.exit('bench/ingest.py: the hub answered %d: %s' % (r.status, text[:300]))
    return time.monotonic() - start


# The tables a comparison's rows live in, and how each row names it.
BY_COMPARISON = ['pair_gains', 'comparison_notes', 'comparison_stages', 'comparison_origins']
BY_PROCESS = ['metrics', 'process_lines', 'process_output']


def raw(hub_db, raw_db, n):
    src = sqlite3.connect(hub_db)
    cid = src.execute('select min(id) from comparisons').fetchone()[0]
    def rows(sql, *args):
        cur = src.execute(sql, args)
        return [d[0] for d in cur.description], cur.fetchall()
    comp = rows('select * from comparisons where id = ?', cid)
    procs = rows('select * from processes where comparison_id = ?', cid)
    by_c = {t: rows('select * from %s where comparison_id = ?' % t, cid) for t in BY_COMPARISON}
    by_p = {t: rows('select t.* from %s t join processes p on p.id = t.process_id'
                    ' where p.comparison_id = ?' % t, cid) for t in BY_PROCESS}
    dst = sqlite3.connect(raw_db, isolation_level=None)
    dst.execute('pragma journal_mode = wal')
    dst.execute('pragma synchronous = normal')
    dst.execute('pragma wal_autocheckpoint = 8192')
    dst.execute('pragma foreign_keys = on')
    def ins(table, cols, vals):
        return dst.execute('insert into %s (%s) values (%s)' % (table, ','.join(cols), ','.join('?' * len(cols))), vals)
    # The artifacts the rows name, there already (as at the hub after the
    # first record), outside the timing.
    acols, arows = rows('select * from artifacts')
    dst.execute('begin immediate')
    for a in arows:
        ins('artifacts', acols, a)
    dst.execute('commit')
    start = time.monotonic()
    for i in range(n):
        dst.execute('begin immediate')
        cols, (row,) = comp
        row = list(row)
        row[cols.index('id')] = None
        new_c = ins('comparisons', cols, row).lastrowid
        pid_map = {}
        pcols, prows = procs
        for p in prows:
            p = list(p)
            old = p[pcols.index('id')]
            p[pcols.index('id')] = None
            p[pcols.index('comparison_id')] = new_c
            pid_map[old] = ins('processes', pcols, p).lastrowid
        for t, (cols2, rs) in by_c.items():
            for r in rs:
                r = list(r)
                r[cols2.index('comparison_id')] = new_c
                if 'origin_id' in cols2:
                    r[cols2.index('origin_id')] = 2000000 + i
                ins(t, cols2, r)
        for t, (cols2, rs) in by_p.items():
            for r in rs:
                r = list(r)
                r[cols2.index('process_id')] = pid_map[r[cols2.index('process_id')]]
                ins(t, cols2, r)
        dst.execute('commit')
    return time.monotonic() - start


def main():
    rec_path, url, token, hub_db, raw_db, n = sys.argv[1:7]
    n = int(n)
    rec = json.load(open(rec_path))
    t = hub(rec, url, token, n)
    print('hub %.3f %.1f' % (t, n / t))
    t = raw(hub_db, raw_db, n)
    print('raw %.3f %.1f' % (t, n / t))


main()
