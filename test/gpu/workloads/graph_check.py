"""test/gpu/workloads/graph_check.py: judge the CUDA graph runs of
test/gpu/70-graphs-*.sh.

    graph_check.py coverage --name NAME --traced OUT --json JSONL [--plain OUT] [--plain2 OUT]
                   [--whole-run] [--params] [--stated-limit REGEX]
        OUT: a program's stdout (the COUNT / EXPECT / EAGER / PARAM lines of
        test/gpu/graph_common.cuh, or the kt_common.py lines of a Python
        workload: WINDOW, PROFILE_NAME, OUTPUT); JSONL: `ktrace-dump --json` of
        the traced run's trace.  Prints
          RESULT|graphs-NAME-coverage|...     per kernel name, the LAUNCH records of
              executed kernels (not those made on a capturing stream) equal the
              ground truth: the profiler's kernels in the window (from the traced
              run's own profile when it has one, else the --plain run's; ktrace's
              own kernels aside), or with --whole-run the program's COUNT lines
              over the whole trace
          RESULT|graphs-NAME-hashed|...       the records come from graph launches
              (flag graph), and every one with pointer regions carries digests
              taken before and after the kernel (hashing inside the graph)
          RESULT|graphs-NAME-transparency|... the program's OUTPUT with ktrace
              (hashing on) equals the runs without (--plain, --plain2)
          RESULT|graphs-NAME-copies|...       (with a GRAPH_COPIES line) one MEMCPY and
              MEMSET record per memcpy and memset node of every graph launch
          RESULT|graphs-NAME-updates|...      (--params) the PARAM lines: after a
              node parameter update or an exec update the records carry the new
              scalar and pointer values (and name the new kernel)
        --stated-limit REGEX: kernels (conditional bodies) whose records may be
        missing when the trace states the limit (a GRAPH record untraced
        "conditional", or a NOTE that names conditional nodes).
    graph_check.py verdict MODE JSON RC LOG [KERNEL_RE] [--trace-dir DIR --dump PATH]
        Judges `ktrace check --json` (its stdout JSON, exit status, stderr LOG,
        which holds the program's output lines).  MODE nondet: exit 1 and the
        first divergence is KERNEL_RE, classified kernel_nondeterministic
        ("inputs identical"); a replay confirmation, when there is one, names it
        too; SKIP when no run differed at all.  MODE det: exit 0, no divergence,
        launches compared.  With --trace-dir (the check's --dir) the divergent
        launch is looked up in run 1's trace: the detail says whether it came
        from a graph launch.  Prints one line: PASS|FAIL|SKIP <detail>.
    graph_check.py selftest
        The checks above on synthetic data (runs without a GPU).

A LAUNCH record is from a graph launch when its launch_flags hold "graph" (or
the bit 0x80 an older ktrace-dump prints as a number), its api is "graph", or
it carries a "graph" reference object (docs/format.md, "Graph reference").
"""
import argparse
import collections
import glob
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kt_check  # noqa: E402  (read_lines, norm, demangle_all)

KTRACE_OWN = re.compile(r"^ktrace_")  # ktrace's own kernels (the checksum kernel), never the program's
# The kernels by which the driver runs some memcpy and memset nodes of a graph
# (CUPTI lists them as kernels, e.g. memcpy32_post); ktrace records those
# nodes as MEMCPY / MEMSET records of the graph launch.
DRIVER_COPY = re.compile(r"^(memcpy|memset)\d*_\w+$")


def result(name, status, detail):
    kt_check.result(name, status, detail)


# ---- the trace ------------------------------------------------------------------------------------

def launch_flags(r):
    f = r.get("launch_flags") or []
    return [f] if isinstance(f, str) else list(f)


def from_graph(r):
    flags = launch_flags(r)
    return "graph" in flags or "0x80" in flags or r.get("api") == "graph" or isinstance(r.get("graph"), dict)


def captured(r):
    return "capturing" in launch_flags(r)


