"""bench/gpu/hash_ab.py: full-hash overhead of two libktrace.so builds on the
reference training step, compared in one call.

    python3 bench/gpu/hash_ab.py --lib OLD=path/libktrace.so --lib NEW=path/libktrace.so
                                 [--rounds 3] [--compile]

The step time of one process differs from the next by more than the change
to be measured (docs/perf-hashing.md), so each round runs a plain process and
one hashed process per library, in rotating order, and the figure per library
is the median over rounds of (hashed ms/step / the same round's plain ms/step).
Each process is amplification.py's worker (ref_step.py's model, median of 20
timed steps after 3 warm-up).  Prints per process, then
  BENCH|hash_ab_<label>|<median ratio>|x|...
and RESULT|hash-ab-transparent|PASS/FAIL (final parameters bitwise equal in
every process).
"""
import argparse
import os
import statistics as st
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def step(lib, compile_, out, tag):
    env = dict(os.environ)
    if lib:
        env.update(LD_PRELOAD=os.path.abspath(lib), KTRACE_OUTPUT=os.path.join(out, tag + ".ktrace"),
                   KTRACE_HASH="1", KTRACE_OVERWRITE="1", KTRACE_QUIET="1")
    cmd = [sys.executable, os.path.join(HERE, "amplification.py"), "--worker", "--time"]
    r = subprocess.run(cmd + (["--compile"] if compile_ else []), env=env, capture_output=True, text=True,
                       timeout=300)
    line = [x for x in r.stdout.splitlines() if x.startswith("STEP ")]
    if r.returncode or not line:
        raise SystemExit(f"RESULT|hash-ab-transparent|FAIL|{tag} exited {r.returncode}: {r.stderr.strip()[-300:]}")
    kv = dict(f.split("=", 1) for f in line[0].split()[1:])
    return float(kv["ms_per_step"]), kv["checksum"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lib", action="append", required=True, help="LABEL=path/libktrace.so")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--compile", action="store_true")
    a = p.parse_args()
    libs = [x.split("=", 1) for x in a.lib]
    out = tempfile.mkdtemp(prefix="kt-hash-ab-")
    ratios = {label: [] for label, _ in libs}
    sums = set()
    for rnd in range(a.rounds):
        order = libs[rnd % len(libs):] + libs[:rnd % len(libs)]
        plain, c = step(None, a.compile, out, f"plain{rnd}")
        sums.add(c)
        print(f"round {rnd + 1}: plain {plain:.3f} ms/step", flush=True)
        for label, path in order:
            ms, c = step(path, a.compile, out, f"{label}{rnd}")
            sums.add(c)
            ratios[label].append(ms / plain)
            print(f"round {rnd + 1}: {label} {ms:.3f} ms/step = {ms / plain:.2f}x", flush=True)
    mode = "compile" if a.compile else "eager"
    for label, v in ratios.items():
        print(f"BENCH|hash_ab_{label}_{mode}|{st.median(v):.2f}|x|median over {len(v)} rounds of hashed / plain "
              f"ms/step (rounds: {', '.join(f'{x:.2f}' for x in v)})")
    print(f"RESULT|hash-ab-transparent|{'PASS' if len(sums) == 1 else 'FAIL'}|final parameters of "
          f"{a.rounds * (len(libs) + 1)} processes: {len(sums)} distinct")


if __name__ == "__main__":
    main()
