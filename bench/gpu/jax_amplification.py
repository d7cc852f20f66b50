"""bench/gpu/jax_amplification.py: hash amplification of ktrace's extent policy on a
JAX training step (XLA preallocates one device pool: every buffer of the step lies in
one allocation, the hard case for bounding regions).

    python3 bench/gpu/jax_amplification.py [--lib build/libktrace.so] [--dump build/ktrace-dump]
                                           [--out DIR] [--steps N]

The worker (this file with --worker) runs under LD_PRELOAD=libktrace.so with hashing
on: an MLP step (3 dense layers, softmax cross-entropy, SGD) jitted, then run N times.
It writes the compiled HLO.  The parent parses the HLO's fusion instructions (the XLA
kernels; a fusion's kernel is named after the instruction, '.' and '-' as '_') with
their operand and result shapes, and for every LAUNCH of such a kernel compares

  amplification = bytes hashed (sum of hash_len of pre-hashed regions)
                  / bytes of the fusion's operands and results (what it receives)

cuBLAS calls (custom-calls) are not fusions and are left out of both sides; the share
of launches matched is printed.  XLA's command buffers are off (graph replays are not
traced), deterministic ops on.  Prints BENCH| lines and one RESULT| line (no target for
JAX: the issue sets the 2x target for PyTorch).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

DTYPE_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4,
               "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16, "f8e4m3fn": 1, "f8e5m2": 1}
SHAPE = re.compile(r"\b([a-z][a-z0-9]*)\[([0-9,]*)\]")
FUSION = re.compile(r"^\s*%?([\w.\-]+)\s*=\s*(.*?)\s+fusion\((.*)\),\s*kind=")


def shape_bytes(text):
    """Bytes of every array shape in text ("f32[2,3]{1,0}" or a tuple of them)."""
    total = 0
    for dt, dims in SHAPE.findall(text):
        if dt not in DTYPE_BYTES:
            continue
        n = 1
        for d in filter(None, dims.split(",")):
            n *= int(d)
        total += n * DTYPE_BYTES[dt]
    return total


def kernel_key(name):
    return re.sub(r"[^A-Za-z0-9]", "_", name)


def fusions(hlo):
    out = {}
    for line in hlo.splitlines():
        m = FUSION.match(line)
        if m:
            name, result, operands = m.groups()
            out[kernel_key(name)] = shape_bytes(result) + shape_bytes(operands)
    return out


def worker(a):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "true")
    import jax
    import jax.numpy as jnp

    def init(key, sizes):
        ps = []
        for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:])):
            k = jax.random.fold_in(key, i)
            ps.append((jax.random.normal(k, (m, n), jnp.float32) / jnp.sqrt(m), jnp.zeros((n,), jnp.float32)))
        return ps

    def loss(ps, x, y):
        h = x
        for i, (w, b) in enumerate(ps):
            h = h @ w + b
            if i < len(ps) - 1:
                h = jax.nn.gelu(h)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(h) * y, axis=-1))

    @jax.jit
    def step(ps, x, y):
        l, g = jax.value_and_grad(loss)(ps, x, y)
        return [(w - 1e-2 * gw, b - 1e-2 * gb) for (w, b), (gw, gb) in zip(ps, g)], l

    key = jax.random.PRNGKey(0)
    ps = init(key, [512, 1024, 1024, 100])
    x = jax.random.normal(jax.random.fold_in(key, 99), (256, 512), jnp.float32)
    y = jax.nn.one_hot(jax.random.randint(jax.random.fold_in(key, 98), (256,), 0, 100), 100)
    with open(a.hlo, "w") as f:
        f.write(step.lower(ps, x, y).compile().as_text())
    for _ in range(a.steps):
        ps, l = step(ps, x, y)
    jax.block_until_ready(ps)
    print(f"jax step loss {float(l):.6f}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--worker", action="store_true")
    p.add_argument("--lib", default="build/libktrace.so")
    p.add_argument("--dump", default="build/ktrace-dump")
    p.add_argument("--out", default=None)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--hlo", default=None)
    p.add_argument("--timeout", type=int, default=240)
    a = p.parse_args()
    if a.worker:
        worker(a)
        return 0
    out = a.out or tempfile.mkdtemp()
    trace = os.path.join(out, "jax-amp.ktrace")
    hlo = os.path.join(out, "jax-amp.hlo.txt")
    env = dict(os.environ, LD_PRELOAD=os.path.abspath(a.lib), KTRACE_OUTPUT=trace, KTRACE_HASH="1",
               KTRACE_OVERWRITE="1", KTRACE_QUIET="1",
               XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") +
                          " --xla_gpu_enable_command_buffer= --xla_gpu_deterministic_ops=true").strip())
    w = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", "--hlo", hlo,
                        "--steps", str(a.steps)], env=env, capture_output=True, text=True, timeout=a.timeout)
    sys.stdout.write(w.stdout[-2000:])
    if w.returncode != 0:
        print(f"RESULT|hash-amplification-jax|FAIL|worker exited {w.returncode}: {w.stderr[-300:]!r}")
        return 0
    fz = fusions(open(hlo).read())
    d = subprocess.run([a.dump, "--json", trace], capture_output=True, text=True)
    if d.returncode not in (0,):
        print(f"RESULT|hash-amplification-jax|FAIL|ktrace-dump exited {d.returncode}: {d.stderr.strip()[:300]}")
        return 0
    recs = [json.loads(l) for l in d.stdout.splitlines() if l.startswith("{")]
    launches = [r for r in recs if r.get("type") == "launch"]
    hashed = received = matched = skipped = 0
    for r in launches:
        k = kernel_key(r.get("kernel") or "")
        if k not in fz:
            continue
        matched += 1
        if "hash_skipped" in [f.lower() for f in r.get("launch_flags", [])]:
            skipped += 1
            continue
        received += fz[k]
        hashed += sum(g["hash_len"] for g in r.get("regions", []) if g.get("pre_hash") is not None)
    allocs = [r for r in recs if r.get("type") == "alloc"]
    print(f"fusions in HLO: {len(fz)}; launches: {len(launches)}, of fusion kernels: {matched} "
          f"({skipped} not hashed); device allocations recorded: {len(allocs)}")
    if not matched or not received:
        print("RESULT|hash-amplification-jax|FAIL|no launch matched an HLO fusion (kernel naming changed?)")
        return 0
    amp = hashed / received
    print(f"BENCH|hash_amplification_jax|{amp:.2f}|x|bytes hashed / bytes of fusion operands+results, "
          f"{matched} fusion launches of {len(launches)}")
    print(f"BENCH|hash_jax_launches_matched|{100.0 * matched / len(launches):.1f}|%|launches that are HLO fusions "
          f"(the rest: cuBLAS, copies)")
    print(f"RESULT|hash-amplification-jax|PASS|amplification {amp:.2f}x over {matched} fusion launches "
          f"(XLA preallocated pool; no target for JAX)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