class Trace:
    """What the checks need of `ktrace-dump --json`."""

    def __init__(self, lines):
        self.kernels, self.launches, self.graphs, self.notes, self.copies = {}, [], [], [], []
        self.counters, self.bad = {}, 0
        for line in lines:
            try:
                r = json.loads(line)
            except ValueError:
                self.bad += 1
                continue
            t = r.get("type")
            if t == "kernel":
                self.kernels[r.get("kernel_id")] = r
            elif t == "launch":
                self.launches.append(r)
            elif t == "graph":
                self.graphs.append(r)
            elif t in ("memcpy", "memset"):
                self.copies.append(r)
            elif t == "note":
                self.notes.append(str(r.get("text", "")))
            elif t == "counters":
                self.counters.update(r.get("counters") or {})
        self.launches.sort(key=lambda r: int(r.get("op_seq", -1)))

    @classmethod
    def load(cls, path):
        with open(path, errors="replace") as f:
            return cls(f)

    def names(self, r):
        """(mangled, demangled) of a launch's kernel."""
        k = self.kernels.get(r.get("kernel_id"), {})
        return r.get("mangled") or k.get("name") or "", k.get("demangled") or ""

    def executed(self, window=None):
        """The launch records of kernels that ran (in the window [t0, t1] when given)."""
        out = []
        for r in self.launches:
            if captured(r):
                continue
            if window and not window[0] <= int(r.get("time_ns", -1)) <= window[1]:
                continue
            out.append(r)
        return out

    def graph_copies(self, window=None):
        """MEMCPY and MEMSET records of graph launches (in the window when given)."""
        return [r for r in self.copies if from_graph(r) and
                (not window or window[0] <= int(r.get("time_ns", -1)) <= window[1])]

    def stated_limits(self):
        """Texts by which the trace states that conditional bodies are not recorded."""
        said = [f"GRAPH exec {g.get('exec_id')} untraced: {g.get('untraced')}" for g in self.graphs
                if str(g.get("untraced", "")) == "conditional"]
        return said + [n for n in self.notes if re.search(r"conditional", n, re.I)]


# ---- coverage -------------------------------------------------------------------------------------

def ground_truth(kv_traced, kv_plain, whole_run):
    """(Counter of normalised name -> count, where from, ktrace's own kernels seen)."""
    if whole_run:
        truth = collections.Counter()
        for v in kv_traced.get("COUNT", []):
            name, _, n = v.rpartition(" ")
            truth[kt_check.norm(name)] += int(n)
        return truth, "the program's own counts", collections.Counter()
    for kv, where in ((kv_traced, "profiler in the traced process"), (kv_plain, "profiler, run without ktrace")):
        if kv.get("PROFILE_NAME"):
            truth, own = collections.Counter(), collections.Counter()
            for v in kv["PROFILE_NAME"]:
                n, _, name = v.partition(" ")
                (own if KTRACE_OWN.match(name) else truth)[kt_check.norm(name)] += int(n)
            src = (kv.get("PROFILE_SOURCE") or ["CUDA profiler"])[-1]
            return truth, f"{src} ({where})", own
    return None, "no profile (" + " ".join((kv_traced.get("PROFILE_UNAVAILABLE") or
                                             kv_plain.get("PROFILE_UNAVAILABLE") or ["--profile not given"])[-1:]) + ")", None


def match_names(trace, launches, truth, cxxfilt):
    """Assign each launch to a ground-truth name.  Returns (per-name trace
    counts, unmatched launch names)."""
    mangled = sorted({trace.names(r)[0] for r in launches if trace.names(r)[0].startswith("_Z")})
    filt = kt_check.demangle_all(mangled, cxxfilt)
    got, unmatched = collections.Counter(), collections.Counter()
    for r in launches:
        m, d = trace.names(r)
        for cand in (d, m, filt.get(m, "")):
            c = kt_check.norm(cand)
            if c and c in truth:
                got[c] += 1
                break
        else:
            unmatched[d or m or "(no name)"] += 1
    return got, unmatched


def check_coverage(tag, trace, kv_traced, kv_plain, whole_run, stated_re, cxxfilt):
    window = None
    if not whole_run:
        if not kv_traced.get("WINDOW"):
            result(tag + "-coverage", "FAIL", "the traced run printed no WINDOW (it did not finish)")
            return None
        window = tuple(int(v) for v in kv_traced["WINDOW"][-1].split())
    launches = trace.executed(window)
    truth, src, own = ground_truth(kv_traced, kv_plain, whole_run)
    ncap = sum(1 for r in trace.launches if captured(r))
    where = "whole run" if whole_run else "window"
    if truth is None:
        result(tag + "-coverage", "SKIP", f"{len(launches)} records in the {where}; {src}")
        return launches
    drv = {n: c for n, c in truth.items() if DRIVER_COPY.match(n)}
    for n in drv:
        del truth[n]
    got, unmatched = match_names(trace, launches, truth, cxxfilt)
    limits = trace.stated_limits()
    short = []
    for name in sorted(set(truth) | set(got)):
        if truth[name] != got[name]:
            if stated_re and re.search(stated_re, name) and got[name] < truth[name] and limits:
                short.append(name)
                continue
            print(f"{tag}: {name[:200]}: {truth[name]} by the {src.split(' (')[0]}, {got[name]} records")
    bad = [n for n in set(truth) | set(got) if truth[n] != got[n] and n not in short]
    for name, n in unmatched.most_common(8):
        print(f"{tag}: ktrace only: {n}x {name[:200]}")
    extra = f"; {ncap} records made on a capturing stream set aside" if ncap else ""
    extra += f"; ktrace's own kernels in the profile set aside: {dict(own)}" if own else ""
    ngraph = sum(1 for r in launches if from_graph(r))
    if drv:
        ncopies = len(trace.graph_copies(window))
        extra += (f"; the driver's copy kernels {drv} checked against {ncopies} MEMCPY/MEMSET records of graph "
                  "launches")
        if sum(drv.values()) > ncopies:
            bad.append("driver copy kernels: more than the graph copy/memset records")
    if bad or unmatched:
        result(tag + "-coverage", "FAIL", f"{len(bad)} of {len(set(truth) | set(got))} kernel names differ in count, "
               f"{sum(unmatched.values())} records of kernels the {src} did not see ({where}; {src}){extra}")
    else:
        lim = f"; not recorded, the limit stated: {', '.join(short)} ({limits[0][:120]})" if short else ""
        result(tag + "-coverage", "PASS", f"{sum(got.values())} records == {sum(truth.values()) - sum(truth[n] for n in short)} "
               f"kernels in {len(truth)} names ({where}; {src}); {ngraph} from graph launches{lim}{extra}")
    return launches


