#!/usr/bin/env python3
"""The figures of bench/power.sh, from the receipts it kept.

    power-stats.py self-test
    power-stats.py report RECEIPTS.jsonl SETTINGS.json RESULTS.md RESULTS.json

RECEIPTS.jsonl holds one line per comparison: {"part", "i", "seconds",
"receipt"}, the receipt as `perfd pair --json` printed it. For each part it
counts perfd's verdicts and the pairs each comparison used, and judges the
very same processes (the counted ones: warm-ups left out) by the tests
people reach for instead of perfd:

- Welch's t-test on the two arms, as hyperfine's scripts/welch_ttest.py does
  (scipy's ttest_ind with equal_var=False): t = (mean new - mean old) / se,
  Welch-Satterthwaite degrees of freedom, p from the t distribution, whose
  CDF is written here with the regularized incomplete beta function
  (a continued fraction).
- Mann-Whitney U (asv, Pinpoint), exact: the permutation distribution of the
  new arm's rank sum, with midranks for ties and conditional on them (the
  exact test given the tie pattern), counted by a generating function
  over the pooled values; above EXACT_MAX pooled values, the normal
  approximation with the tie correction, and the report says how often.

Each at its customary alpha, 0.05 two-sided (two-sided p = twice the
smaller one-sided p, at most 1; the side by the sign of the difference),
and at perfd's bound, 1% one-sided in each direction. Metric values are
times: larger new values mean slower.

Python's standard library only (no scipy): `self-test` checks the code
against closed forms, published quantiles and brute-force enumeration.
"""
import itertools
import json
import math
import os
import random
import statistics
import sys

EXACT_MAX = 120        # pooled values up to which Mann-Whitney is exact
ALPHA_TWO = 0.05       # customary: two-sided
ALPHA_ONE = 0.01       # perfd's bound: one-sided, per direction


# --- the t distribution ---------------------------------------------------

def _beta_cf(a, b, x):
    """The continued fraction of I_x(a, b), evaluated by Lentz's method;
    converges fast for x < (a + 1) / (a + b + 2)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 1000):
        # the even step, then the odd step of the fraction
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-15:
            return f
    raise ArithmeticError("incomplete beta: no convergence (a=%g b=%g x=%g)" % (a, b, x))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b), 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lead = math.exp(a * math.log(x) + b * math.log1p(-x)
                    - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)))
    if x < (a + 1.0) / (a + b + 2.0):
        return lead * _beta_cf(a, b, x) / a
    return 1.0 - lead * _beta_cf(b, a, 1.0 - x) / b


def t_sf(t, df):
    """P(T >= t) for Student's t with df degrees of freedom (df > 0)."""
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    half = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))   # P(T >= |t|)
    return half if t >= 0 else 1.0 - half


def welch(old, new):
    """(p_slower, p_faster): one-sided p of Welch's t-test that new is
    larger, and that it is smaller; None when an arm has under 2 values."""
    n1, n2 = len(old), len(new)
    if n1 < 2 or n2 < 2:
        return None
    m1, m2 = statistics.fmean(old), statistics.fmean(new)
    a1, a2 = statistics.variance(old) / n1, statistics.variance(new) / n2
    if a1 + a2 == 0.0:
        # Both arms constant: no spread to judge against.
        if m1 == m2:
            return 1.0, 1.0
        return (0.0, 1.0) if m2 > m1 else (1.0, 0.0)
    t = (m2 - m1) / math.sqrt(a1 + a2)
    df = (a1 + a2) ** 2 / (a1 * a1 / (n1 - 1) + a2 * a2 / (n2 - 1))
    return t_sf(t, df), t_sf(-t, df)


# --- Mann-Whitney ---------------------------------------------------------

