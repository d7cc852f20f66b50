"""test/gpu/workloads/verdict_report.py: ground truth against ktrace check's
verdicts, for test/gpu/60-verdict-suite.sh (docs/verdicts.md).

    verdict_report.py truth-merge OUT...
        OUT: the output of one run of `verdict_programs.py --truth-procs NAME...`
        each (the same names); prints TRUTH lines: deterministic when every run
        printed the same output digest.
    verdict_report.py report --list LIST --results DIR [--truth FILE]...
                             [--debugmode FILE] [--markdown FILE] [--setup TEXT]
        LIST: `verdict_programs.py --list`; DIR/<name>/ holds what the suite
        kept of `ktrace check --json` on that program: rc (exit status), wall
        (seconds), json (its stdout), log (its stderr), or skipped (why it did
        not run).  Prints one RESULT line per program, the confusion table, the
        two acceptance RESULT lines and BENCH lines; --markdown also writes the
        tables as Markdown (for docs/verdicts.md).

ktrace check's JSON is read defensively: a comparison's "confirmation" (the
replay that confirms or not a divergence) decides when it is there, else the
digests' verdict ("result", "divergences"); each verdict says which it used.
The exit status is the verdict (0 nothing confirmed, 1 diverged, else error);
the JSON names the kernel.
"""
import argparse
import collections
import json
import os
import re
import statistics
import sys

RIGHT_KERNEL_TARGET = 0.95

CATEGORY_LABEL = {
    "right": "diverged, right kernel",
    "wrong": "diverged, wrong kernel",
    "false": "false divergence",
    "missed": "missed divergence",
    "pass": "correct pass",
    "unshown": "not shown (identical in the runs that judged it)",
    "surprise": "diverged (program expected deterministic, bare runs differ too)",
    "error": "error",
    "skipped": "skipped",
}


DEBUGMODE_LABEL = {"right": "right op", "wrong": "wrong op", "false": "false divergence", "missed": "missed",
                   "pass": "correct pass", "unshown": "not shown", "surprise": "diverged (unexpected)",
                   "error": "error", "unavailable": "unavailable", "skipped": "skipped"}


def clean(text, limit=400):
    return re.sub(r"\s+", " ", str(text)).replace("|", "/").strip()[:limit]


def short_kernel(name, limit=90):
    """A kernel's name without 'void ' and template arguments, for reading."""
    s = re.sub(r"^void ", "", (name or "").replace("(anonymous namespace)::", ""))
    out, depth = [], 0
    for ch in s:
        if ch == "<":
            depth += 1
            if depth == 1:
                out.append("<...>")
            continue
        if ch == ">":
            depth = max(0, depth - 1)
            continue
        if depth == 0:
            out.append(ch)
    s = re.sub(r"\(.*", "", "".join(out))
    return s[:limit] or "?"


def read(path, default=""):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


# ---- inputs -----------------------------------------------------------------------------------------

Prog = collections.namedtuple("Prog", "name expected kind group truth culprit flags dm timeout available doc")


def read_list(path):
    progs = []
    for line in read(path).splitlines():
        f = line.split("\t")
        if len(f) < 10:
            continue
        flags = [x for x in f[6].split(",") if x and x != "-"]
        dm = next((x[3:] for x in flags if x.startswith("dm=")), "")
        progs.append(Prog(f[0], f[1], f[2], f[3], f[4], "" if f[5] == "-" else f[5],
                          tuple(x for x in flags if not x.startswith("dm=")), dm, f[7], f[8], f[9]))
    return progs


Truth = collections.namedtuple("Truth", "status how detail")


def read_truth(paths):
    truth = {}
    for p in paths:
        for line in read(p).splitlines():
            f = line.split("\t")
            if len(f) >= 4 and f[0] == "TRUTH":
                truth[f[1]] = Truth(f[2], f[3], f[4] if len(f) > 4 else "")
    return truth


def read_tagged(path, tag):
    out = {}
    for line in read(path).splitlines():
        f = line.split("\t")
        if len(f) >= 3 and f[0] == tag:
            out[f[1]] = f[2:]
    return out


