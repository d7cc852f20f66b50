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
    PROFILE_SOURCE <name>          which profiler counted (torch.profiler, jax.profiler)
    PROFILE_UNAVAILABLE <why>      --profile asked but no profiler worked
    OUTPUT <sha256>                digest of the workload's outputs

CUPTI's kernel activity reports every kernel node of a CUDA graph launch
(node-level graph tracing), so the counts include the kernels that graphs
replay.  window(..., profiler="auto") falls back to jax.profiler (XLA's own
CUPTI tracer, read from the XSpace file it writes) where PyTorch is missing;
XLA turns its command buffers off while its own profiler runs unless
--xla_enable_command_buffers_during_profiling=true is in XLA_FLAGS
(jax_profiler_flags() says what to add before JAX starts).
"""
import argparse
import collections
import contextlib
import glob
import hashlib
import importlib.util
import json
import os
import shutil
import struct
import sys
import tempfile
import time


def parse(desc, extra=None):
    """extra: a callable adding the workload's own options to the parser."""
    p = argparse.ArgumentParser(description=desc)
    p.add_argument("--profile", action="store_true", help="count the window's kernels with the CUDA profiler")
    if extra is not None:
        extra(p)
    a = p.parse_args()
    print("PID", os.getpid(), flush=True)
    return a


def jax_profiler_flags(args):
    """The XLA flag that keeps command buffers on under jax.profiler, when the
    window will have to use it (--profile and no PyTorch); else ''."""
    if getattr(args, "profile", False) and importlib.util.find_spec("torch") is None:
        return "--xla_enable_command_buffers_during_profiling=true"
    return ""


def _sync(sync):
    if sync is not None:
        sync()


def _unavailable(e):
    print("PROFILE_UNAVAILABLE", type(e).__name__, str(e).replace("\n", " ")[:200], flush=True)


class _TorchProfiler:
    name = "torch.profiler"

    def __init__(self):
        from torch.profiler import ProfilerActivity, profile

        self.prof = profile(activities=[ProfilerActivity.CUDA])

    def start(self):
        self.prof.__enter__()

    def stop(self):
        self.prof.__exit__(None, None, None)
        fd, path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        try:
            self.prof.export_chrome_trace(path)
            with open(path) as f:
                events = json.load(f).get("traceEvents", [])
        finally:
            os.unlink(path)
        return collections.Counter(e.get("name", "") for e in events if e.get("cat") == "kernel")


class _JaxProfiler:
    name = "jax.profiler"

    def __init__(self):
        import jax.profiler

        self.jp = jax.profiler
        self.dir = tempfile.mkdtemp(prefix="kt-jaxprof-")

    def start(self):
        self.jp.start_trace(self.dir)

    def stop(self):
        self.jp.stop_trace()
        try:
            files = glob.glob(os.path.join(self.dir, "**", "*.xplane.pb"), recursive=True)
            if not files:
                raise RuntimeError("jax.profiler wrote no .xplane.pb")
            with open(files[0], "rb") as f:
                return xspace_kernels(f.read())
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def _make_profiler(kind):
    """torch.profiler, else (kind "auto") jax.profiler; None when neither works."""
    errors = []
    for k in (["torch", "jax"] if kind == "auto" else [kind]):
        try:
            return _TorchProfiler() if k == "torch" else _JaxProfiler()
        except Exception as e:  # noqa: BLE001 - any failure means "not this profiler"
            errors.append(e)
    _unavailable(errors[-1])
    return None


@contextlib.contextmanager
def window(args, sync, profiler="torch"):
    """sync: a callable that waits for the device (torch.cuda.synchronize, ...).
    profiler: "torch", or "auto" (torch.profiler, else jax.profiler)."""
    prof = _make_profiler(profiler) if args.profile else None
    _sync(sync)
    if prof is not None:
        try:
            prof.start()
        except Exception as e:  # noqa: BLE001
            _unavailable(e)
            prof = None
    _sync(sync)
    t0 = time.monotonic_ns()
    yield
    _sync(sync)
    t1 = time.monotonic_ns()
    if prof is not None:
        try:
            _report(prof.name, prof.stop())
        except Exception as e:  # noqa: BLE001
            _unavailable(e)
    print("WINDOW", t0, t1, flush=True)


def _report(source, names):
    print("PROFILE_SOURCE", source, flush=True)
    print("PROFILE", sum(names.values()), flush=True)
    for name, n in sorted(names.items()):
        print("PROFILE_NAME", n, name, flush=True)


# ---- XSpace (jax.profiler's file): just enough protobuf to count kernels -------------------------

def _varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7


def pb_fields(b):
    """(field number, wire type, value) of one protobuf message: ints for
    varints and fixed widths, bytes for length-delimited fields."""
    i, n = 0, len(b)
    while i < n:
        key, i = _varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 1:
            v, i = struct.unpack_from("<Q", b, i)[0], i + 8
        elif wt == 2:
            ln, i = _varint(b, i)
            v, i = bytes(b[i:i + ln]), i + ln
        elif wt == 5:
            v, i = struct.unpack_from("<I", b, i)[0], i + 4
        else:
            raise ValueError("protobuf wire type %d" % wt)
        yield f, wt, v


def _fields(b, number):
    return [v for f, _, v in pb_fields(b) if f == number]


def xspace_kernels(data):
    """Kernels per name on the GPU planes of an XSpace: events of the stream
    lines that carry a kernel_details stat (memcpys carry memcpy_details).
    XSpace.planes=1; XPlane.name=2, lines=3, event_metadata=4 (map id ->
    XEventMetadata: id=1, name=2, display_name=4), stat_metadata=5 (map id ->
    XStatMetadata: id=1, name=2); XLine.name=2, events=4; XEvent.metadata_id=1,
    stats=4; XStat.metadata_id=1."""
    names = collections.Counter()
    for plane in _fields(data, 1):
        pname = b"".join(_fields(plane, 2)).decode(errors="replace")
        if not pname.startswith("/device:GPU"):
            continue
        ev_name = {}
        for entry in _fields(plane, 4):
            key = (_fields(entry, 1) or [0])[0]
            md = (_fields(entry, 2) or [b""])[0]
            ev_name[key] = ((_fields(md, 2) or [b""])[0] or (_fields(md, 4) or [b""])[0]).decode(errors="replace")
        stat_name = {}
        for entry in _fields(plane, 5):
            key = (_fields(entry, 1) or [0])[0]
            md = (_fields(entry, 2) or [b""])[0]
            stat_name[key] = (_fields(md, 2) or [b""])[0].decode(errors="replace")
        kernel_stat = {k for k, v in stat_name.items() if v == "kernel_details"}
        for line in _fields(plane, 3):
            if not (_fields(line, 2) or [b""])[0].startswith(b"Stream #"):
                continue
            for ev in _fields(line, 4):
                stats = {(_fields(st, 1) or [0])[0] for st in _fields(ev, 4)}
                if stats & kernel_stat:
                    names[ev_name.get((_fields(ev, 1) or [0])[0], "")] += 1
    return names


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