def doubled_midranks(values):
    """2 * the midrank of each value among values (ties share the mean of
    their ranks), as integers."""
    order = sorted(range(len(values)), key=lambda k: values[k])
    ranks = [0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = i + j + 2     # 2 * mean of ranks i+1..j+1
        i = j + 1
    return ranks


def ranksum_counts(ranks, n):
    """counts[s]: how many n-subsets of ranks sum to s. The generating
    function prod (1 + t z^r), its t^n coefficient, with each polynomial in
    z packed into one integer, a coefficient per `bits` bits."""
    width = (len(ranks) + 2 + 7) // 8     # bytes a count; each is below 2^len(ranks)
    bits = 8 * width
    poly = [1] + [0] * n                  # poly[k]: polynomial of the k-subsets
    for i, r in enumerate(ranks):
        for k in range(min(i + 1, n), 0, -1):
            if poly[k - 1]:
                poly[k] += poly[k - 1] << (r * bits)
    top = sum(sorted(ranks)[-n:]) if n else 0
    raw = poly[n].to_bytes((top + 1) * width, "little")
    return [int.from_bytes(raw[s * width:(s + 1) * width], "little") for s in range(top + 1)]


def mann_whitney(old, new):
    """(p_slower, p_faster, exact): one-sided p that new's values are larger
    (its rank sum this large or larger), and smaller; exact is False when
    the normal approximation was used. None when an arm is empty."""
    n1, n2 = len(old), len(new)
    if n1 == 0 or n2 == 0:
        return None
    ranks = doubled_midranks(list(old) + list(new))
    r_new = ranks[n1:]
    obs = sum(r_new)
    if n1 + n2 <= EXACT_MAX:
        counts = ranksum_counts(ranks, n2)
        total = math.comb(n1 + n2, n2)
        upper = sum(counts[obs:])
        lower = sum(counts[:obs + 1])
        return upper / total, lower / total, True
    # Normal approximation of the rank sum, with the tie correction.
    n = n1 + n2
    mean = n2 * (n + 1)                   # of the doubled rank sum
    ties = {}
    for r in ranks:
        ties[r] = ties.get(r, 0) + 1
    var = n1 * n2 / 12.0 * ((n + 1) - sum(c ** 3 - c for c in ties.values()) / (n * (n - 1)))
    if var <= 0:
        return 1.0, 1.0, False
    z = (obs - mean) / 2.0 / math.sqrt(var)
    sf = 0.5 * math.erfc(z / math.sqrt(2))
    return sf, 1.0 - sf, False


# --- verdicts -------------------------------------------------------------

def two_sided(p):
    """'slower', 'faster' or None at ALPHA_TWO two-sided."""
    if p is None:
        return None
    ps, pf = p[0], p[1]
    if min(1.0, 2 * min(ps, pf)) < ALPHA_TWO:
        return "slower" if ps < pf else "faster"
    return None


def one_sided(p):
    """'slower', 'faster' or None at ALPHA_ONE in each direction."""
    if p is None:
        return None
    if p[0] < ALPHA_ONE:
        return "slower"
    if p[1] < ALPHA_ONE:
        return "faster"
    return None


def arms(receipt):
    """The counted processes' metric values, old and new: valid, not
    warm-ups, in a pair."""
    metric = receipt.get("metric")
    old, new = [], []
    for p in receipt.get("processes", []):
        if p.get("warmup") or not p.get("valid") or not p.get("pair"):
            continue
        v = p.get("wall_ms") if metric == "wall_ms" else (p.get("metrics") or {}).get(metric)
        if v is None:
            continue
        (old if p.get("arm") == "old" else new).append(float(v))
    return old, new


def pairs_used(receipt):
    """pairs_run where the rule stores it (pairs-median/2), else the pairs
    in the receipt."""
    if receipt.get("pairs_run") is not None:
        return int(receipt["pairs_run"])
    return len(receipt.get("pairs") or [])


def judge(line):
    r = line["receipt"]
    old, new = arms(r)
    w = m = None
    if r.get("verdict") not in (None, "invalid"):
        # Judged only where perfd judged: an invalid comparison is no one's.
        w = welch(old, new)
        m = mann_whitney(old, new)
    stages = r.get("stages")
    cal = None
    if isinstance(stages, list) and stages and isinstance(stages[-1], dict):
        cal = stages[-1].get("calibration_gains")
    gain = (r.get("gain") or {}).get("median")
    return {
        "part": line["part"], "i": line["i"], "seconds": line.get("seconds"),
        "id": r.get("comparison"), "kind": r.get("kind"), "verdict": r.get("verdict"),
        "state": r.get("state"), "pairs": pairs_used(r),
        "stages": len(stages) if isinstance(stages, list) else None,
        "calibration_gains": cal, "gain": gain, "n_old": len(old), "n_new": len(new),
        "welch_p": w, "mw_p": m[:2] if m else None, "mw_exact": m[2] if m else None,
        "welch_2": two_sided(w), "welch_1": one_sided(w),
        "mw_2": two_sided(m[:2] if m else None), "mw_1": one_sided(m[:2] if m else None),
    }


# --- the report -----------------------------------------------------------

PARTS = [
    # part, what, truth, target
    ("cpu-shift-cal", "CPU calibration A/A with no load", None, None),
    ("cpu-shift", "CPU same program both arms, under a load its calibration did not see", None, None),
    ("cpu-cal", "CPU calibration A/A", None, None),
    ("cpu-aa", "CPU A/A", None, "at most 1% false verdicts each way, the rule's bound (4 of 400)"),
    ("cpu-slow", "CPU planted slow-down", "slower", "slower in at least 90%"),
    ("gpu-cal", "GPU calibration A/A", None, None),
    ("gpu-aa", "GPU A/A", None, "no false verdict"),
    ("gpu-1pct", "GPU planted %s%%" % os.environ.get("POWER_GPU_BIG", "1"), "slower",
     "slower within %s pairs in every comparison" % os.environ.get("POWER_GPU_BIG_PAIRS", "3")),
    ("gpu-half", "GPU planted %s%%, calibrated" % os.environ.get("POWER_GPU_SMALL", "0.5"),
     "slower", "slower in at least 90%"),
    ("gpu-half-uncal", "GPU planted %s%%, uncalibrated" % os.environ.get("POWER_GPU_SMALL", "0.5"),
     "slower", None),
    ("gpu-control-cal", "GPU calibration A/A of the copy kernel", None, None),
    ("gpu-control", "GPU copy kernel, unchanged, beside planted %s%% q4 work"
     % os.environ.get("POWER_GPU_BIG", "1"), "unchanged", "unchanged in most comparisons"),
]
JUDGES = [
    ("perfd", "verdict", "perfd (its rule, default settings)"),
    ("welch_2", None, "Welch t, p < 0.05 two-sided"),
    ("welch_1", None, "Welch t, p < 0.01 one-sided each way"),
    ("mw_2", None, "Mann-Whitney U, p < 0.05 two-sided"),
    ("mw_1", None, "Mann-Whitney U, p < 0.01 one-sided each way"),
]


def fmt_pct(x):
    return "-" if x is None else "%.3f%%" % (x * 100)


def median_or_none(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def count(rows, key, value):
    return sum(1 for r in rows if r[key] == value)


def report(receipts_path, settings_path, out_md, out_json):
    with open(settings_path) as f:
        settings = json.load(f)
    rows = []
    with open(receipts_path) as f:
        for text in f:
            if text.strip():
                rows.append(judge(json.loads(text)))
    lines = []
    out = lines.append
    out("# bench/power.sh results")
    out("")
    for k in ("command", "date", "perfd", "machine", "load", "cpu", "gpu"):
        if settings.get(k):
            out("- %s: %s" % (k, settings[k]))
    out("")
    out("## perfd's verdicts and the pairs they took")
    out("")
    out("| part | kind | comparisons | faster | slower | unchanged | unresolved | other | invalid "
        "| pairs: median (min to max) | stages: median | calibration gains: median "
        "| gain: median of medians | seconds |")
    out("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: "
        "| ---: |")
    summary = {"settings": settings, "parts": {}}
    for part, what, truth, target in PARTS:
        rs = [r for r in rows if r["part"] == part]
        if not rs:
            continue
        pairs = [r["pairs"] for r in rs]
        stages = median_or_none([r["stages"] for r in rs])
        invalid = sum(1 for r in rs if r["verdict"] in (None, "invalid") or r["state"] != "done")
        # Verdicts this script does not know by name (a later rule's).
        other = {}
        for r in rs:
            if r["verdict"] not in (None, "invalid", "faster", "slower", "unchanged",
                                    "unresolved"):
                other[r["verdict"]] = other.get(r["verdict"], 0) + 1
        secs = sum(r["seconds"] or 0 for r in rs)
        p = {
            "what": what, "n": len(rs), "truth": truth, "target": target,
            "perfd": {v: count(rs, "verdict", v) for v in ("faster", "slower", "unchanged",
                                                           "unresolved")},
            "invalid": invalid, "other": other,
            "pairs_median": statistics.median(pairs), "pairs_min": min(pairs),
            "pairs_max": max(pairs), "pairs": pairs, "stages_median": stages,
            "gain_median": median_or_none([r["gain"] for r in rs]),
            "seconds": round(secs, 1),
            "processes": sum(r["n_old"] + r["n_new"] for r in rs),
            "kinds": sorted({str(r["kind"]) for r in rs}),
            "mw_approximate": sum(1 for r in rs if r["mw_exact"] is False),
            "calibration_gains_median": median_or_none([r["calibration_gains"] for r in rs]),
        }
        for key, _, _ in JUDGES[1:]:
            p[key] = {v: count(rs, key, v) for v in ("faster", "slower")}
        summary["parts"][part] = p
        cal = p["calibration_gains_median"]
        out("| %s | %s | %d | %d | %d | %d | %d | %s | %d | %g (%d to %d) | %s | %s | %s | %.0f |" % (
            what, ", ".join(k for k in p["kinds"] if k != "None") or "-", len(rs),
            p["perfd"]["faster"], p["perfd"]["slower"],
            p["perfd"]["unchanged"], p["perfd"]["unresolved"],
            ", ".join("%s %d" % kv for kv in sorted(other.items())) or "0", invalid,
            p["pairs_median"], p["pairs_min"], p["pairs_max"],
            "-" if stages is None else "%g" % stages, "-" if cal is None else "%g" % cal,
            fmt_pct(p["gain_median"]), secs))
    out("")
    out("## The same processes, judged by the usual tests")
    out("")
    out("Faster and slower verdicts out of the comparisons, each test on the processes"
        " that comparison ran (its pairs, warm-ups left out); on an A/A every one is false.")
    out("")
    out("| part | judge | faster | slower | neither |")
    out("| --- | --- | ---: | ---: | ---: |")
    for part, what, truth, target in PARTS:
        p = summary["parts"].get(part)
        if not p:
            continue
        for key, _, name in JUDGES:
            c = p["perfd"] if key == "perfd" else p[key]
            out("| %s | %s | %d | %d | %d |" % (what, name, c["faster"], c["slower"],
                                                 p["n"] - c["faster"] - c["slower"]))
    out("")
    out("## Against the issue's targets")
    out("")
    for part, what, truth, target in PARTS:
        p = summary["parts"].get(part)
        if not p or not target and part != "gpu-half-uncal":
            continue
        f, s, n = p["perfd"]["faster"], p["perfd"]["slower"], p["n"]
        if part == "cpu-aa":
            met = f <= 0.01 * n and s <= 0.01 * n
            text = "false faster %d, false slower %d of %d" % (f, s, n)
            full = n >= 400
        elif part == "gpu-aa":
            met = f == 0 and s == 0
            text = "false faster %d, false slower %d of %d" % (f, s, n)
            full = n >= 30
        elif part == "gpu-1pct":
            bound = int(os.environ.get("POWER_GPU_BIG_PAIRS", "3"))
            in3 = sum(1 for r in rows if r["part"] == part and r["verdict"] == "slower"
                      and r["pairs"] <= bound)
            met = in3 == n
            text = "slower within %d pairs in %d of %d (slower at all: %d)" % (bound, in3, n, s)
            full = n >= 10
        elif part == "gpu-control":
            u = p["perfd"]["unchanged"]
            met = u > n / 2 and f == 0 and s == 0
            text = "unchanged in %d of %d, unresolved %d, false faster %d, false slower %d" % (
                u, n, p["perfd"]["unresolved"], f, s)
            full = n >= 10
        elif part == "gpu-half-uncal":
            met = None
            text = "slower in %d of %d; pairs taken: %s" % (s, n, ", ".join(map(str, p["pairs"])))
            full = True
        else:
            met = s >= 0.9 * n
            text = "slower in %d of %d, median pairs %g" % (s, n, p["pairs_median"])
            full = n >= (50 if part == "cpu-slow" else 10)
        judged = "" if met is None else (" - **met**" if met else " - **missed**")
        if met is not None and not full:
            judged += " (fewer comparisons than the issue asks: indicative only)"
        out("- %s: %s%s%s" % (what, text, "; target: " + target if target else "", judged))
        p["met"] = met
    approx = sum(p["mw_approximate"] for p in summary["parts"].values())
    out("")
    out("Mann-Whitney: exact (the permutation distribution of the rank sum, midranks for"
        " ties) for up to %d processes a comparison; the normal approximation for %d"
        " comparison(s) above that." % (EXACT_MAX, approx))
    fewest = min((r["n_new"] for r in rows if r["n_new"]), default=0)
    if 0 < fewest <= 6:
        out("With n processes an arm its smallest one-sided p is 1 / C(2n, n): %s; so at"
            " 3 pairs it can give no verdict at either alpha." % ", ".join(
                "n = %d: %.4g" % (k, 1 / math.comb(2 * k, k)) for k in range(fewest, 7)))
    text = "\n".join(lines) + "\n"
    with open(out_md, "w") as f:
        f.write(text)
    summary["comparisons"] = rows
    with open(out_json, "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    sys.stdout.write(text)


# --- the self-test --------------------------------------------------------

def simpson_t_sf(t, df):
    """P(T >= t) by Simpson's rule on the density: fine steps near t, coarse
    ones further out, and the density's power-law tail past the end."""
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    pdf = lambda x: c * (1 + x * x / df) ** (-(df + 1) / 2)
    total = 0.0
    for a, b, steps in ((t, t + 40.0, 40000), (t + 40.0, 4000.0, 40000)):
        h = (b - a) / steps
        total += h / 3 * (pdf(a) + pdf(b) + sum((4 if k % 2 else 2) * pdf(a + k * h)
                                                for k in range(1, steps)))
    return total + c * df ** ((df + 1) / 2) * 4000.0 ** (-df) / df


def brute_mw(old, new):
    """The exact one-sided p-values by enumerating every split."""
    ranks = doubled_midranks(list(old) + list(new))
    obs = sum(ranks[len(old):])
    up = lo = total = 0
    for idx in itertools.combinations(range(len(ranks)), len(new)):
        s = sum(ranks[k] for k in idx)
        total += 1
        up += s >= obs
        lo += s <= obs
    return up / total, lo / total


def self_test():
    def close(a, b, tol, what):
        if not abs(a - b) <= tol:
            raise SystemExit("power-stats self-test: %s: %.12g, expected %.12g" % (what, a, b))
    # Closed forms: Cauchy (df 1) and df 2.
    close(t_sf(1.0, 1), 0.25, 1e-12, "t_sf(1, df 1)")
    for t in (-3.0, -0.4, 0.0, 0.7, 1.5, 9.0):
        close(t_sf(t, 1), 0.5 - math.atan(t) / math.pi, 1e-12, "t_sf(%g, df 1)" % t)
        close(t_sf(t, 2), 0.5 - t / (2 * math.sqrt(2 + t * t)), 1e-12, "t_sf(%g, df 2)" % t)
    # Published quantiles: t(0.975, 10) = 2.228138852, t(0.995, 3) = 5.840909310,
    # t(0.99, 30) = 2.457261531.
    close(t_sf(2.228138852, 10), 0.025, 1e-9, "t 0.975 quantile, df 10")
    close(t_sf(5.840909310, 3), 0.005, 1e-9, "t 0.995 quantile, df 3")
    close(t_sf(2.457261531, 30), 0.01, 1e-9, "t 0.99 quantile, df 30")
    # Non-integer degrees of freedom, as Welch's are: against integration.
    for t, df in ((0.3, 2.7), (1.9, 4.5), (3.2, 7.25), (-1.1, 3.9), (2.5, 17.3)):
        close(t_sf(t, df), simpson_t_sf(t, df), 1e-10, "t_sf(%g, df %g)" % (t, df))
    # Welch by hand: old 1,2,3 and new 4,5,6,7.
    ps, pf = welch([1, 2, 3], [4, 5, 6, 7])
    t = (5.5 - 2) / math.sqrt(1 / 3 + (5 / 3) / 4)
    a1, a2 = 1 / 3, (5 / 3) / 4
    df = (a1 + a2) ** 2 / (a1 * a1 / 2 + a2 * a2 / 3)
    close(ps, t_sf(t, df), 1e-15, "welch p slower")
    close(ps + pf, 1.0, 1e-12, "welch sides")
    # Mann-Whitney: 3 against 3 without ties, new all larger: 1 in C(6,3).
    ps, pf, exact = mann_whitney([1, 2, 3], [4, 5, 6])
    close(ps, 1 / 20, 1e-15, "mw 3x3 extreme")
    close(pf, 1.0, 1e-15, "mw 3x3 other side")
    # Against enumeration, with and without ties.
    rng = random.Random(11)
    for _ in range(60):
        n1, n2 = rng.randint(1, 7), rng.randint(1, 7)
        pool = [rng.choice([1.0, 2.0, 2.5, 3.0]) for _ in range(n1 + n2)] \
            if rng.random() < 0.5 else [rng.random() for _ in range(n1 + n2)]
        got = mann_whitney(pool[:n1], pool[n1:])
        want = brute_mw(pool[:n1], pool[n1:])
        close(got[0], want[0], 1e-12, "mw vs enumeration (upper) %r" % pool)
        close(got[1], want[1], 1e-12, "mw vs enumeration (lower) %r" % pool)
    # The approximation near where it takes over: within 0.01 of exact.
    old = [rng.gauss(100, 3) for _ in range(60)]
    new = [rng.gauss(101, 3) for _ in range(60)]
    exact = mann_whitney(old, new)
    global EXACT_MAX
    keep, EXACT_MAX = EXACT_MAX, 0
    approx = mann_whitney(old, new)
    EXACT_MAX = keep
    close(exact[0], approx[0], 0.01, "mw normal approximation")
    print("power-stats self-test: passed (t distribution, Welch, Mann-Whitney exact"
          " against enumeration)")


def main(argv):
    if len(argv) == 2 and argv[1] == "self-test":
        self_test()
    elif len(argv) == 6 and argv[1] == "report":
        report(*argv[2:])
    else:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