# ---- truth-merge -------------------------------------------------------------------------------------

def truth_merge(paths):
    runs = [read_tagged(p, "HASH") for p in paths]
    names = []
    for r in runs:
        names += [n for n in r if n not in names]
    for n in names:
        got = [r.get(n) for r in runs]
        how = f"{len(paths)} processes"
        bad = [g for g in got if g is None or g[0] in ("ERROR", "UNAVAILABLE")]
        if any(g is not None and g[0] == "UNAVAILABLE" for g in got):
            why = next(g[1] for g in got if g is not None and g[0] == "UNAVAILABLE" and len(g) > 1)
            print(f"TRUTH\t{n}\tunavailable\t{how}\t{clean(why, 300)}")
        elif bad:
            whys = [("no output (crash or timeout)" if g is None else clean(g[1] if len(g) > 1 else g[0], 200))
                    for g in bad]
            print(f"TRUTH\t{n}\terror\t{how}\t{len(bad)} of {len(got)} runs failed: {whys[0]}")
        else:
            distinct = len({g[0] for g in got})
            verdict = "deterministic" if distinct == 1 else "nondeterministic"
            print(f"TRUTH\t{n}\t{verdict}\t{how}\t{distinct} distinct outputs of {len(got)}: "
                  f"{' '.join(g[0][:12] for g in got)}")
    return 0


# ---- ktrace check's JSON ------------------------------------------------------------------------------

def comparison_verdict(c):
    """One comparison's verdict: the replay confirmation when present, else the digests."""
    divs = [d for d in (c.get("divergences") or []) if isinstance(d, dict)]
    first = divs[0] if divs else {}
    v = {"digest_diverged": c.get("result") == "diverged" or bool(divs),
         "digest_kernel": (first.get("kernel") or ""), "digest_mangled": (first.get("mangled") or ""),
         "digest_class": first.get("classification", ""), "attempts": [], "sizes": "",
         "kernel": "", "mangled": ""}
    conf = c.get("confirmation")
    verdict = str(c.get("verdict") or (conf.get("verdict") if isinstance(conf, dict) else "") or "")
    if verdict == "race":  # a race explains the first divergence: the reader (or first writer) named
        race = c.get("race") if isinstance(c.get("race"), dict) else {}
        side = race.get("reader") or race.get("first") or {}
        other = race.get("writer_a") or race.get("second") or {}
        v.update(source="race", diverged=True, race=True, kernel=side.get("kernel") or v["digest_kernel"],
                 mangled=side.get("mangled") or v["digest_mangled"],
                 sizes=clean(f"unordered with {other.get('kernel') or other.get('type', '?')} on stream "
                             f"{other.get('stream', '?')}: {race.get('missing_order', '')}", 160))
        return v
    if isinstance(conf, dict) and conf.get("method") == "replay" or verdict.startswith(("confirmed", "unconfirmed (not")):
        entries = [e for e in ((conf or {}).get("replayed") or []) if isinstance(e, dict)]
        hit = next((e for e in entries if e.get("outcome") == "confirmed"), None)
        v["source"] = "replay"
        v["diverged"] = hit is not None or verdict.startswith("confirmed")
        v["attempts"] = [f"{short_kernel(e.get('kernel', ''), 50)}: {e.get('outcome', '?')}"
                         f"{' (' + clean(e.get('reason', ''), 60) + ')' if e.get('outcome') != 'confirmed' else ''}"
                         for e in entries]
        if hit:
            v["kernel"], v["mangled"] = (hit.get("kernel") or ""), (hit.get("mangled") or "")
            v["sizes"] = difference_sizes(hit)
        elif v["diverged"]:
            v["kernel"], v["mangled"] = v["digest_kernel"], v["digest_mangled"]
    else:
        v["source"] = "digests"
        v["diverged"] = v["digest_diverged"]
        v["kernel"], v["mangled"] = v["digest_kernel"], v["digest_mangled"]
    return v


