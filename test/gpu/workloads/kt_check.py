"""test/gpu/workloads/kt_check.py: compare a workload run without ktrace (with
the CUDA profiler) to the same run under ktrace.

    kt_check.py --name NAME --plain PLAIN.out --traced TRACED.out --json TRACE.jsonl
                [--inductor] [--expect-names KERNEL=a,b,c] [--cxxfilt PATH]

PLAIN.out / TRACED.out are the workloads' stdout (kt_common.py lines);
TRACE.jsonl is `ktrace-dump --json` of the traced run's trace.  Prints
RESULT|capture-NAME-<check>|PASS|FAIL|SKIP|detail lines:
  count   LAUNCH records in the window == kernels the profiler counted there
          (or the workload's EXPECT when the profiler is unavailable)
  clock   in each thread, LAUNCH times rise with op_seq (to 1 us: the
          writer converts the launch path's TSC readings, interpose/model/launch_clock.h)
  names   every launch in the window has a name, and the multiset of names
          equals the profiler's (demangled; whitespace ignored)
  output  the outputs' sha256 are identical with and without ktrace
  argnames (--inductor) Triton kernels carry Inductor/Triton argument names,
          C++ kernels carry demangled parameter types
  launchers (--inductor) Triton kernels came through both cuModuleLoad
          (Inductor's static launcher) and cuModuleLoadData (Triton's launcher)
  expect-names (--expect-names) the named kernel's first parameters
"""
import argparse
import collections
import json
import re
import shutil
import subprocess
import sys


def result(name, status, detail):
    detail = detail.replace("|", "/").replace("\n", " ")
    print("RESULT|%s|%s|%s" % (name, status, detail[:400]), flush=True)


def read_lines(path):
    kv = collections.defaultdict(list)
    try:
        with open(path, errors="replace") as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition(" ")
                kv[k].append(v)
    except OSError:
        pass
    return kv


def norm(s):
    return re.sub(r"\s+", "", s or "")


