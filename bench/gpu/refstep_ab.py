"""bench/gpu/refstep_ab.py: ktrace's overhead on the reference training step,
measured inside one traced process.

    KTRACE_HASH=0 LD_PRELOAD=build/libktrace.so python3 bench/gpu/refstep_ab.py [--compile]
        [--rounds 30] [--block 10] [--warmup 5] [--label NAME]

Why: the step time of ../shared/bench/ref_step.py differs from one process to
the next by more than the 3 % target (8.4 to 12.1 ms/step for the same plain
eager step on an H100), so comparing a plain process with a traced one needs
very many processes.  Here one process builds ref_step.py's model
(bench/gpu/ref_model.py), runs warm-up steps traced, then alternates blocks of
--block steps traced and paused (include/ktrace.h: ktrace_pause() turns
recording off; the launch wrappers stay in place, so the paused steps still
pay ktrace's pass-through, about 2 ns a call), in ABBA order over --rounds
rounds, each step timed to torch.cuda.synchronize() as ref_step.py does.

Prints
  BENCH|<label>|overhead %|median traced / median paused - 1, with the
        median of per-round ratios and its 10th-90th percentile range
and the launch count per step.  Without libktrace.so preloaded it exits 2.
"""
import argparse
import ctypes
import os
import statistics as st
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--rounds", type=int, default=60)
    p.add_argument("--block", type=int, default=10)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--label", default=None)
    a = p.parse_args()
    lib = ctypes.CDLL(None)
    if not hasattr(lib, "ktrace_pause"):
        print("refstep_ab: libktrace.so is not preloaded (LD_PRELOAD=build/libktrace.so)", file=sys.stderr)
        return 2
    lib.ktrace_is_paused.restype = ctypes.c_int
    import torch
    from ref_model import build

    model, step, _ = build(a.compile)
    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    times = {0: [], 1: []}   # 1: traced, 0: paused
    rounds = []
    for r in range(a.rounds):
        order = (1, 0) if r % 2 == 0 else (0, 1)
        med = {}
        for traced in order:
            (lib.ktrace_resume if traced else lib.ktrace_pause)()
            blk = []
            for _ in range(a.block):
                t = time.perf_counter()
                step()
                torch.cuda.synchronize()
                blk.append(time.perf_counter() - t)
            times[traced] += blk
            med[traced] = st.median(blk)
        rounds.append(med[1] / med[0] - 1)
    lib.ktrace_resume()
    mode = "compile" if a.compile else "eager"
    label = a.label or f"capture-refstep-{mode}-overhead-inprocess"
    on, off = st.median(times[1]) * 1e3, st.median(times[0]) * 1e3
    rounds.sort()
    lo, hi = rounds[len(rounds) // 10], rounds[(len(rounds) * 9) // 10]
    ovh = (on / off - 1) * 100
    # 90 % interval of the overhead: bootstrap over rounds (each round keeps
    # its traced and its paused block together, so slow phases of the
    # process weigh on both sides alike).
    import random
    rng = random.Random(1)
    nb = a.block
    tr = [times[1][i * nb:(i + 1) * nb] for i in range(a.rounds)]
    pa = [times[0][i * nb:(i + 1) * nb] for i in range(a.rounds)]
    boot = []
    for _ in range(300):
        pick = [rng.randrange(a.rounds) for _ in range(a.rounds)]
        t1 = [x for i in pick for x in tr[i]]
        t0 = [x for i in pick for x in pa[i]]
        boot.append((st.median(t1) / st.median(t0) - 1) * 100)
    boot.sort()
    ci = (boot[len(boot) // 20], boot[(len(boot) * 19) // 20])
    print(f"{mode}: traced {on:.3f} ms/step, paused {off:.3f} ms/step over {a.rounds} x {a.block} steps each")
    print(f"BENCH|{label}|{ovh:.2f}|%|median ms/step traced {on:.3f} / paused {off:.3f}; per-round ratio median "
          f"{st.median(rounds) * 100:.2f} % (10th-90th pct {lo * 100:.2f} to {hi * 100:.2f} %); "
          f"90 % bootstrap interval of the overhead {ci[0]:.2f} to {ci[1]:.2f} %; "
          f"{a.rounds} ABBA rounds x {a.block} steps, one process")
    print(f"OVERHEAD {ovh:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