def check_hashed(tag, trace, launches, kv, whole_run):
    graph = [r for r in launches if from_graph(r)]
    eager = kv.get("EAGER")
    limits = trace.stated_limits()
    if not graph:
        result(tag + "-hashed", "FAIL", f"none of {len(launches)} records comes from a graph launch "
               "(no flag graph): the graph replays were not traced")
        return
    want = None
    if whole_run and eager and kv.get("EXPECT"):
        want = int(kv["EXPECT"][-1]) - int(eager[-1])
    unhashed, skipped = [], 0
    for r in graph:
        regs = [g for g in (r.get("regions") or []) if "unhashed" not in (g.get("flags") or [])]
        if "hash_skipped" in launch_flags(r):
            skipped += 1
        if regs and not any(g.get("pre_hash") and g.get("post_hash") for g in regs):
            unhashed.append(r)
    for r in unhashed[:4]:
        print(f"{tag}: unhashed graph launch seq {r.get('op_seq')} {trace.names(r)[1][:100] or trace.names(r)[0][:100]}")
    ctr = trace.counters.get("graph_launches_unhashed")
    ghashed = sum(1 for g in trace.graphs if g.get("hashed") is True)
    detail = (f"{len(graph)} records from graph launches{'' if want is None else f' (program: {want})'}, "
              f"{len(graph) - len(unhashed)} with digests before and after; counters graph_launches="
              f"{trace.counters.get('graph_launches', '?')} graph_launches_unhashed={ctr if ctr is not None else '?'}; "
              f"{ghashed} of {len(trace.graphs)} GRAPH records hashed")
    if want is not None and len(graph) != want and not limits:
        result(tag + "-hashed", "FAIL", detail + " (not one record from a graph launch per kernel node the program ran)")
    elif unhashed or skipped or ctr:
        status = "SKIP" if limits else "FAIL"
        why = f" (the trace states a limit: {limits[0][:100]})" if limits else ""
        result(tag + "-hashed", status, detail + f"; {len(unhashed)} without digests, {skipped} hash_skipped{why}")
    else:
        result(tag + "-hashed", "PASS", detail)


def check_transparency(tag, kv_traced, kv_plain, kv_plain2):
    t = (kv_traced.get("OUTPUT") or [None])[-1]
    p1 = (kv_plain.get("OUTPUT") or [None])[-1]
    p2 = (kv_plain2.get("OUTPUT") or [None])[-1] if kv_plain2 is not None else p1
    if not p1 or not p2:
        result(tag + "-transparency", "FAIL", "a run without ktrace printed no OUTPUT")
    elif not t:
        result(tag + "-transparency", "FAIL", "the traced run printed no OUTPUT")
    elif p1 != p2:
        result(tag + "-transparency", "SKIP", f"not deterministic without ktrace ({p1[:16]} vs {p2[:16]}): nothing to compare")
    elif t != p1:
        result(tag + "-transparency", "FAIL", f"output {t[:16]} with ktrace (hashing on) != {p1[:16]} without")
    else:
        result(tag + "-transparency", "PASS", f"output {t[:16]} bitwise identical with ktrace (hashing on) and without")


def check_copies(tag, trace, kv):
    """GRAPH_COPIES memcpy=<n> memset=<n>: records of copy and memset nodes of graph launches."""
    want = dict(kvp.split("=", 1) for kvp in kv["GRAPH_COPIES"][-1].split())
    got = collections.Counter(r.get("type") for r in trace.copies
                              if isinstance(r.get("graph"), dict) or "graph" in (r.get("copy_flags") or []))
    bad = [f"{t}: {got[t]} records, {want[t]} nodes run" for t in ("memcpy", "memset") if got[t] != int(want[t])]
    if bad:
        result(tag + "-copies", "FAIL", "; ".join(bad) + " (records of graph launches' copy and memset nodes)")
    else:
        result(tag + "-copies", "PASS", f"{got['memcpy']} MEMCPY and {got['memset']} MEMSET records from graph "
               "launches, one per node run")