def demangle_all(names, cxxfilt):
    if not cxxfilt or not names:
        return {}
    try:
        p = subprocess.run([cxxfilt], input="\n".join(names) + "\n", capture_output=True, text=True, timeout=60)
        out = p.stdout.split("\n")
        return {n: out[i] for i, n in enumerate(names) if i < len(out)}
    except (OSError, subprocess.SubprocessError):
        return {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--plain", required=True)
    ap.add_argument("--traced", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--inductor", action="store_true")
    ap.add_argument("--expect-names", action="append", default=[])
    ap.add_argument("--cxxfilt", default=shutil.which("c++filt"))
    a = ap.parse_args()
    tag = "capture-" + a.name

    plain, traced = read_lines(a.plain), read_lines(a.traced)
    if not traced.get("WINDOW") or not traced.get("OUTPUT"):
        result(tag + "-run", "FAIL", "traced run printed no WINDOW/OUTPUT (crash?)")
        return
    if not plain.get("OUTPUT"):
        result(tag + "-run", "FAIL", "run without ktrace printed no OUTPUT")
        return
    t0, t1 = (int(v) for v in traced["WINDOW"][-1].split())

    kernels, modules, launches = {}, {}, []
    by_tid = collections.defaultdict(list)
    counters, notes, nrec, bad_json = {}, [], 0, 0
    with open(a.json, errors="replace") as f:
        for line in f:
            nrec += 1
            try:
                r = json.loads(line)
            except ValueError:
                bad_json += 1
                continue
            t = r.get("type")
            if t == "kernel":
                kernels[r.get("kernel_id")] = r
            elif t == "module":
                modules[r.get("module_id")] = r
            elif t == "launch":
                by_tid[r.get("tid")].append((int(r.get("op_seq", -1)), int(r.get("time_ns", -1))))
                if t0 <= int(r.get("time_ns", -1)) <= t1:
                    launches.append(r)
            elif t == "counters":
                counters.update(r.get("counters", {}))
            elif t == "note":
                notes.append(r.get("text", ""))
    print("trace: %d records, %d launches in window, %d kernels, %d modules, counters %s" %
          (nrec, len(launches), len(kernels), len(modules), counters))
    for n in notes[:5]:
        print("note:", n)
    if bad_json:
        result(tag + "-run", "FAIL", "%d undecodable JSON lines from ktrace-dump" % bad_json)

    def kname(rec):
        k = kernels.get(rec.get("kernel_id"), {})
        return rec.get("mangled") or k.get("name") or "", k.get("demangled") or ""

    # ---- count
    prof = plain.get("PROFILE")
    expect = traced.get("EXPECT") or plain.get("EXPECT")
    if prof:
        want, src = int(prof[-1]), "profiler"
    elif expect:
        want, src = int(expect[-1]), "workload (profiler unavailable: %s)" % " ".join(plain.get("PROFILE_UNAVAILABLE", ["?"]))
    else:
        want, src = None, ""
    if want is None:
        result(tag + "-count", "SKIP", "no profiler count and no expected count")
    elif want == len(launches):
        result(tag + "-count", "PASS", "%d launch records == %d kernels (%s)" % (len(launches), want, src))
    else:
        result(tag + "-count", "FAIL", "%d launch records != %d kernels (%s)" % (len(launches), want, src))

    # ---- clock
    back, worst, total = 0, 0, 0
    for recs in by_tid.values():
        recs.sort()
        total += len(recs)
        for (_, ta), (_, tb) in zip(recs, recs[1:]):
            if tb < ta - 1000:
                back += 1
                worst = max(worst, ta - tb)
    if not total:
        result(tag + "-clock", "SKIP", "no launch records")
    elif back:
        result(tag + "-clock", "FAIL", "%d of %d launches earlier than the thread's previous one (by up to %d ns)" %
               (back, total, worst))
    else:
        result(tag + "-clock", "PASS", "%d launches in %d threads: times rise with op_seq" % (total, len(by_tid)))

    # ---- names
    unnamed = [r for r in launches if not kname(r)[0]]
    profnames = collections.Counter()
    for v in plain.get("PROFILE_NAME", []):
        n, _, name = v.partition(" ")
        profnames[norm(name)] += int(n)
    mangled = sorted({kname(r)[0] for r in launches if kname(r)[0].startswith("_Z")})
    filt = demangle_all(mangled, a.cxxfilt)
    left = collections.Counter(profnames)
    unmatched = collections.Counter()
    for r in launches:
        m, d = kname(r)
        for cand in (d, m, filt.get(m, "")):
            c = norm(cand)
            if c and left[c] > 0:
                left[c] -= 1
                break
        else:
            unmatched[d or m] += 1
    leftover = +left
    if unnamed:
        result(tag + "-names", "FAIL", "%d launches without a kernel name" % len(unnamed))
    elif not profnames:
        result(tag + "-names", "SKIP" if not prof else "FAIL",
                "every launch named; no profiler names to compare" if not prof else "profiler saw no kernels")
    elif not unmatched and not leftover:
        result(tag + "-names", "PASS", "%d launches, %d distinct names, all equal to the profiler's" %
               (len(launches), len({kname(r) for r in launches})))
    else:
        for n, c in unmatched.most_common(8):
            print("ktrace only: %dx %s" % (c, n[:300]))
        for n, c in leftover.most_common(8):
            print("profiler only: %dx %s" % (c, n[:300]))
        result(tag + "-names", "FAIL", "%d launch names not in the profiler's list, %d profiler names unmatched" %
               (sum(unmatched.values()), sum(leftover.values())))

    # ---- output
    po, to = plain["OUTPUT"][-1], traced["OUTPUT"][-1]
    result(tag + "-output", "PASS" if po == to else "FAIL",
           "sha256 %s %s" % (to[:16], "identical" if po == to else "!= %s without ktrace" % po[:16]))

    window_ids = {r.get("kernel_id") for r in launches}

    # ---- expected argument names
    for spec in a.expect_names:
        kn, _, names = spec.partition("=")
        want_names = names.split(",")
        ks = [k for k in kernels.values() if k.get("name") == kn]
        if not ks:
            result(tag + "-expectnames", "FAIL", "no KERNEL record for %s" % kn)
            continue
        got = [p.get("name") for p in ks[0].get("params", [])][:len(want_names)]
        srcs = sorted({p.get("name_source") for p in ks[0].get("params", [])})
        result(tag + "-expectnames", "PASS" if got == want_names else "FAIL",
               "%s(%s) sources %s" % (kn, ", ".join(map(str, got)), ",".join(map(str, srcs))))

    if not a.inductor:
        return
    # ---- Inductor: argument names and launchers
    trit = [k for i, k in kernels.items() if i in window_ids and str(k.get("name", "")).startswith("triton_")]
    cxx = [k for i, k in kernels.items() if i in window_ids and str(k.get("name", "")).startswith("_Z")]
    bad_t, bad_c = [], []
    for k in trit:
        ps = [p for p in k.get("params", []) if p.get("name_source") != "triton_scratch"]
        ok = ps and all(p.get("name_source") in ("triton_cache", "inductor") for p in ps) and \
            any(re.match(r"^(in_out_ptr|in_ptr|out_ptr)\d+$", str(p.get("name"))) for p in ps)
        if not ok:
            bad_t.append(k)
    for k in cxx:
        ps = k.get("params", [])
        if ps and not all(p.get("type") for p in ps):
            bad_c.append(k)
    if trit:
        k = trit[0]
        print("example: %s(%s)" % (k.get("name"), ", ".join("%s %s [%s]" % (p.get("type"), p.get("name"), p.get("name_source"))
                                                            for p in k.get("params", []))))
    if cxx:
        k = cxx[0]
        print("example: %s(%s)" % (k.get("demangled") or k.get("name"),
                                   ", ".join("%s %s [%s]" % (p.get("type"), p.get("name"), p.get("name_source"))
                                             for p in k.get("params", []))))
    for k in (bad_t + bad_c)[:6]:
        print("lacking names/types: %s %s" % (k.get("name", "")[:120],
                                             [(p.get("name"), p.get("type"), p.get("name_source")) for p in k.get("params", [])][:6]))
    if not trit:
        result(tag + "-argnames", "FAIL", "no Triton kernel launched in the window")
    else:
        result(tag + "-argnames", "PASS" if not bad_t and not bad_c else "FAIL",
               "%d/%d Triton kernels with Inductor argument names, %d/%d C++ kernels with demangled types" %
               (len(trit) - len(bad_t), len(trit), len(cxx) - len(bad_c), len(cxx)))
    srcs = collections.Counter()
    for k in kernels.values():
        if str(k.get("name", "")).startswith("triton_"):
            srcs[modules.get(k.get("module_id"), {}).get("source", "unknown")] += 1
    both = srcs.get("module_load", 0) > 0 and srcs.get("module_load_data", 0) > 0
    result(tag + "-launchers", "PASS" if both else "FAIL",
           "Triton kernels by module source: %s (static launcher = module_load, Triton = module_load_data)" %
           dict(srcs))


if __name__ == "__main__":
    sys.exit(main())
