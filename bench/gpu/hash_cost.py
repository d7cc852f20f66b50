"""bench/gpu/hash_cost.py: what full hashing costs on the reference training step,
for one or more libktrace.so builds, in one call.

    python3 bench/gpu/hash_cost.py --lib new=build/libktrace.so [--lib old=OLD/libktrace.so]
        [--modes eager,compile,graphs,check] [--rounds 3] [--steps 20] [--verify]
    python3 bench/gpu/hash_cost.py --lib new=build/libktrace.so --long 400
    python3 bench/gpu/hash_cost.py --lib merged=build/libktrace.so,KTRACE_HASH_MERGE=1 \
        --lib unmerged=build/libktrace.so --modes eager

A --lib value may add settings after the path, comma-separated (LABEL=path,VAR=value,...):
the hashed processes of that label run with them (e.g. KTRACE_HASH_MERGE=1, off by default, compares
merged hash launches with separate ones, docs/hashing.md "Merged hash launches", and merged checksum
nodes in graphs with separate ones, "Hashing inside graphs").

Each mode is test/gpu/workloads/ref_step.py (a copy of the reference step):
  eager    ref_step.py
  compile  ref_step.py --compile
  graphs   ref_step.py --graphs (torch.compile mode="reduce-overhead": CUDA graph replays)
  check    ref_step.py with ktrace check's allocator (PYTORCH_CUDA_ALLOC_CONF=
           backend:cudaMallocAsync) for the plain and the hashed processes alike
The step time of one process differs from the next by more than the change measured,
so each round runs a plain process and one hashed process per library, in rotating
order; the figure per library and mode is the median over rounds of (hashed ms/step /
the same round's plain ms/step).  From each hashed trace's last COUNTERS record: hash
launches per traced launch and, when the library records them, carried pre-digests,
read-only post-digests, post-hashes merged into the next launch's pre-hash launch
(hash_merged) or launched alone after being held (hash_post_flushed),
KTRACE_HASH_VERIFY mismatches (--verify runs the hashed processes with
KTRACE_HASH_VERIFY=1; their times then include the measured pre-hashes) and, where
the process instantiated CUDA graphs (mode graphs), the checksum nodes ktrace's copies
of them hold per hashed kernel node (graph_hash_nodes / graph_kernel_nodes_hashed: 2
without merging or read-only inputs; KTRACE_HASH_MERGE=1 merges them in graphs as well,
docs/hashing.md "Hashing inside graphs").

--long N runs one plain and one hashed process per library of N steps (eager) and
reports the step-time ratio, the trace's bytes per launch and the hashed process's RSS
growth (VmRSS sampled every 0.2 s: the last sample less the one at a quarter of the run).

Prints BENCH|hash_cost_<label>_<mode>|<ratio>|x|..., BENCH|hash_launches_per_launch_...,
BENCH|hash_mib_{pointer,struct,guessed}_per_launch_... (the hashed bytes by where their
pointers came from, ktrace-dump --summary),
and RESULT|hash-cost-transparent|PASS/FAIL: the final parameters' checksum equal in
every process of a mode (plain and hashed).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REF = os.path.join(ROOT, "test", "gpu", "workloads", "ref_step.py")
MODES = {"eager": [], "compile": ["--compile"], "graphs": ["--graphs"], "check": []}


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def lib_settings(lib):
    """A --lib path and the settings after it: 'path,VAR=value,...'."""
    path, *extra = lib.split(",")
    return path, dict(x.split("=", 1) for x in extra if "=" in x)


def run_step(mode, lib, trace, steps, verify, sample_rss=False):
    env = dict(os.environ)
    if mode == "check":
        env["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"
    if lib:
        path, extra = lib_settings(lib)
        env.update(LD_PRELOAD=os.path.abspath(path), KTRACE_OUTPUT=trace, KTRACE_HASH="1",
                   KTRACE_OVERWRITE="1", KTRACE_QUIET="1")
        env.update(extra)
        if verify:
            env["KTRACE_HASH_VERIFY"] = "1"
    cmd = [sys.executable, REF, "--steps", str(steps)] + MODES[mode]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    samples = []
    if sample_rss:
        def poll():
            while p.poll() is None:
                v = rss_kib(p.pid)
                if v:
                    samples.append(v)
                time.sleep(0.2)
        t = threading.Thread(target=poll, daemon=True)
        t.start()
    out, err = p.communicate(timeout=900)
    line = [x for x in out.splitlines() if x.startswith("ref_step ")]
    if p.returncode or not line:
        raise SystemExit(f"RESULT|hash-cost-transparent|FAIL|{mode} {lib or 'plain'} exited {p.returncode}: "
                         f"{err.strip()[-300:]}")
    kv = dict(f.split("=", 1) for f in line[0].split()[1:])
    return float(kv["ms_per_step"]), kv["checksum"], samples


def counters(dump, trace):
    """The last COUNTERS record of a trace (cumulative), and the number of records."""
    r = subprocess.run([dump, "--json", trace], capture_output=True, text=True)
    last, n = {}, 0
    for line in r.stdout.splitlines():
        n += 1
        if '"counters"' not in line:
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("type") == "counters" and isinstance(rec.get("counters"), dict):
            last = rec["counters"]
    return last, n


def byte_sources(dump, trace, seen):
    """MiB hashed per traced launch by where the regions' pointers came from
    (ktrace-dump --summary's "sources": pointer parameters, struct words of known
    layouts, words guessed by value), and the digests recorded but not measured."""
    r = subprocess.run([dump, "--summary", "--json", trace], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("summary") != "sources":
            continue
        parts = [(f"hash_mib_{k}_per_launch", rec[k]["hashed_bytes"] / max(seen, 1) / 2**20)
                 for k in ("pointer", "struct", "guessed")]
        return parts + [("hash_pre_carried_digests", rec["pre_carried"]),
                        ("hash_post_read_only_digests", rec["post_carried"])]
    return []


def launch_figures(c):
    seen = c.get("launches_seen") or 0
    hl = c.get("hash_launches")
    parts = []
    if hl is not None and seen:
        parts.append(("hash_launches_per_launch", hl / seen))
    for key in ("hash_pre_carried", "hash_post_carried", "hash_merged", "hash_post_flushed", "hash_pre_shared",
                "hash_bytes",
                "hash_carry_mismatches", "hash_readonly_mismatches"):
        if key in c:
            parts.append((key, c[key]))
    if "hash_merged" in c and seen:
        parts.append(("hash_merged_per_launch", c["hash_merged"] / seen))
    if c.get("self_samples"):  # host time ktrace added to a sampled launch (driver calls excluded)
        parts.append(("self_us_per_launch", c.get("self_ns", 0) / c["self_samples"] / 1000))
    if c.get("hash_bytes") and seen:
        parts.append(("hash_mib_per_launch", c["hash_bytes"] / seen / 2**20))
    # what sent each lone post-hash alone (hash_post_flushed by cause), per traced launch
    for key in sorted(k for k in c if k.startswith("hash_flush_")):
        if c[key] and seen:
            parts.append((key + "_per_launch", c[key] / seen))
    kernels = c.get("graph_kernel_nodes_hashed") or 0
    if kernels:  # CUDA graphs (mode graphs): checksum nodes per hashed kernel node, at each build
        parts.append(("graph_hash_nodes", c.get("graph_hash_nodes", 0)))
        parts.append(("graph_kernel_nodes_hashed", kernels))
        parts.append(("graph_hash_nodes_per_kernel_node", c.get("graph_hash_nodes", 0) / kernels))
    return parts


def compare(a, libs, dump, out):
    ok = True
    for mode in a.modes.split(","):
        if mode not in MODES:
            raise SystemExit(f"hash_cost.py: unknown mode '{mode}' (--modes takes {','.join(MODES)})")
        ratios = {label: [] for label, _ in libs}
        sums = set()
        for rnd in range(a.rounds):
            order = [("plain", None)] + libs
            k = rnd % len(order)
            order = order[k:] + order[:k]
            ms = {}
            for label, lib in order:
                trace = os.path.join(out, f"{mode}-{label}-{rnd}.ktrace")
                ms[label], csum, _ = run_step(mode, lib, trace, a.steps, a.verify)
                sums.add(csum)
                print(f"round {rnd} {mode} {label}: {ms[label]:.3f} ms/step checksum {csum}", flush=True)
            for label, _ in libs:
                ratios[label].append(ms[label] / ms["plain"])
        for label, _ in libs:
            med = statistics.median(ratios[label])
            rs = ", ".join(f"{r:.2f}" for r in ratios[label])
            print(f"BENCH|hash_cost_{label}_{mode}|{med:.2f}|x|median of hashed / same-round plain ms/step "
                  f"over {a.rounds} rounds ({rs}), {a.steps} steps")
            trace0 = os.path.join(out, f"{mode}-{label}-0.ktrace")
            c, _ = counters(dump, trace0)
            for key, v in launch_figures(c) + byte_sources(dump, trace0, c.get("launches_seen") or 0):
                fmt = f"{v:.2f}" if isinstance(v, float) else str(v)
                print(f"BENCH|{key}_{label}_{mode}|{fmt}|count|round 0's trace, COUNTERS record")
        if len(sums) != 1:
            ok = False
            print(f"checksums differ in mode {mode}: {sorted(sums)}")
    return ok


def long_run(a, libs, dump, out):
    ok = True
    plain_ms, plain_sum, _ = run_step("eager", None, None, a.long, False)
    print(f"long plain: {plain_ms:.3f} ms/step checksum {plain_sum}")
    for label, lib in libs:
        trace = os.path.join(out, f"long-{label}.ktrace")
        ms, csum, samples = run_step("eager", lib, trace, a.long, a.verify, sample_rss=True)
        ok &= csum == plain_sum
        c, nrec = counters(dump, trace)
        seen = c.get("launches_seen") or 0
        size = os.path.getsize(trace) if os.path.exists(trace) else 0
        growth = (samples[-1] - samples[len(samples) // 4]) / 1024 if len(samples) > 4 else float("nan")
        print(f"BENCH|hash_long_{label}_ratio|{ms / plain_ms:.2f}|x|{a.long} steps eager, "
              f"{ms:.3f} / {plain_ms:.3f} ms/step")
        if seen:
            print(f"BENCH|hash_long_{label}_trace_bytes_per_launch|{size / seen:.1f}|B|{size} B, "
                  f"{seen} launches, {nrec} records")
        print(f"BENCH|hash_long_{label}_rss_growth|{growth:.1f}|MiB|VmRSS last sample less the one "
              f"at a quarter of the run ({len(samples)} samples)")
    return ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lib", action="append", required=True,
                   help="LABEL=path/libktrace.so[,VAR=value...] (settings of that label's processes)")
    p.add_argument("--modes", default="eager,compile,graphs,check")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--verify", action="store_true", help="KTRACE_HASH_VERIFY=1 in hashed processes")
    p.add_argument("--long", type=int, default=0, help="one long run of N steps instead")
    p.add_argument("--keep", metavar="DIR", help="write the traces to DIR (kept) instead of a temporary folder")
    a = p.parse_args()
    libs = [x.split("=", 1) for x in a.lib]
    dump = os.path.join(os.path.dirname(os.path.abspath(lib_settings(libs[0][1])[0])), "ktrace-dump")
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    out = a.keep or tempfile.mkdtemp(prefix="kt-hash-cost-")
    ok = long_run(a, libs, dump, out) if a.long else compare(a, libs, dump, out)
    print(f"RESULT|hash-cost-transparent|{'PASS' if ok else 'FAIL'}|final parameters' checksum equal "
          f"in every process of a mode")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