def param_value(r, off, kind):
    raw = bytes.fromhex(r.get("param_bytes") or "")
    if kind == "f32":
        return struct.unpack_from("<f", raw, off)[0] if len(raw) >= off + 4 else None
    return struct.unpack_from("<Q", raw, off)[0] if len(raw) >= off + 8 else None


def check_params(tag, trace, launches, kv):
    """The PARAM lines against the records of each kernel, in launch order."""
    specs = kv.get("PARAM", [])
    if not specs:
        result(tag + "-updates", "FAIL", "the program printed no PARAM line")
        return
    by_kernel = collections.defaultdict(list)
    for r in launches:
        by_kernel[trace.names(r)[0]].append(r)
    bad, checked = [], 0
    for spec in specs:
        f = dict(kvp.split("=", 1) for kvp in spec.split())
        recs = by_kernel.get(f["kernel"], [])[int(f["skip"]):int(f["skip"]) + int(f["count"])]
        if len(recs) != int(f["count"]):
            bad.append(f"{f['kernel']}: {len(recs)} records from #{f['skip']}, program ran {f['count']}")
            continue
        for key, want in f.items():
            m = re.match(r"(f32|ptr)@(\d+)$", key)
            if not m:
                continue
            want_v = float(want) if m.group(1) == "f32" else int(want, 16)
            for r in recs:
                checked += 1
                got = param_value(r, int(m.group(2)), m.group(1))
                if got != want_v:
                    bad.append(f"{f['kernel']} seq {r.get('op_seq')}: {key} = {got!r}, program set {want}")
                    break
    causes = collections.Counter(str(g.get("cause", "?")) for g in trace.graphs)
    gr = f"; GRAPH records by cause: {dict(causes)}" if trace.graphs else "; no GRAPH record in the dump"
    need = {"instantiate", "node_update", "exec_update"}
    if trace.graphs and not need <= set(causes):
        bad.append(f"GRAPH records lack the causes {sorted(need - set(causes))}")
    if bad:
        result(tag + "-updates", "FAIL", "; ".join(bad[:3]) + gr)
    else:
        result(tag + "-updates", "PASS", f"{len(specs)} parameter settings, {checked} values in the records as the "
               f"program set them (node parameter update, exec update){gr}")


def cmd_coverage(a):
    tag = "graphs-" + a.name
    kv_t = kt_check.read_lines(a.traced)
    kv_p = kt_check.read_lines(a.plain) if a.plain else collections.defaultdict(list)
    kv_p2 = kt_check.read_lines(a.plain2) if a.plain2 else None
    try:
        trace = Trace.load(a.json)
    except OSError as e:
        result(tag + "-coverage", "FAIL", f"no dump of the trace: {e}")
        return 0
    if trace.bad:
        print(f"{tag}: {trace.bad} undecodable JSON lines from ktrace-dump")
    print(f"{tag}: trace: {len(trace.launches)} launch records ({sum(from_graph(r) for r in trace.launches)} "
          f"from graph launches), {len(trace.graphs)} GRAPH records, counters {trace.counters}")
    for n in trace.notes[:6]:
        print(f"{tag}: note: {n[:300]}")
    launches = check_coverage(tag, trace, kv_t, kv_p, a.whole_run, a.stated_limit, a.cxxfilt)
    if launches is not None:
        check_hashed(tag, trace, launches, kv_t, a.whole_run)
        if a.params:
            check_params(tag, trace, launches, kv_t)
        if kv_t.get("GRAPH_COPIES"):
            check_copies(tag, trace, kv_t)
    if a.plain:
        check_transparency(tag, kv_t, kv_p, kv_p2)
    return 0


# ---- ktrace check's verdict -----------------------------------------------------------------------

def program_outputs(log):
    return [line.split()[1] for line in log.splitlines() if line.startswith("OUTPUT ") and len(line.split()) > 1]


