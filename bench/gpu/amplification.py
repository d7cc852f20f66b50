"""bench/gpu/amplification.py: hash amplification of ktrace's extent policy on
the reference training step (../shared/bench/ref_step.py's model).

    python3 bench/gpu/amplification.py [--lib build/libktrace.so] [--dump build/ktrace-dump]
                                       [--compile] [--out DIR] [--steps N] [--overhead]

Runs a worker (this file with --worker) under LD_PRELOAD=libktrace.so with
hashing on.  The worker builds ref_step.py's model (4 pre-norm blocks, d=512,
batch 16x128, AdamW), runs warm-up steps, then N measured steps between two
marker kernels (torch.cuda._sleep), logging with a TorchDispatchMode the
tensors every op receives and returns.  The parent reads the trace with
`ktrace-dump --json` and reports, for the launches between the markers:

  amplification = bytes the checksum kernels read (hash_len of every
                  post-hashed region and of every pre-hashed region whose
                  pre-digest was measured, not carried: docs/hashing.md,
                  "Carried pre-digests") / twice the bytes of the tensors the
                  ops receive and return (per op, each distinct (data_ptr,
                  addressable span) once; view and allocation ops, which
                  launch nothing, left out); without carried pre-digests it
                  is the extent ratio
  extent ratio  = bytes of the pre-hashed regions / bytes of the op tensors
                  (how far the extent policy reaches beyond the tensors)
  coverage      = for tensors whose data_ptr starts a hashed region, the share
                  of their bytes inside the longest region seen from that ptr
                  (below 100%: regions cut short by the extent policy, or a
                  tensor whose parts are passed as separate views)
  union coverage = share of all op tensor bytes inside some hashed region of
                  the step

Prints BENCH|hash_amplification_<mode>|..., BENCH|hash_extent_ratio_<mode>|...,
BENCH|hash_pre_carried_<mode>|..., BENCH|hash_coverage_<mode>|...,
BENCH|hash_launches_per_launch_<mode>|... and a RESULT line (target <= 2x).

--overhead instead times the same step (median ms of 20 after 3 warm-up, as
ref_step.py does) plain, under ktrace without hashing and with hashing, and
checks that the final parameters are bitwise identical in all three; it
also reports the hashing run's hash launches per traced launch (its
COUNTERS) and runs the step once more with KTRACE_HASH_VERIFY=1 (every
carried pre-digest measured too), whose carried-digest mismatches must be 0.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from replay_lens import apply_lens

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def worker(a):
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    from ref_model import build, checksum

    model, step, fwd = build(a.compile)

    ops = []

    def span(t):
        # bytes a kernel can address through t: an expanded (stride 0) or
        # strided tensor covers less or more than numel * element_size
        n = 1 + sum((s - 1) * abs(st) for s, st in zip(t.shape, t.stride()))
        return n * t.element_size()

    def launches_nothing(func):
        # views and allocations change no memory and launch no kernel
        rets = func._schema.returns
        if any(r.alias_info is not None and not r.alias_info.is_write for r in rets):
            return True
        name = func.__name__
        return "empty" in name or name.startswith(("detach", "alias", "lift_fresh", "_reshape_alias"))

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if launches_nothing(func):
                return out
            seen = {}
            for t in tree_flatten((args, kwargs or {}, out))[0]:
                if isinstance(t, torch.Tensor) and t.is_cuda and t.numel() > 0:
                    try:
                        seen[(t.data_ptr(), span(t))] = 1
                    except Exception:
                        pass
            ops.append((str(func), [[p, n] for (p, n) in seen]))
            return out

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    torch.cuda._sleep(1000)  # marker kernel
    torch.cuda.synchronize()
    if a.compile:
        # Inductor's kernels bypass the dispatcher: tensor sizes are only known
        # for the eager parts (optimizer, loss); see the report's note.
        pass
    if a.time:
        import time
        times = []
        for _ in range(20):
            t = time.perf_counter()
            step()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t)
        times.sort()
        print(f"STEP ms_per_step={times[len(times) // 2] * 1e3:.3f} checksum={checksum(model)}")
        return
    with Log():
        for _ in range(a.steps):
            step()
    torch.cuda.synchronize()
    torch.cuda._sleep(1000)  # marker kernel
    torch.cuda.synchronize()
    with open(a.ops, "w") as f:
        json.dump(ops, f)


def parent(a):
    out = a.out or tempfile.mkdtemp(prefix="kt-amp-")
    os.makedirs(out, exist_ok=True)
    mode = "compile" if a.compile else "eager"
    trace = os.path.join(out, f"amp-{mode}.ktrace")
    opsf = os.path.join(out, f"amp-{mode}-ops.json")
    env = dict(os.environ, LD_PRELOAD=os.path.abspath(a.lib), KTRACE_OUTPUT=trace, KTRACE_HASH="1",
               KTRACE_OVERWRITE="1", KTRACE_QUIET="1")
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--ops", opsf, "--steps", str(a.steps)]
    if a.compile:
        cmd.append("--compile")
    r = subprocess.run(cmd, env=env, timeout=a.timeout)
    if r.returncode != 0:
        print(f"RESULT|hash-amplification-{mode}|FAIL|worker exited {r.returncode}")
        return 1
    dump = subprocess.run([a.dump, "--json", trace], capture_output=True, text=True, timeout=a.timeout)
    if dump.returncode != 0:
        print(f"RESULT|hash-amplification-{mode}|FAIL|ktrace-dump exited {dump.returncode}: {dump.stderr.strip()[:200]}")
        return 1
    recs = [json.loads(line) for line in dump.stdout.splitlines() if line.startswith("{")]
    ops = json.load(open(opsf))
    return analyze(recs, ops, mode, a.steps, a.compile)


def analyze(recs, ops, mode, steps, compiled):
    # records of hashed launches are written when their hashes land, later
    # than unhashed ones (the markers): order by launch number
    launches = sorted((r for r in recs if r.get("type") == "launch"), key=lambda r: r.get("op_seq", 0))

    def is_marker(r):
        n = (r.get("kernel") or "") + " " + (r.get("mangled") or "")
        return "spin_kernel" in n or "sleep" in n.lower()

    marks = [i for i, r in enumerate(launches) if is_marker(r)]
    if len(marks) < 2:
        print(f"RESULT|hash-amplification-{mode}|FAIL|marker kernels not found in the trace ({len(marks)})")
        return 1
    step_launches = launches[marks[-2] + 1: marks[-1]]
    hashed = 0
    read = 0  # bytes the checksum kernels read: measured pre-hashes and post-hashes
    carried = 0
    regions = 0
    skipped = 0
    longest = {}
    spans = []
    for r in step_launches:
        if "hash_skipped" in [f.lower() for f in r.get("launch_flags", [])]:
            skipped += 1
        for g in r.get("regions", []):
            flags = [f.lower() for f in g.get("flags", [])]
            if g.get("post_hash") is not None:
                read += g["hash_len"]
            if g.get("pre_hash") is not None and "pre_carried" in flags:
                carried += 1
            elif g.get("pre_hash") is not None:
                read += g["hash_len"]
            if g.get("pre_hash") is not None:
                hashed += g["hash_len"]
                regions += 1
                p = int(g["ptr"], 16) if isinstance(g["ptr"], str) else g["ptr"]
                longest[p] = max(longest.get(p, 0), g["hash_len"])
                spans.append((p, p + g["hash_len"]))
    tensor_bytes = sum(n for _, ts in ops for _, n in ts)
    sizes = {}
    for _, ts in ops:
        for p, n in ts:
            sizes[p] = max(sizes.get(p, 0), n)
    # union coverage: share of all op tensor bytes inside some hashed region of the step
    iv = sorted(spans)
    merged = []
    for lo, hi in iv:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    starts = [m[0] for m in merged]

    def covered(lo, hi):
        import bisect
        i = max(bisect.bisect_right(starts, lo) - 1, 0)
        c = 0
        while i < len(merged) and merged[i][0] < hi:
            c += max(0, min(hi, merged[i][1]) - max(lo, merged[i][0]))
            i += 1
        return c

    uni_den = sum(sizes.values())
    # where the uncovered bytes are: the tensors missing most, with their ops
    users = {}
    for name, ts in ops:
        for p, n in ts:
            users.setdefault(p, set()).add(name.split(".")[0].replace("aten::", ""))
    miss = sorted(((n - covered(p, p + n), p, n) for p, n in sizes.items()), reverse=True)[:10]
    for m, p, n in miss:
        if m > 0:
            print(f"  uncovered {m} of {n} bytes at 0x{p:x} (longest region from it {longest.get(p, 0)}); "
                  f"ops: {', '.join(sorted(users.get(p, ()))[:6])}")
    uni = 100.0 * sum(covered(p, p + n) for p, n in sizes.items()) / uni_den if uni_den else float("nan")
    cov_num = sum(min(longest[p], n) for p, n in sizes.items() if p in longest)
    cov_den = sum(n for p, n in sizes.items() if p in longest)
    seen_ptrs = sum(1 for p in sizes if p in longest)
    counters = {}
    for r in recs:  # cumulative: the last COUNTERS record holds the totals
        if r.get("type") == "counters" and isinstance(r.get("counters"), dict):
            counters = r["counters"]
    amp = read / (2 * tensor_bytes) if tensor_bytes else float("nan")
    extent = hashed / tensor_bytes if tensor_bytes else float("nan")
    cov = 100.0 * cov_num / cov_den if cov_den else float("nan")
    print(f"step launches {len(step_launches)} (hash skipped {skipped}), hashed regions {regions}, "
          f"hashed bytes {hashed}, op tensor bytes {tensor_bytes} over {len(ops)} ops, "
          f"tensors whose pointer starts a region: {seen_ptrs} of {len(sizes)}")
    print(f"counters: {counters}")
    print(f"BENCH|hash_amplification_{mode}|{amp:.2f}|x|bytes the checksum kernels read (measured pre, post) "
          f"/ twice the bytes of op tensors, {steps} steps")
    print(f"BENCH|hash_extent_ratio_{mode}|{extent:.2f}|x|bytes of pre-hashed regions / bytes of op tensors")
    print(f"BENCH|hash_pre_carried_{mode}|{100.0 * carried / regions if regions else 0:.1f}|%|"
          f"pre-digests of the step carried, not measured ({carried} of {regions})")
    print(f"BENCH|hash_coverage_{mode}|{cov:.1f}|%|tensor bytes inside the longest region from their pointer")
    print(f"BENCH|hash_coverage_union_{mode}|{uni:.1f}|%|op tensor bytes inside any hashed region of the step")
    hl = counters.get("hash_launches")
    seen = counters.get("launches_seen")
    if hl is not None and seen:
        print(f"BENCH|hash_launches_per_launch_{mode}|{hl / seen:.2f}|ratio|whole run, from the COUNTERS record")
    note = " (Inductor kernels are outside the dispatcher: denominator incomplete)" if compiled else ""
    print(f"RESULT|hash-amplification-{mode}|{'PASS' if amp <= 2.0 else 'FAIL'}|amplification {amp:.2f}x "
          f"(target <= 2x), coverage {cov:.1f}%{note}")
    return 0


def overhead(a):
    mode = "compile" if a.compile else "eager"
    out = a.out or tempfile.mkdtemp(prefix="kt-ovh-")
    os.makedirs(out, exist_ok=True)
    res = {}
    # "-async": the allocator ktrace run / ktrace check set by default (one driver
    # allocation per tensor: PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync).
    runs = (("plain", None), ("nohash", "0"), ("hash", "1"), ("plain-async", None), ("hash-async", "1"),
            ("hash-verify", "1"))
    for tag, extra in runs:
        env = dict(os.environ)
        if tag.endswith("-async"):
            env["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"
        if extra is not None:
            env.update(LD_PRELOAD=os.path.abspath(a.lib), KTRACE_OUTPUT=os.path.join(out, f"ovh-{mode}-{tag}.ktrace"),
                       KTRACE_HASH=extra, KTRACE_OVERWRITE="1", KTRACE_QUIET="1")
        if tag == "hash-verify":
            env["KTRACE_HASH_VERIFY"] = "1"
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--time"] + (["--compile"] if a.compile else [])
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=a.timeout)
        line = [x for x in r.stdout.splitlines() if x.startswith("STEP ")]
        if r.returncode != 0 or not line:
            print(f"RESULT|hash-overhead-{mode}|FAIL|{tag} run exited {r.returncode}: {r.stderr.strip()[-300:]}")
            return 1
        kv = dict(f.split("=", 1) for f in line[0].split()[1:])
        res[tag] = (float(kv["ms_per_step"]), kv["checksum"])
        print(f"{tag}: {res[tag][0]:.3f} ms/step checksum {res[tag][1]}")
    same = (len({res[t][1] for t in ("plain", "nohash", "hash", "hash-verify")}) == 1 and
            res["plain-async"][1] == res["hash-async"][1])
    print(f"BENCH|hash_overhead_{mode}|{res['hash'][0] / res['plain'][0]:.2f}|x|ms/step with hashing / plain "
          f"({res['hash'][0]:.2f} / {res['plain'][0]:.2f} ms)")
    print(f"BENCH|hash_overhead_{mode}_check_allocator|{res['hash-async'][0] / res['plain'][0]:.2f}|x|ms/step "
          f"with hashing under ktrace check's allocator (cudaMallocAsync) / plain with the program's "
          f"({res['hash-async'][0]:.2f} / {res['plain'][0]:.2f} ms; plain with cudaMallocAsync "
          f"{res['plain-async'][0]:.2f} ms)")
    print(f"BENCH|trace_overhead_nohash_{mode}|{res['nohash'][0] / res['plain'][0]:.2f}|x|ms/step traced without hashing / plain")
    print(f"RESULT|hash-transparent-{mode}|{'PASS' if same else 'FAIL'}|final parameters "
          f"{'bitwise identical' if same else 'DIFFER'} plain / traced / traced+hashed (each allocator)")
    hc = trace_counters(a, os.path.join(out, f"ovh-{mode}-hash.ktrace"))
    vc = trace_counters(a, os.path.join(out, f"ovh-{mode}-hash-verify.ktrace"))
    if hc.get("launches_seen"):
        print(f"BENCH|hash_launches_per_launch_{mode}|{hc.get('hash_launches', 0) / hc['launches_seen']:.2f}|ratio|"
              f"checksum launches / traced launches of the hashing run (its COUNTERS), "
              f"{hc.get('hash_pre_carried', 0)} pre-digests carried, "
              f"{hc.get('hash_post_carried', 0)} read-only post-digests not measured")
    bad = vc.get("hash_carry_mismatches", 0)
    print(f"BENCH|hash_verify_ms_{mode}|{res['hash-verify'][0] / res['plain'][0]:.2f}|x|ms/step with "
          f"KTRACE_HASH_VERIFY=1 / plain")
    print(f"RESULT|hash-carry-verify-{mode}|{'PASS' if vc and not bad else 'FAIL'}|{bad} carried pre-digests "
          f"differ from the measured ones ({vc.get('hash_pre_carried', 0)} checked, KTRACE_HASH_VERIFY=1)")
    ro_bad = vc.get("hash_readonly_mismatches", 0)
    print(f"RESULT|hash-readonly-verify-{mode}|{'PASS' if vc and not ro_bad else 'FAIL'}|{ro_bad} read-only "
          f"inputs changed by their launch ({vc.get('hash_post_carried', 0)} checked, KTRACE_HASH_VERIFY=1)")
    return 0


def trace_counters(a, trace):
    """The totals of a trace's COUNTERS records ({} when it cannot be read)."""
    dump = subprocess.run([a.dump, "--json", trace], capture_output=True, text=True, timeout=a.timeout)
    counters = {}
    for line in dump.stdout.splitlines():
        if line.startswith("{") and '"counters"' in line:
            r = json.loads(line)
            if r.get("type") == "counters" and isinstance(r.get("counters"), dict):
                counters = r["counters"]
    return counters


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lib", default=os.path.join(ROOT, "build", "libktrace.so"))
    p.add_argument("--dump", default=os.path.join(ROOT, "build", "ktrace-dump"))
    p.add_argument("--compile", action="store_true")
    p.add_argument("--steps", type=int, default=1)
    p.add_argument("--out")
    p.add_argument("--timeout", type=int, default=600)
    p.add_argument("--worker", action="store_true")
    p.add_argument("--ops")
    p.add_argument("--time", action="store_true")
    p.add_argument("--overhead", action="store_true")
    p.add_argument("--analyze", nargs=2, metavar=("TRACE", "OPS"), help="only analyse a recorded trace and ops log")
    p.add_argument("--lens", help="with --analyze: region lengths from build/extent_replay")
    a = p.parse_args()
    if a.worker:
        worker(a)
        return 0
    if a.analyze:
        dump = subprocess.run([a.dump, "--json", a.analyze[0]], capture_output=True, text=True, timeout=a.timeout)
        if dump.returncode != 0:
            print(f"RESULT|hash-amplification|FAIL|ktrace-dump exited {dump.returncode}: {dump.stderr.strip()[:200]}")
            return 1
        recs = [json.loads(line) for line in dump.stdout.splitlines() if line.startswith("{")]
        if a.lens:
            apply_lens([r for r in recs if r.get("type") == "launch"], a.lens)
        return analyze(recs, json.load(open(a.analyze[1])), "compile" if a.compile else "eager", a.steps, a.compile)
    return overhead(a) if a.overhead else parent(a)


if __name__ == "__main__":
    sys.exit(main())
