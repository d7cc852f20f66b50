"""bench/gpu/nvtx_ab.py: the cost of NVTX ranges on the reference training step,
measured inside one traced process (metadata mode).

    KTRACE_HASH=0 LD_PRELOAD=build/libktrace.so python3 bench/gpu/nvtx_ab.py [--compile]
        [--rounds 30] [--block 10] [--warmup 5]

One process builds ../shared/bench/ref_step.py's model (bench/gpu/ref_model.py),
with libktrace.so preloaded (so its NVTX injection is attached: the library's
constructor set NVTX_INJECTION64_PATH before PyTorch loaded), and runs blocks
of --block steps in four settings, in an order that rotates every round:
  plain   tracing paused (ktrace_pause(): the launch wrappers pass through),
          no op ranges
  meta    traced, no op ranges: metadata mode as without this feature
  ranges  traced, PyTorch's op ranges on (torch.autograd.profiler.emit_nvtx,
          as `ktrace run --torch-ops` and `ktrace check` turn it on): every
          launch records the range path and sequence number of its op
  nvtx    tracing paused, op ranges on: what emit_nvtx itself costs PyTorch
          (its per-op profiler callbacks and message formatting), with
          ktrace's NVTX callbacks keeping the thread's stack
Each step is timed to torch.cuda.synchronize(), as ref_step.py does.

Prints, from the medians of all steps of each setting:
  BENCH|nvtx-refstep-<mode>-ranges-overhead|%|ranges / nvtx - 1: what recording
        every launch's ranges costs ktrace (target <= 3 %)
  BENCH|nvtx-refstep-<mode>-meta-overhead|%|meta / plain - 1 (metadata mode, no ranges)
  BENCH|nvtx-refstep-<mode>-torch-ops-cost|%|nvtx / plain - 1 (PyTorch's emit_nvtx)
  BENCH|nvtx-refstep-<mode>-ranges-total|%|ranges / plain - 1 (all of it)
each with a 90 % bootstrap interval over rounds, and the ranges per step.
Without libktrace.so preloaded it exits 2.
"""
import argparse
import contextlib
import ctypes
import os
import random
import statistics as st
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SETTINGS = ("plain", "meta", "ranges", "nvtx")


def ratio_ci(times, a, b, rounds, block, rng):
    """Median of a / median of b - 1 in %, and its 90 % bootstrap interval over rounds."""
    ta = [times[a][i * block:(i + 1) * block] for i in range(rounds)]
    tb = [times[b][i * block:(i + 1) * block] for i in range(rounds)]
    boot = []
    for _ in range(300):
        pick = [rng.randrange(rounds) for _ in range(rounds)]
        boot.append((st.median([x for i in pick for x in ta[i]]) /
                     st.median([x for i in pick for x in tb[i]]) - 1) * 100)
    boot.sort()
    return (st.median(times[a]) / st.median(times[b]) - 1) * 100, boot[len(boot) // 20], boot[len(boot) * 19 // 20]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--block", type=int, default=10)
    p.add_argument("--warmup", type=int, default=5)
    a = p.parse_args()
    lib = ctypes.CDLL(None)
    if not hasattr(lib, "ktrace_pause"):
        print("nvtx_ab: libktrace.so is not preloaded (LD_PRELOAD=build/libktrace.so)", file=sys.stderr)
        return 2
    import torch
    from ref_model import build

    _, step, _ = build(a.compile)
    for _ in range(a.warmup):
        step()
    with torch.autograd.profiler.emit_nvtx():
        for _ in range(a.warmup):
            step()
    torch.cuda.synchronize()
    times = {s: [] for s in SETTINGS}
    for r in range(a.rounds):
        for k in range(len(SETTINGS)):
            s = SETTINGS[(r + k) % len(SETTINGS)]
            (lib.ktrace_resume if s in ("meta", "ranges") else lib.ktrace_pause)()
            ops = torch.autograd.profiler.emit_nvtx() if s in ("ranges", "nvtx") else contextlib.nullcontext()
            with ops:  # entering synchronises the device: outside the timed steps
                for _ in range(a.block):
                    t = time.perf_counter()
                    step()
                    torch.cuda.synchronize()
                    times[s].append(time.perf_counter() - t)
    lib.ktrace_resume()
    mode = "compile" if a.compile else "eager"
    rng = random.Random(1)
    med = {s: st.median(times[s]) * 1e3 for s in SETTINGS}
    print(f"{mode}: ms/step " + ", ".join(f"{s} {med[s]:.3f}" for s in SETTINGS) +
          f" over {a.rounds} rotating rounds x {a.block} steps, one process")
    for name, x, y, what in (("ranges-overhead", "ranges", "nvtx", "ktrace recording every launch's op ranges "
                              "(target <= 3 %)"),
                             ("meta-overhead", "meta", "plain", "metadata mode without ranges"),
                             ("torch-ops-cost", "nvtx", "plain", "PyTorch's emit_nvtx itself, tracing paused"),
                             ("ranges-total", "ranges", "plain", "metadata mode with op ranges, emit_nvtx included")):
        o, lo, hi = ratio_ci(times, x, y, a.rounds, a.block, rng)
        print(f"BENCH|nvtx-refstep-{mode}-{name}|{o:.2f}|%|median ms/step {x} {med[x]:.3f} / {y} {med[y]:.3f}: "
              f"{what}; 90 % bootstrap interval {lo:.2f} to {hi:.2f} %; {a.rounds} rounds x {a.block} steps")
        if name == "ranges-overhead":
            print(f"OVERHEAD {o:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