def divergent_launch_in_graph(trace_dir, dump, seq):
    """'from a graph launch' / 'an ordinary launch' / '' (unknown) for launch seq of run 1."""
    runs = sorted(glob.glob(os.path.join(trace_dir, "run1-*.ktrace")))
    if not runs or not dump:
        return ""
    try:
        p = subprocess.run([dump, "--json", "--range", str(seq), runs[0]], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return ""
    for line in p.stdout.splitlines():
        if f'"op_seq":{seq},' not in line or '"type":"launch"' not in line:
            continue
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("type") == "launch" and int(r.get("op_seq", -1)) == seq:
            return "from a graph launch" if from_graph(r) else "an ordinary launch, not from a graph"
    return ""


def judge(mode, doc, rc, log, kre, where=lambda seq: ""):
    """(status, detail) for one `ktrace check --json` outcome."""
    if isinstance(doc, dict) and isinstance(doc.get("comparisons"), list):  # ktrace check --json: one object
        doc = doc["comparisons"]
    comps = [c for c in (doc if isinstance(doc, list) else [doc]) if isinstance(c, dict)]
    outs = program_outputs(log)
    if not comps:
        tail = " | ".join(log.strip().splitlines()[-3:])
        return "FAIL", f"ktrace check exit {rc}, no JSON report; log: {tail[:300]}"
    firsts = [(c, (c.get("divergences") or [None])[0]) for c in comps]
    if mode == "det":
        div = [(c, d) for c, d in firsts if d]
        if rc != 0 or div:
            what = "; ".join(f"{d.get('kernel', '?')[:80]} ({d.get('classification')})" for _, d in div[:2])
            res = comps[0].get("result")
            return "FAIL", f"ktrace check exit {rc} (want 0): {what or res}"
        matched = [c.get("launches", {}).get("matched", 0) for c in comps]
        if not all(matched):
            return "FAIL", "no launch compared"
        unv = sum(c.get("launches", {}).get("unverified", 0) for c in comps)
        return "PASS", (f"{len(comps) + 1} runs, no divergence: {matched[0]} launches compared per run, {unv} unverified; "
                        f"program outputs {'identical' if len(set(outs)) <= 1 else 'DIFFER: ' + ' '.join(o[:12] for o in outs)}")
    div = [(c, d) for c, d in firsts if d]
    if not div:
        if len(set(outs)) > 1:
            return "FAIL", f"program outputs differ ({' '.join(o[:12] for o in outs)}) but no divergence (exit {rc})"
        if rc == 0:
            return "SKIP", f"outputs identical in all {len(outs)} runs: the atomics happened to add in one order"
        return "FAIL", f"ktrace check exit {rc} without a divergence"
    c, d = div[0]
    name = (d.get("kernel") or "") or (d.get("mangled") or "")
    desc = (f"{name[:80]} launch {d.get('op_seq_a', d.get('seq_a'))}/{d.get('op_seq_b', d.get('seq_b'))} -> {d.get('classification')}")
    if not (re.search(kre, (d.get("kernel") or "")) or re.search(kre, (d.get("mangled") or ""))):
        return "FAIL", f"first divergence is not /{kre}/: {desc}"
    if d.get("classification") != "kernel_nondeterministic":
        ins = ",".join(str(i.get("arg")) for i in (d.get("inputs_differ") or []) + (d.get("inputs_unverified") or []))
        return "FAIL", f"{desc} (inputs differing or unverified: {ins})"
    conf = c.get("confirmation") or {}
    cdesc = "digests only"
    if conf.get("method") == "replay":
        tried = [e for e in conf.get("replayed") or [] if isinstance(e, dict)]
        hit = next((e for e in tried if e.get("outcome") == "confirmed"), None)
        if hit and not (re.search(kre, (hit.get("kernel") or "")) or re.search(kre, (hit.get("mangled") or ""))):
            return "FAIL", f"{desc}; but the replay confirmed another kernel: {hit.get('kernel', '')[:80]}"
        if not hit:
            said = "; ".join(f"{e.get('kernel', '?')[:60]}: {e.get('outcome', '?')} ({e.get('reason', '')[:80]}"
                             f"{'; ' + ','.join(x.get('kind', '?') for x in e.get('explanations') or []) if e.get('explanations') else ''})"
                             for e in tried[:2])
            return "FAIL", f"{desc}; the replay did not confirm it: {conf.get('verdict', '?')}: {said or 'no replay'}"
        cdesc = f"replay: {conf.get('verdict', '?')}"
    if rc != 1:
        return "FAIL", f"ktrace check exit {rc} (want 1): {desc}; {cdesc}"
    w = where(int(d.get("op_seq_a", d.get("seq_a", -1))))
    return "PASS", (f"{len(div)}/{len(comps)} comparisons diverged; {desc}; inputs identical "
                    f"({d.get('inputs_equal_pointers')} pointers, {d.get('inputs_equal_scalars')} scalars); {cdesc}"
                    + (f"; {w}" if w else ""))


def body_replay_confirmed(doc, detail):
    """(status, detail): the replay confirmed a kernel node of a conditional body, naming its iteration."""
    comps = doc.get("comparisons") if isinstance(doc, dict) and isinstance(doc.get("comparisons"), list) else [doc]
    for c in comps:
        conf = (c or {}).get("confirmation") or {}
        for e in conf.get("replayed") or []:
            if isinstance(e, dict) and e.get("outcome") == "confirmed" and e.get("iteration") is not None:
                return "PASS", f"{detail}; confirmed at iteration {e['iteration']} of its body"
    return "FAIL", f"{detail}; but no replay confirmed a body's kernel node at an iteration"


def top_replay_confirmed(doc, detail):
    """(status, detail): the replay confirmed a top-level kernel node of a graph from its graph launch."""
    comps = doc.get("comparisons") if isinstance(doc, dict) and isinstance(doc.get("comparisons"), list) else [doc]
    for c in comps:
        conf = (c or {}).get("confirmation") or {}
        for e in conf.get("replayed") or []:
            if isinstance(e, dict) and e.get("outcome") == "confirmed" and e.get("iteration") is None:
                return "PASS", f"{detail}; confirmed by replaying the top-level node from its graph launch"
    return "FAIL", f"{detail}; but no replay confirmed it as a top-level node"


def cmd_verdict(a):
    try:
        log = open(a.log, errors="replace").read()
    except OSError:
        log = ""
    try:
        with open(a.json) as f:
            text = f.read()
        doc = json.loads(text) if text.strip() else None
    except (OSError, ValueError):
        doc = None
    where = (lambda seq: divergent_launch_in_graph(a.trace_dir, a.dump, seq)) if a.trace_dir else (lambda seq: "")
    status, detail = judge(a.mode, doc, int(a.rc), log, a.kernel_re or ".", where)
    if status == "PASS" and a.require_graph and "not from a graph" in detail:
        status = "FAIL"
    if status == "PASS" and a.require_body_replay:
        status, detail = body_replay_confirmed(doc, detail)
    if status == "PASS" and a.require_top_replay:
        status, detail = top_replay_confirmed(doc, detail)
    print(status, detail)
    return 0


# ---- self-test --------------------------------------------------------------------------------------

def _launch(seq, kid, t, graph=True, regions=None, flags=(), params=""):
    r = {"type": "launch", "op_seq": seq, "kernel_id": kid, "time_ns": t, "api": "graph" if graph else "cuLaunchKernel",
         "launch_flags": (["graph"] if graph else []) + list(flags), "param_bytes": params,
         "regions": regions if regions is not None else [{"flags": ["pre", "post"], "pre_hash": "01", "post_hash": "02"}]}
    return json.dumps(r)


def _capture(fn, *args):
    import io
    import contextlib
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn(*args)
    return buf.getvalue()


def selftest():
    fails = []

    def expect(cond, what):
        if not cond:
            fails.append(what)

    kern = [json.dumps({"type": "kernel", "kernel_id": i, "name": n, "demangled": n})
            for i, n in ((1, "kt_a"), (2, "kt_b"), (3, "_Z5cplusPf"))]
    kern.append(json.dumps({"type": "kernel", "kernel_id": 3, "name": "_Z5cplusPf", "demangled": "cplus(float*)"}))
    a16 = struct.pack("<Qf", 0x7000, 0.5).hex()
    b16 = struct.pack("<Qf", 0x8000, 0.25).hex()
    lines = kern + [_launch(1, 1, 5, graph=False), _launch(2, 1, 10, params=a16), _launch(3, 2, 11, params=a16),
                    _launch(4, 1, 12, params=b16), _launch(5, 2, 13, params=b16),
                    _launch(6, 3, 14), _launch(7, 1, 15, flags=["capturing"], graph=False),
                    _launch(8, 1, 99)]
    tr = Trace(lines)
    expect(len(tr.executed()) == 7 and len(tr.executed((10, 20))) == 5, "executed/window")
    kv = collections.defaultdict(list, {"WINDOW": ["10 20"], "PROFILE_NAME": ["2 kt_a", "2 kt_b", "1 cplus(float *)",
                                                                                 "3 ktrace_hash_r8"],
                                        "OUTPUT": ["abc"]})
    out = _capture(check_coverage, "t", tr, kv, collections.defaultdict(list), False, None, None)
    expect("RESULT|t-coverage|PASS|5 records == 5 kernels" in out, "coverage pass: " + out)
    expect("ktrace's own kernels" in out, "own kernels reported")
    kv2 = collections.defaultdict(list, dict(kv, PROFILE_NAME=["3 kt_a", "2 kt_b"]))
    out = _capture(check_coverage, "t", tr, kv2, collections.defaultdict(list), False, None, None)
    expect("RESULT|t-coverage|FAIL" in out and "kt_a: 3 by the" in out and "ktrace only: 1x cplus" in out,
           "coverage fail: " + out)
    kvw = collections.defaultdict(list, {"COUNT": ["kt_a 4", "kt_b 2", "_Z5cplusPf 1"], "EXPECT": ["7"], "EAGER": ["1"]})
    out = _capture(check_coverage, "t", tr, kvw, collections.defaultdict(list), True, None, None)
    expect("RESULT|t-coverage|PASS|7 records == 7 kernels" in out, "whole-run coverage: " + out)
    out = _capture(check_hashed, "t", tr, tr.executed(), kvw, True)
    expect("RESULT|t-hashed|PASS|6 records from graph launches (program: 6)" in out, "hashed: " + out)
    tr2 = Trace(kern + [_launch(2, 1, 10, regions=[{"flags": ["pre"], "pre_hash": "01", "post_hash": None}])])
    out = _capture(check_hashed, "t", tr2, tr2.executed(), collections.defaultdict(list), False)
    expect("RESULT|t-hashed|FAIL" in out and "1 without digests" in out, "unhashed: " + out)
    tr3 = Trace(kern + [_launch(2, 1, 10, graph=False)])
    out = _capture(check_hashed, "t", tr3, tr3.executed(), collections.defaultdict(list), False)
    expect("RESULT|t-hashed|FAIL|none of 1 records" in out, "no graph: " + out)
    kvp = collections.defaultdict(list, {"PARAM": ["kernel=kt_a skip=1 count=1 f32@8=0.5 ptr@0=0x7000",
                                                   "kernel=kt_a skip=2 count=1 f32@8=0.25 ptr@0=0x8000"]})
    out = _capture(check_params, "t", tr, tr.executed(), kvp)
    expect("RESULT|t-updates|PASS|2 parameter settings, 4 values" in out, "params: " + out)
    kvp["PARAM"][1] = "kernel=kt_a skip=2 count=1 f32@8=0.75 ptr@0=0x8000"
    out = _capture(check_params, "t", tr, tr.executed(), kvp)
    expect("RESULT|t-updates|FAIL" in out and "f32@8 = 0.25" in out, "params fail: " + out)
    cp = Trace([json.dumps({"type": "memcpy", "copy_flags": ["async", "graph"], "graph": {"launch": 0}}),
                json.dumps({"type": "memcpy", "copy_flags": ["async"]}),
                json.dumps({"type": "memset", "copy_flags": ["async", "graph"], "graph": {"launch": 0}})])
    out = _capture(check_copies, "t", cp, {"GRAPH_COPIES": ["memcpy=1 memset=1"]})
    expect("RESULT|t-copies|PASS|1 MEMCPY and 1 MEMSET" in out, "copies: " + out)
    out = _capture(check_copies, "t", cp, {"GRAPH_COPIES": ["memcpy=2 memset=1"]})
    expect("RESULT|t-copies|FAIL|memcpy: 1 records, 2 nodes run" in out, "copies fail: " + out)
    lim = Trace(kern + [json.dumps({"type": "graph", "exec_id": 1, "untraced": "conditional", "cause": "instantiate"}),
                        _launch(2, 1, 10)])
    kvl = collections.defaultdict(list, {"COUNT": ["kt_a 1", "kt_b 3"]})
    out = _capture(check_coverage, "t", lim, kvl, collections.defaultdict(list), True, "kt_b", None)
    expect("RESULT|t-coverage|PASS" in out and "limit stated: kt_b" in out, "stated limit: " + out)
    for p1, p2, t, want in (("a", "a", "a", "PASS"), ("a", "b", "a", "SKIP"), ("a", "a", "b", "FAIL")):
        out = _capture(check_transparency, "t", {"OUTPUT": [t]}, {"OUTPUT": [p1]}, {"OUTPUT": [p2]})
        expect(f"RESULT|t-transparency|{want}" in out, f"transparency {p1}{p2}{t}: {out}")
    div = {"kernel": "kt_g_atomic_sum", "mangled": "kt_g_atomic_sum", "seq_a": 7, "seq_b": 7,
           "classification": "kernel_nondeterministic", "inputs_equal_pointers": 1, "inputs_equal_scalars": 1}
    doc = {"result": "diverged", "divergences": [div], "launches": {"matched": 9, "unverified": 0},
           "confirmation": {"method": "replay", "verdict": "confirmed",
                            "replayed": [{"kernel": "kt_g_atomic_sum", "outcome": "confirmed"}]}}
    st, det = judge("nondet", doc, 1, "OUTPUT 1\nOUTPUT 2\n", "atomic_sum", lambda s: "from a graph launch")
    expect(st == "PASS" and "from a graph launch" in det and "replay: confirmed" in det, f"judge nondet: {st} {det}")
    st, _ = judge("nondet", doc, 1, "", "block_sum")
    expect(st == "FAIL", "judge wrong kernel")
    nrep = dict(doc, confirmation={"method": "replay", "verdict": "unconfirmed (not reproduced)", "replayed": [
        {"kernel": "kt_g_atomic_sum", "outcome": "not_reproduced", "reason": "identical in 8 replays",
         "explanations": [{"kind": "isolation"}]}]})
    st, det = judge("nondet", nrep, 1, "", "atomic_sum")
    expect(st == "FAIL" and "did not confirm" in det and "isolation" in det, f"judge replay not reproduced: {det}")
    expect(judge("nondet", dict(doc, confirmation={"method": "digests only"}), 1, "", "atomic")[0] == "PASS",
           "judge digests only")
    expect(body_replay_confirmed(doc, "d")[0] == "FAIL", "body replay without an iteration")
    body = dict(doc, confirmation={"method": "replay", "verdict": "confirmed", "replayed": [
        {"kernel": "kt_g_atomic_sum", "outcome": "confirmed", "iteration": 3}]})
    st, det = body_replay_confirmed({"comparisons": [body]}, "d")
    expect(st == "PASS" and "iteration 3" in det, f"body replay confirmed: {st} {det}")
    doc2 = dict(doc, divergences=[dict(div, classification="inputs_differ", inputs_differ=[{"arg": "y"}])])
    expect(judge("nondet", doc2, 1, "", "atomic")[0] == "FAIL", "judge inputs differ")
    nodiv = {"result": "identical", "divergences": [], "launches": {"matched": 9, "unverified": 1}}
    expect(judge("nondet", nodiv, 0, "OUTPUT 1\nOUTPUT 1\n", "atomic")[0] == "SKIP", "judge nothing to find")
    expect(judge("nondet", nodiv, 0, "OUTPUT 1\nOUTPUT 2\n", "atomic")[0] == "FAIL", "judge missed")
    expect(judge("det", nodiv, 0, "OUTPUT 1\nOUTPUT 1\n", "")[0] == "PASS", "judge det pass")
    expect(judge("det", doc, 1, "", "")[0] == "FAIL", "judge det false divergence")
    expect(judge("det", [nodiv, nodiv], 0, "", "")[0] == "PASS", "judge det, list of comparisons")
    expect(judge("det", None, 2, "ktrace check: boom\n", "")[0] == "FAIL", "judge no JSON")
    # the XSpace reader of kt_common.py on a message built here
    import kt_common

    def fld(n, payload):
        if isinstance(payload, int):
            return _pbv((n << 3) | 0) + _pbv(payload)
        return _pbv((n << 3) | 2) + _pbv(len(payload)) + payload
    ev_md = lambda k, name: fld(4, fld(1, k) + fld(2, fld(1, k) + fld(2, name.encode())))
    st_md = lambda k, name: fld(5, fld(1, k) + fld(2, fld(1, k) + fld(2, name.encode())))
    ev = lambda mid, sid: fld(4, fld(1, mid) + fld(4, fld(1, sid)))
    line = fld(3, fld(2, b"Stream #7(compute)") + ev(1, 9) + ev(1, 9) + ev(2, 9) + ev(3, 8))
    other = fld(3, fld(2, b"XLA Ops") + ev(1, 9))
    plane = fld(1, fld(2, b"/device:GPU:0") + ev_md(1, "fusion_1") + ev_md(2, "input_scatter_fusion")
                + ev_md(3, "MemcpyD2H") + st_md(9, "kernel_details") + st_md(8, "memcpy_details") + line + other)
    host = fld(1, fld(2, b"/host:CPU") + ev_md(1, "fusion_1") + st_md(9, "kernel_details")
               + fld(3, fld(2, b"Stream #1") + ev(1, 9)))
    got = kt_common.xspace_kernels(plane + host)
    expect(got == collections.Counter({"fusion_1": 2, "input_scatter_fusion": 1}), f"xspace: {got}")
    for f in fails:
        print("selftest FAIL:", f[:600])
    print("selftest:", "FAIL" if fails else "PASS", f"({len(fails)} failures)")
    return 1 if fails else 0


def _pbv(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("coverage")
    c.add_argument("--name", required=True)
    c.add_argument("--traced", required=True)
    c.add_argument("--json", required=True)
    c.add_argument("--plain")
    c.add_argument("--plain2")
    c.add_argument("--whole-run", action="store_true")
    c.add_argument("--params", action="store_true")
    c.add_argument("--stated-limit", default="")
    c.add_argument("--cxxfilt", default=__import__("shutil").which("c++filt"))
    v = sub.add_parser("verdict")
    v.add_argument("mode", choices=["nondet", "det"])
    v.add_argument("json")
    v.add_argument("rc")
    v.add_argument("log")
    v.add_argument("kernel_re", nargs="?", default="")
    v.add_argument("--trace-dir")
    v.add_argument("--dump")
    v.add_argument("--require-graph", action="store_true",
                   help="FAIL when the divergent launch is known to be an ordinary launch")
    v.add_argument("--require-body-replay", action="store_true",
                   help="FAIL unless a replay confirmed a conditional body's kernel node at its iteration")
    v.add_argument("--require-top-replay", action="store_true",
                   help="FAIL unless a replay confirmed a kernel node outside any conditional body")
    sub.add_parser("selftest")
    a = ap.parse_args(argv)
    if a.cmd == "coverage":
        return cmd_coverage(a)
    if a.cmd == "verdict":
        return cmd_verdict(a)
    return selftest()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
