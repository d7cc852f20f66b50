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
of launches matched is printed.  XLA's command buffers are on, as by default (the
fusion kernels run as CUDA graph replays), deterministic ops on.  Prints BENCH| lines and one RESULT| line (no target for
JAX: the issue sets the 2x target for PyTorch).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from replay_lens import apply_lens

DTYPE_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4,
               "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16, "f8e4m3fn": 1, "f8e5m2": 1}
SHAPE = re.compile(r"\b([a-z][a-z0-9]*)\[([0-9,]*)\]")
INSTR = re.compile(r"^\s*(?:ROOT\s+)?%([\w.\-]+)\s*=\s*(.*?)\s+([a-z][\w\-]*)\((.*)$")
OPERAND = re.compile(r"%([\w.\-]+)")
SHAPE_FULL = re.compile(r"\b[a-z][a-z0-9]*\[[0-9,]*\]")


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
    """kernel name -> bytes of each of the fusion's operands, then each result.

    HLO text prints operands by name only, so every instruction's shape is
    looked up (instruction names are unique in a module).  A fusion's kernel
    is named after the instruction, or after deduplicated_name when XLA
    shares one kernel between identical fusions (same shapes)."""
    shapes, fus = {}, []
    for line in hlo.splitlines():
        m = INSTR.match(line)
        if not m:
            continue
        name, shape, op, rest = m.groups()
        shapes[name] = shape_bytes(shape)
        if op == "fusion":
            args = rest[:rest.index(")")] if ")" in rest else rest
            dd = re.search(r'deduplicated_name="([^"]+)"', rest)
            fus.append((name, dd.group(1) if dd else None, shape, OPERAND.findall(args)))
    out = {}
    for name, dedup, shape, ops in fus:
        results = [shape_bytes(t) for t in SHAPE_FULL.findall(shape)]
        sizes = [shapes.get(o, 0) for o in ops] + results
        out[kernel_key(name)] = sizes
        if dedup:
            out.setdefault(kernel_key(dedup), sizes)
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
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--hlo", default=None)
    p.add_argument("--timeout", type=int, default=240)
    p.add_argument("--analyze", nargs=2, metavar=("TRACE", "HLO"), help="only analyse an existing trace")
    p.add_argument("--lens", help="with --analyze: region lengths from build/extent_replay")
    p.add_argument("--detail", type=int, default=0, help="print the N launches hashing the most excess bytes")
    a = p.parse_args()
    if a.worker:
        worker(a)
        return 0
    if a.analyze:
        return analyze(a.analyze[0], a.analyze[1], a.dump, a.detail, a.steps, a.lens)
    out = a.out or tempfile.mkdtemp()
    trace = os.path.join(out, "jax-amp.ktrace")
    hlo = os.path.join(out, "jax-amp.hlo.txt")
    env = dict(os.environ, LD_PRELOAD=os.path.abspath(a.lib), KTRACE_OUTPUT=trace, KTRACE_HASH="1",
               KTRACE_OVERWRITE="1", KTRACE_QUIET="1",
               XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + " --xla_gpu_deterministic_ops=true").strip())
    w = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", "--hlo", hlo,
                        "--steps", str(a.steps)], env=env, capture_output=True, text=True, timeout=a.timeout)
    sys.stdout.write(w.stdout[-2000:])
    if w.returncode != 0:
        print(f"RESULT|hash-amplification-jax|FAIL|worker exited {w.returncode}: {w.stderr[-300:]!r}")
        return 0
    return analyze(trace, hlo, a.dump, a.detail, a.steps)


def analyze(trace, hlo, dump, detail, steps, lens=None):
    fz = fusions(open(hlo).read())
    d = subprocess.run([dump, "--json", trace], capture_output=True, text=True)
    if d.returncode != 0:
        print(f"RESULT|hash-amplification-jax|FAIL|ktrace-dump exited {d.returncode}: {d.stderr.strip()[:300]}")
        return 0
    recs = [json.loads(l) for l in d.stdout.splitlines() if l.startswith("{")]
    launches = [r for r in recs if r.get("type") == "launch"]
    if lens:
        apply_lens(launches, lens)
    # The step's kernels are the fusion kernels launched at least once per
    # step (the init functions' kernels reuse fusion names but run once).
    count = {}
    for r in launches:
        count[r.get("kernel_id")] = count.get(r.get("kernel_id"), 0) + 1
    step_kernels = {kid for kid, c in count.items() if c >= steps}
    hashed = received = matched = skipped = 0
    all_hashed = 0
    regs_known = regs_covered = 0
    per_step = {}   # occurrence index of the kernel (the step) -> [hashed, received]
    seen = {}
    worst = []
    for r in launches:
        if r.get("kernel_id") not in step_kernels or kernel_key(r.get("kernel") or "") not in fz:
            all_hashed += sum(g["hash_len"] for g in r.get("regions", []) if g.get("pre_hash") is not None)
        k = kernel_key(r.get("kernel") or "")
        if r.get("kernel_id") not in step_kernels or k not in fz:
            continue
        matched += 1
        if "hash_skipped" in [f.lower() for f in r.get("launch_flags", [])]:
            skipped += 1
            continue
        regs = r.get("regions", [])
        h = sum(g["hash_len"] for g in regs if g.get("pre_hash") is not None)
        want = sum(fz[k])
        received += want
        hashed += h
        all_hashed += h
        if len(regs) == len(fz[k]):
            for g, size in zip(sorted(regs, key=lambda g: g["param_offset"]), fz[k]):
                regs_known += 1
                regs_covered += g["hash_len"] >= size
        occ = seen[k] = seen.get(k, 0) + 1
        st = per_step.setdefault(occ, [0, 0])
        st[0] += h
        st[1] += want
        worst.append((h - want, occ, k, fz[k], regs))
    for occ in sorted(per_step):
        hs, rs = per_step[occ]
        print(f"occurrence {occ}: hashed {hs} B, received {rs} B, amplification {hs / max(rs, 1):.2f}x")
    worst.sort(key=lambda w: -w[0])
    for excess, occ, k, sizes, regs in worst[:detail]:
        rl = " ".join(f"+{int(g['ptr'], 16) - int(g['alloc_base'], 16):#x}:{g['hash_len']}"
                      f"{'C' if 'capped' in g.get('flags', []) else ''}" for g in regs)
        print(f"excess {excess} B occurrence {occ} {k[:40]} receives {sizes}; regions {rl}")
    print(f"fusions in HLO: {len(fz)}; launches: {len(launches)}, of the step's fusion kernels: {matched} "
          f"({skipped} not hashed)")
    if not matched or not received:
        print("RESULT|hash-amplification-jax|FAIL|no launch matched an HLO fusion (kernel naming changed?)")
        return 0
    amp = hashed / received
    print(f"BENCH|hash_amplification_jax|{amp:.2f}|x|bytes hashed / bytes of fusion operands+results, "
          f"{matched} fusion launches of {len(launches)}")
    if regs_known:
        print(f"BENCH|hash_jax_coverage|{100.0 * regs_covered / regs_known:.1f}|%|fusion buffers whose region "
              f"covers the whole buffer ({regs_covered} of {regs_known})")
    print(f"BENCH|hash_jax_bytes_per_launch|{all_hashed / max(len(launches), 1) / 2**20:.2f}|MiB|"
          f"bytes pre-hashed per launch, all {len(launches)} launches (cuBLAS included)")
    print(f"RESULT|hash-amplification-jax|PASS|amplification {amp:.2f}x over {matched} fusion launches "
          f"(XLA preallocated pool; no target for JAX)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
