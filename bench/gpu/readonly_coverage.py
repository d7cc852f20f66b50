"""bench/gpu/readonly_coverage.py: how many pointer parameters of real workloads are
proven read-only (docs/format.md, "Written parameters"), and a check of the proof on
the GPU.

    python3 bench/gpu/readonly_coverage.py --lib build/libktrace.so --dump build/ktrace-dump
        [--modes eager,compile,jax] [--steps 3] [--out DIR]

Each mode runs once under libktrace.so with full hashing (KTRACE_HASH=1):
  eager    test/gpu/workloads/ref_step.py            (ATen, cuBLAS, cuDNN kernels)
  compile  test/gpu/workloads/ref_step.py --compile  (Inductor's Triton kernels, found in
           the Triton cache the run fills: the TTIR and PTX beside each cubin)
  jax      test/gpu/workloads/jax_jit.py             (XLA fusions, cuBLAS)
From the trace: the `ktrace-dump --summary --json` line "read_only" (pointer parameters
of the kernels that launched and of their launches, proven read-only), the same split by
what proved it (ttir, ptx) and by the module the kernels came from (its path, or
"loaded image"), and the check: every region of a parameter proven read-only that
overlaps no region of another parameter of the same launch not proven read-only
(aliasing: an in-place op passes one buffer as input and output) has the same digest
after the launch as before.  A changed digest is a wrong proof (or another stream
writing the buffer during the launch): RESULT FAIL.

Prints BENCH|readonly_<mode>_launch_pointers|<pct>|%|..., BENCH|readonly_<mode>_kernel_pointers|...,
the split, and RESULT|readonly-coverage|PASS/FAIL|<regions checked, digests changed>.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
W = os.path.join(ROOT, "test", "gpu", "workloads")
MODES = {
    "eager": [os.path.join(W, "ref_step.py")],
    "compile": [os.path.join(W, "ref_step.py"), "--compile"],
    "jax": [os.path.join(W, "jax_jit.py")],
}


def run_mode(mode, lib, trace, steps, timeout):
    env = dict(os.environ, LD_PRELOAD=os.path.abspath(lib), KTRACE_OUTPUT=trace, KTRACE_HASH="1",
               KTRACE_OVERWRITE="1", KTRACE_QUIET="1")
    cmd = [sys.executable] + MODES[mode]
    if mode != "jax":
        cmd += ["--steps", str(steps), "--warmup", "1"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=W)
    if p.returncode:
        return f"{mode} exited {p.returncode}: {p.stderr.strip()[-300:]}"
    return None


def records(dump, trace):
    r = subprocess.run([dump, "--json", trace], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            continue


def summary_line(dump, trace):
    r = subprocess.run([dump, "--summary", "--json", trace], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        d = json.loads(line)
        if d.get("summary") == "read_only":
            return d
    return None


def overlaps(a, b):
    return a["p"] < b["p"] + b["n"] and b["p"] < a["p"] + a["n"]


def check_launch(rec, stats):
    """Regions of read-only parameters: the same digest after the launch unless aliased."""
    written = {a["ordinal"]: a.get("written", "unknown") for a in rec.get("args", [])}
    regs = []
    for g in rec.get("regions", []):
        if g.get("pre_hash") is None or g.get("post_hash") is None or not g.get("hash_len"):
            continue
        regs.append({"o": g["ordinal"], "p": int(g["ptr"], 16), "n": g["hash_len"], "pre": g["pre_hash"],
                     "post": g["post_hash"], "ro": written.get(g["ordinal"]) == "read_only"})
    for r in regs:
        if not r["ro"]:
            continue
        if any(not q["ro"] and overlaps(r, q) for q in regs):
            stats["aliased"] += 1
            continue
        stats["checked"] += 1
        if r["pre"] != r["post"]:
            stats["changed"] += 1
            if stats["changed"] <= 5:
                print(f"changed: {rec.get('kernel')} arg {r['o']} ptr {r['p']:#x} len {r['n']}")


def analyse(dump, trace, mode):
    modules, kernels, launches = {}, {}, collections.Counter()
    stats = collections.Counter()
    for rec in records(dump, trace):
        t = rec.get("type")
        if t == "module":
            modules[rec["module_id"]] = os.path.basename(rec.get("path") or "") or "loaded image"
        elif t == "kernel":
            kernels[rec["kernel_id"]] = rec
        elif t == "launch":
            launches[rec["kernel_id"]] += 1
            check_launch(rec, stats)
    by_source, by_module = collections.Counter(), collections.Counter()
    for kid, n in launches.items():
        k = kernels.get(kid)
        if not k:
            continue
        where = modules.get(k.get("module_id"), "unknown module")
        for p in k.get("params", []):
            if p.get("kind") != "pointer":
                continue
            proven = p.get("written") == "read_only"
            by_source[(p.get("written_source", "none") if p.get("written") else "none", p.get("written", "unknown"))] += n
            by_module[(where, proven)] += n
    s = summary_line(dump, trace)
    if s:
        lp, lr = s["launch_pointers"], s["launch_read_only"]
        print(f"BENCH|readonly_{mode}_launch_pointers|{100.0 * lr / max(lp, 1):.1f}|%|{lr} of {lp} pointer "
              f"parameters of launches proven read-only; {s['launches_with_read_only']} of {s['launches']} launches "
              f"have one")
        print(f"BENCH|readonly_{mode}_kernel_pointers|{100.0 * s['read_only'] / max(s['pointers'], 1):.1f}|%|"
              f"{s['read_only']} of {s['pointers']} pointer parameters of {s['kernels']} kernels")
    for (src, w), n in sorted(by_source.items()):
        print(f"  {mode} pointer parameters of launches: {w} by {src}: {n}")
    for (where, proven), n in sorted(by_module.items()):
        print(f"  {mode} module {where}: {'proven' if proven else 'not proven'} {n}")
    print(f"  {mode} check: {stats['checked']} read-only regions compared, {stats['changed']} changed, "
          f"{stats['aliased']} aliased with a written parameter (not compared)")
    return stats


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", default=os.path.join(ROOT, "build", "libktrace.so"))
    ap.add_argument("--dump", default=os.path.join(ROOT, "build", "ktrace-dump"))
    ap.add_argument("--modes", default="eager,compile,jax")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--timeout", type=int, default=400)
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="readonly-")
    total = collections.Counter()
    for mode in a.modes.split(","):
        if mode == "jax":
            try:
                import jax  # noqa: F401
            except ImportError:
                print("  jax: not installed, skipped")
                continue
        trace = os.path.join(out, f"{mode}.ktrace")
        err = run_mode(mode, a.lib, trace, a.steps, a.timeout)
        if err:
            print(f"RESULT|readonly-coverage|FAIL|{err}")
            return
        total += analyse(a.dump, trace, mode)
    verdict = "PASS" if total["checked"] and not total["changed"] else "FAIL"
    print(f"RESULT|readonly-coverage|{verdict}|{total['checked']} read-only regions compared, "
          f"{total['changed']} changed after the launch")


if __name__ == "__main__":
    main()