def difference_sizes(entry):
    outs = [o for o in (entry.get("outputs_differing") or []) if isinstance(o, dict)]
    if not outs:
        return clean(entry.get("summary", ""), 120)
    o = outs[0]
    parts = [f"{o.get('arg', '?')}: {o.get('elements_differing', '?')} of {o.get('elements', '?')} elements differ"]
    for key in ("max_abs", "max_ulp"):
        if o.get(key) is not None:
            parts.append(f"{key} {o[key]}")
    if o.get("replays_differing") is not None:
        parts.append(f"in {o['replays_differing']} of {o.get('replays', '?')} replays")
    return ", ".join(parts)


def last_ktrace_line(log):
    lines = [ln for ln in log.splitlines() if ln.startswith("ktrace check:") and "traces kept" not in ln]
    tail = lines[-1] if lines else (log.strip().splitlines() or [""])[-1]
    return clean(tail, 200)


def ktrace_outcome(rdir):
    """What `ktrace check` said about one program: state diverged|passed|error|skipped|missing."""
    k = {"state": "missing", "detail": "", "wall": None, "source": "", "kernel": "", "mangled": "",
         "sizes": "", "attempts": [], "digest_kernel": "", "digest_diverged": False, "rc": None}
    skipped = read(os.path.join(rdir, "skipped")).strip()
    if skipped:
        return dict(k, state="skipped", detail=skipped)
    rc_text = read(os.path.join(rdir, "rc")).strip()
    if not rc_text:
        return dict(k, detail="ktrace check did not finish (no exit status recorded)")
    try:
        k["wall"] = float(read(os.path.join(rdir, "wall")).strip() or "nan")
    except ValueError:
        pass
    rc = k["rc"] = int(rc_text) if rc_text.lstrip("-").isdigit() else -1
    log = read(os.path.join(rdir, "log"))
    if rc in (124, 137):
        return dict(k, state="error", detail=f"timed out after {k['wall']} s")
    text = read(os.path.join(rdir, "json"))
    try:
        doc = json.loads(text) if text.strip() else None
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("comparisons"), list):
        doc = doc["comparisons"]  # ktrace check --json: one object holding the comparisons
    if isinstance(doc, dict) and isinstance(doc.get("comparisons"), list):  # ktrace check --json: one object
        doc = doc["comparisons"]
    comps = [c for c in (doc if isinstance(doc, list) else [doc]) if isinstance(c, dict)]
    if rc not in (0, 1):
        return dict(k, state="error", detail=f"exit {rc}: {last_ktrace_line(log)}")
    if not comps:
        return dict(k, state="error", detail=f"exit {rc} but no JSON report on stdout: {last_ktrace_line(log)}")
    verdicts = [comparison_verdict(c) for c in comps]
    hit = next((v for v in verdicts if v["diverged"]), None)
    any_digest = next((v for v in verdicts if v["digest_diverged"]), None)
    k.update(source=verdicts[0]["source"], digest_diverged=any_digest is not None,
             digest_kernel=(any_digest or {}).get("digest_kernel", ""))
    k["attempts"] = [a for v in verdicts for a in v["attempts"]]
    if hit:
        k.update(source=hit["source"], kernel=hit["kernel"], mangled=hit["mangled"], sizes=hit["sizes"],
                 race=hit.get("race", False))
    if rc == 1:
        k["state"] = "diverged"
        if not hit:
            k["detail"] = "exit 1 but the JSON names no confirmed divergence (program outputs differ?)"
    else:
        k["state"] = "passed"
        if hit:
            k["detail"] = "exit 0 although the JSON reports a divergence"
    return k


def describe_ktrace(k):
    if k["state"] == "diverged":
        how = ("race" if k["source"] == "race" else "confirmed by replay" if k["source"] == "replay"
               else "digests only (no replay confirmation)")
        s = f"{how}: {short_kernel(k['kernel'])}" if k["kernel"] else f"no kernel named ({k['detail']})"
        return s + (f" [{k['sizes']}]" if k["sizes"] else "")
    if k["state"] == "passed":
        if k["digest_diverged"]:
            tried = "; ".join(k["attempts"][:3]) or "no replay"
            return f"exit 0: digests differed at {short_kernel(k['digest_kernel'])}, not confirmed ({tried})"
        return "exit 0: traces identical" + (f" ({k['detail']})" if k["detail"] else "")
    return k["detail"]


