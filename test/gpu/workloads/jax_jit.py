"""test/gpu/workloads/jax_jit.py: a JAX jit function (cuBLAS matmul and XLA
fusions).  XLA's command buffers are on, as by default: XLA runs the function's
kernels as CUDA graphs, so the kernels counted are graph replays.
--xla_gpu_deterministic_ops=true keeps XLA from choosing GEMM kernels by timing
them in each process, so that the runs with and without ktrace run the same
kernels (the run without ktrace is the ground truth of the run with it).

    python3 jax_jit.py [--profile]
"""
import os

import kt_common as kc

args = kc.parse("JAX jit function")
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
os.environ["XLA_FLAGS"] = " ".join(f for f in (os.environ.get("XLA_FLAGS", ""), "--xla_gpu_deterministic_ops=true",
                                               kc.jax_profiler_flags(args)) if f)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


@jax.jit
def f(a, b):
    h = jnp.tanh(a @ b)
    return h.sum(axis=0) * 0.5 + jnp.exp(-h).mean()


ka, kb = jax.random.split(jax.random.PRNGKey(0))
a = jax.random.normal(ka, (256, 256), dtype=jnp.float32)
b = jax.random.normal(kb, (256, 256), dtype=jnp.float32)
jax.block_until_ready(f(a, b))
last = [None]


def sync():
    if last[0] is not None:
        jax.block_until_ready(last[0])


outs = []
with kc.window(args, sync, profiler="auto"):
    for _ in range(3):
        r = f(a, b)
        last[0] = r
        outs.append(r)
    jax.block_until_ready(outs)
kc.output([np.asarray(o) for o in outs])
