"""test/gpu/workloads/jax_jit.py: a JAX jit function (cuBLAS matmul and XLA
fusions).  XLA's command buffers (CUDA graphs) are turned off: graph replays
never pass through a launch entry point (a documented limit of ktrace).

    python3 jax_jit.py [--profile]
"""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_gpu_enable_command_buffer= --xla_gpu_deterministic_ops=true").strip()
import kt_common as kc  # noqa: E402

args = kc.parse("JAX jit function")

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
with kc.window(args, sync):
    for _ in range(3):
        r = f(a, b)
        last[0] = r
        outs.append(r)
    jax.block_until_ready(outs)
kc.output([np.asarray(o) for o in outs])