def kernel_matches(regex, k):
    if not regex or not (k["kernel"] or k["mangled"]):
        return False
    try:
        r = re.compile(regex)
    except re.error:
        return False
    return bool(r.search(k["kernel"] or "") or r.search(k["mangled"] or ""))


# ---- classification -----------------------------------------------------------------------------------

def truth_row(p, t):
    """The program's row in the confusion table, from the bare runs."""
    if t is None:
        return "none"
    if t.status in ("unavailable", "error"):
        return t.status
    if t.status == "nondeterministic":
        return "nondet" if p.expected == "nondet" else "nondet-surprise"
    return "det" if p.expected == "det" else "unshown"


def classify(p, row, k):
    """(category, PASS|FAIL|SKIP, detail) for one program."""
    said = describe_ktrace(k)
    if k["state"] == "skipped":
        return "skipped", "SKIP", k["detail"]
    if row == "unavailable":
        return "skipped", "SKIP", "framework unavailable"
    if k["state"] in ("error", "missing"):
        return "error", "FAIL", said
    if row in ("none", "error"):
        return "skipped", "SKIP", f"no ground truth ({row}); ktrace: {said}"
    diverged = k["state"] == "diverged"
    # a probabilistic program whose traced runs' digests all matched: its nondeterminism did not show
    unshown = "probabilistic" in p.flags and not k.get("digest_diverged")
    if row == "det":
        return ("false", "FAIL", said) if diverged else ("pass", "PASS", said)
    if row == "nondet-surprise":
        if diverged:
            return "surprise", "PASS", said
        if unshown:
            return "unshown", "SKIP", f"probabilistic, did not show in the traced runs: {said}"
        return "missed", "FAIL", said
    if diverged:
        if "race" in p.flags and not k.get("race"):
            return "wrong", "FAIL", f"{said}; wanted the verdict race"
        if kernel_matches(p.culprit, k):
            return "right", "PASS", said
        return "wrong", "FAIL", f"{said}; wanted /{p.culprit}/"
    if row == "unshown":
        return "unshown", "SKIP", said
    if "expected-miss" in p.flags:
        return "missed", "SKIP", f"expected miss: {said}"
    if unshown:
        return "unshown", "SKIP", f"probabilistic, did not show in the traced runs: {said}"
    return "missed", "FAIL", said


def evaluate(progs, truth, results):
    recs = []
    for p in progs:
        t = truth.get(p.name)
        k = ktrace_outcome(os.path.join(results, p.name))
        row = truth_row(p, t)
        cat, status, detail = classify(p, row, k)
        recs.append({"p": p, "t": t, "k": k, "row": row, "cat": cat, "status": status, "detail": detail})
    return recs


# ---- output -------------------------------------------------------------------------------------------

ROWS = [("nondet", "non-deterministic (bare runs differ)"),
        ("nondet-surprise", "non-deterministic, expected deterministic"),
        ("unshown", "non-deterministic expected, bare runs identical"),
        ("det", "deterministic (bare runs identical)"),
        ("other", "no ground truth (error, unavailable, not run)")]
COLS = [("right", "diverged, right kernel"), ("wrongfalse", "diverged, wrong kernel / false divergence"),
        ("passed", "passed (no divergence)"), ("error", "error / timeout"), ("skipped", "skipped")]


def table_cell(r):
    """The column of a record's category."""
    return {"right": "right", "surprise": "right", "wrong": "wrongfalse", "false": "wrongfalse",
            "missed": "passed", "pass": "passed", "unshown": "passed", "error": "error"}.get(r["cat"], "skipped")


def confusion(recs):
    counts = collections.defaultdict(collections.Counter)
    for r in recs:
        row = r["row"] if r["row"] in dict(ROWS) else "other"
        counts[row][table_cell(r)] += 1
        if table_cell(r) == "right" and r["k"]["source"] == "replay":
            counts[row]["confirmed"] += 1
    return counts


