"""test/gpu/workloads/kt_common.py: the measured window shared by the capture workloads.

Each workload does its setup and warm-up (compilation, autotuning, library
initialisation) first, then runs its measured part inside `window()`:

    with kt_common.window(args):
        ... the work whose kernels are counted ...
    kt_common.output(tensors_or_bytes)

Printed lines (read by test/gpu/workloads/kt_check.py):
    PID <pid>                      the process (ktrace names its trace by %p)
    WINDOW <t0_ns> <t1_ns>         CLOCK_MONOTONIC bounds of the window; every
                                   kernel of the window is launched in between
                                   (device synchronised at both ends)
    PROFILE <n>                    with --profile: kernels the CUDA profiler
                                   (torch.profiler, CUPTI) saw in the window
    PROFILE_NAME <count> <name>    the same, per kernel name
    PROFILE_UNAVAILABLE <why>      --profile asked but torch.profiler failed
    OUTPUT <sha256>                digest of the workload's outputs
"""
import argparse
import collections
import contextlib
import hashlib
import json
import os
import sys
import tempfile
import time


def parse(desc):
    p = argparse.ArgumentParser(description=desc)
    p.add_argument("--profile", action="store_true", help="count the window's kernels with torch.profiler")
    a = p.parse_args()
    print("PID", os.getpid(), flush=True)
    return a


def _sync(sync):
    if sync is not None:
        sync()


@contextlib.contextmanager
def window(args, sync):
    """sync: a callable that waits for the device (torch.cuda.synchronize, ...)."""
    prof = None
    if args.profile:
        try:
            import torch
            from torch.profiler import ProfilerActivity, profile

            prof = profile(activities=[ProfilerActivity.CUDA])
        except Exception as e:  # noqa: BLE001 - any failure means "no profiler"
            print("PROFILE_UNAVAILABLE", type(e).__name__, str(e).replace("\n", " ")[:200], flush=True)
            prof = None
    _sync(sync)
    if prof is not None:
        prof.__enter__()
    _sync(sync)
    t0 = time.monotonic_ns()
    yield
    _sync(sync)
    t1 = time.monotonic_ns()
    if prof is not None:
        prof.__exit__(None, None, None)
        _report(prof)
    print("WINDOW", t0, t1, flush=True)


def _report(prof):
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f).get("traceEvents", [])
    finally:
        os.unlink(path)
    names = collections.Counter(e.get("name", "") for e in events if e.get("cat") == "kernel")
    print("PROFILE", sum(names.values()), flush=True)
    for name, n in sorted(names.items()):
        print("PROFILE_NAME", n, name, flush=True)


def output(parts):
    """parts: iterable of bytes-like objects (or objects with .tobytes())."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p.tobytes() if hasattr(p, "tobytes") else bytes(p))
    print("OUTPUT", h.hexdigest(), flush=True)


def torch_bytes(tensors):
    return [t.detach().cpu().contiguous().view(-1).view(dtype=__import__("torch").uint8).numpy() for t in tensors]


def fail(msg):
    print("WORKLOAD_ERROR", msg, flush=True)
    sys.exit(3)