def render_table(counts, markdown, who="ktrace check"):
    head = [f"ground truth \\ {who}"] + [c[1] for c in COLS] + ["total"]
    rows = []
    for key, label in ROWS:
        c = counts.get(key, collections.Counter())
        total = sum(c[x] for x, _ in COLS)
        if not total:
            continue
        cells = [label]
        for x, _ in COLS:
            cell = str(c[x])
            if x == "right" and c[x] and who == "ktrace check":
                cell += f" ({c['confirmed']} by replay)"
            cells.append(cell)
        rows.append(cells + [str(total)])
    return render(head, rows, markdown)


def render(head, rows, markdown):
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    fmt = "  ".join("{:<%d}" % w for w in widths)
    return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths))] + [fmt.format(*r) for r in rows])


def program_rows(recs, dms):
    rows = []
    for r in recs:
        p, k, t = r["p"], r["k"], r["t"]
        truth = f"{t.status} ({t.how})" if t else "-"
        kern = (short_kernel(k["kernel"], 60) if k["kernel"] else "(none)") if k["state"] == "diverged" else "-"
        wall = f"{k['wall']:.1f}" if isinstance(k["wall"], float) else "-"
        dm = DEBUGMODE_LABEL.get(dms.get(p.name, {}).get("cat"), "-")
        rows.append([p.name, p.kind, p.expected + ("*" if "probabilistic" in p.flags else ""), truth,
                     f"{k['state']} ({k['source']})" if k["source"] else k["state"], kern,
                     CATEGORY_LABEL.get(r["cat"], r["cat"]), wall, dm])
    return ["program", "kind", "expected", "ground truth", "ktrace", "kernel named", "category", "wall s",
            "DebugMode"], rows


def debugmode_records(path, recs):
    """DebugMode's verdict on the programs it ran, classified like ktrace's."""
    lines = read_tagged(path, "DEBUGMODE") if path else {}
    out = {}
    for r in recs:
        f = lines.get(r["p"].name)
        if not f:
            continue
        verdict, op = f[0], f[1] if len(f) > 1 else ""
        row = r["row"]
        if verdict in ("unavailable", "error"):
            cat = verdict
        elif row == "det":
            cat = "false" if verdict == "diverged" else "pass"
        elif row in ("nondet", "unshown", "nondet-surprise"):
            if verdict != "diverged":
                cat = "unshown" if row == "unshown" else "missed"
            elif r["p"].dm and re.search(r["p"].dm, op):
                cat = "right"
            else:
                cat = "wrong" if row != "nondet-surprise" else "surprise"
        else:
            cat = "skipped"
        out[r["p"].name] = {"cat": cat, "op": op, "detail": f[2] if len(f) > 2 else ""}
    return out


def acceptance(recs):
    """The two acceptance RESULT lines."""
    lines = []
    det = [r for r in recs if r["row"] == "det" and r["cat"] in ("pass", "false")]
    det_errors = sum(1 for r in recs if r["row"] == "det" and r["cat"] == "error")
    false = [r["p"].name for r in recs if r["cat"] == "false"]
    if not det:
        lines.append(("verdict-no-false-divergence", "SKIP", "no deterministic program was judged"))
    else:
        lines.append(("verdict-no-false-divergence", "FAIL" if false else "PASS",
                      f"{len(false)} false divergences on {len(det)} deterministic programs judged "
                      f"({det_errors} more ended in an error)" + (f": {' '.join(false)}" if false else "")))
    nondet = [r for r in recs if r["row"] == "nondet" and r["cat"] not in ("skipped", "unshown")]
    unshown = sum(1 for r in recs if r["row"] == "nondet" and r["cat"] == "unshown")
    skipped = sum(1 for r in recs if r["p"].expected == "nondet" and r["cat"] == "skipped")
    counted = [r for r in nondet if "expected-miss" not in r["p"].flags]
    right = [r for r in counted if r["cat"] == "right"]
    if not counted:
        lines.append(("verdict-right-kernel", "SKIP", "no non-deterministic program showed its nondeterminism"))
    else:
        share = len(right) / len(counted)
        conf = sum(1 for r in right if r["k"]["source"] == "replay")
        others = [f"{r['p'].name}={r['cat']}" for r in counted if r["cat"] != "right"]
        exp = [r for r in nondet if "expected-miss" in r["p"].flags]
        exp_right = sum(1 for r in exp if r["cat"] == "right")
        lines.append(("verdict-right-kernel", "PASS" if share >= RIGHT_KERNEL_TARGET else "FAIL",
                      f"{len(right)}/{len(counted)} ({share:.0%}, target {RIGHT_KERNEL_TARGET:.0%}) "
                      f"non-deterministic programs name the culprit, {conf} confirmed by replay; "
                      f"expected misses (CUDA graphs) {exp_right}/{len(exp)} caught; not counted: {unshown} "
                      f"probabilistic programs whose nondeterminism did not show in the traced runs, {skipped} "
                      f"skipped" + (f"; not right: {' '.join(others)}" if others else "")))
    return lines


def markdown_report(recs, counts, dms, setup):
    head, rows = program_rows(recs, dms)
    parts = ["### Confusion table", "", setup, "", render_table(counts, True), "",
             "### Programs", "", render(head, rows, True), ""]
    if dms:
        dcounts = collections.defaultdict(collections.Counter)
        for r in recs:
            d = dms.get(r["p"].name)
            if d:
                dcounts[r["row"] if r["row"] in dict(ROWS) else "other"][table_cell({"cat": d["cat"]})] += 1
        parts += ["### PyTorch DebugMode on the same programs", "",
                  "Twice in one process, a hash of every op's outputs; \"right kernel\" means the first op whose "
                  "hash differs matches the program's op.", "", render_table(dcounts, True, "DebugMode"), ""]
    return "\n".join(parts)


def report(a):
    progs = read_list(a.list)
    if not progs:
        print("RESULT|verdict-suite|FAIL|no program list (verdict_programs.py --list failed?)")
        return 0
    truth = read_truth(a.truth)
    recs = evaluate(progs, truth, a.results)
    dms = debugmode_records(a.debugmode, recs)
    for r in recs:
        t = r["t"]
        tdet = f"; truth {t.status} ({t.how})" if t else "; no ground truth"
        print(f"RESULT|verdict-{r['p'].name}|{r['status']}|{CATEGORY_LABEL[r['cat']]}: {clean(r['detail'], 300)}"
              f"{clean(tdet, 80)}", flush=True)
    counts = confusion(recs)
    print()
    print(f"verdict suite: {len(recs)} programs; {a.setup}")
    print(render_table(counts, False))
    print()
    head, rows = program_rows(recs, dms)
    print(render(head, rows, False))
    if dms:
        print()
        print("PyTorch DebugMode (the same programs, twice in one process, tensor hashes per op):")
        for name, d in dms.items():
            print(f"  {name}: {DEBUGMODE_LABEL.get(d['cat'], d['cat'])} (first differing op {d['op']}; "
                  f"{clean(d['detail'], 120)})")
    print()
    for name, status, detail in acceptance(recs):
        print(f"RESULT|{name}|{status}|{clean(detail, 600)}")
    walls = [r["k"]["wall"] for r in recs if isinstance(r["k"]["wall"], float)]
    for r in recs:
        if isinstance(r["k"]["wall"], float):
            print(f"BENCH|verdict-{r['p'].name}-wall|{r['k']['wall']:.2f}|s|ktrace check ({a.setup})")
    if walls:
        print(f"BENCH|verdict-check-wall-median|{statistics.median(walls):.2f}|s|median over {len(walls)} programs")
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(markdown_report(recs, counts, dms, a.setup))
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description="verdict suite reports")
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("truth-merge")
    m.add_argument("outputs", nargs="+")
    r = sub.add_parser("report")
    r.add_argument("--list", required=True)
    r.add_argument("--results", required=True)
    r.add_argument("--truth", action="append", default=[])
    r.add_argument("--debugmode", default="")
    r.add_argument("--markdown", default="")
    r.add_argument("--setup", default="")
    a = ap.parse_args(argv)
    return truth_merge(a.outputs) if a.cmd == "truth-merge" else report(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
