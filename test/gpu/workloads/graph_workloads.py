"""test/gpu/workloads/graph_workloads.py: the Python CUDA graph workloads of
test/gpu/70-graphs-*.sh.

    graph_workloads.py SETTING [--plant] [--profile] [--steps N]

SETTING
  torch_graph  a step captured with torch.cuda.graph (cuBLAS GEMM, ReLU, a
               pooling of 65536 rows into 8, tanh, an in-place state update)
               and replayed --steps times (default 8)
  torch_ro     a training step (Linear-GELU-LayerNorm-Linear, MSE, the same
               pooling, SGD) whose loss is compiled with
               torch.compile(mode="reduce-overhead"): Inductor's CUDA graph
               trees replay the forward and the backward (default 6 steps)
  jax_step     a jitted JAX training step (MLP, MSE, SGD, the pooling) with
               the default XLA flags: XLA runs it as command buffers (CUDA
               graphs) (default 5 steps); the deterministic variant adds
               --xla_gpu_deterministic_ops=true (XLA's reductions may use
               atomics otherwise)
--plant: the pooling is a float-atomic scatter (torch index_add_ ->
  indexFuncLargeIndex, Inductor's tl.atomic_add scatter, XLA's scatter-add):
  the planted non-deterministic kernel inside the graph.  Without it the
  pooling is a one-hot matrix product (deterministic).

The warm-up (eager warm-up before capture, Inductor's warm-up and recording
runs, XLA's compilation) multiplies the pooled values by 0, so that any
order of the atomic additions gives the same sums there: in the planted
variants the first non-deterministic launch is one replayed from a graph in
the measured window.  The window (kt_common.window) holds the graph replays;
--profile counts its kernels with the CUDA profiler (kt_common.py).

Prints the kt_common.py lines (PID, WINDOW, PROFILE..., OUTPUT) and
    GRAPH_WORKLOAD <setting> <det|plant> steps=<n>
Exit 0; 3 on a failure; 4 when the framework is missing (UNAVAILABLE <why>).
"""
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# cuBLAS reads it when its handle is made: deterministic workspaces.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import kt_common as kc  # noqa: E402

SETTINGS = {"torch_graph": 8, "torch_ro": 6, "jax_step": 5}
POOL_ROWS = 8


def options(p):
    p.add_argument("setting", choices=sorted(SETTINGS))
    p.add_argument("--plant", action="store_true", help="the pooling is a float-atomic scatter")
    p.add_argument("--steps", type=int, default=0, help="graph replays / training steps in the window")


def unavailable(why):
    print("UNAVAILABLE", why, flush=True)
    sys.exit(4)


def need(module):
    if importlib.util.find_spec(module) is None:
        unavailable(f"{module} is not installed")
    return __import__(module)


# ---- torch.cuda.graph ------------------------------------------------------------------------------

def _torch():
    torch = need("torch")
    if not torch.cuda.is_available():
        unavailable("PyTorch sees no CUDA device")
    torch.manual_seed(1234)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch


def _pool(torch, h, idx, onehot, plant):
    if plant:
        return torch.zeros(POOL_ROWS, h.shape[1], device=h.device, dtype=h.dtype).index_add_(0, idx, h)
    return onehot @ h


def torch_graph(args, steps):
    torch = _torch()
    n, d = 1 << 16, 64
    x0 = torch.randn(n, d, device="cuda")
    x = x0.clone()
    w = torch.randn(d, d, device="cuda") * 0.1
    idx = torch.randint(0, POOL_ROWS, (n,), device="cuda")
    onehot = torch.nn.functional.one_hot(idx, POOL_ROWS).T.float().contiguous()
    mask = torch.zeros(1, device="cuda")
    out = torch.empty(POOL_ROWS, d, device="cuda")

    def step():
        h = torch.relu(x @ w) * mask
        pooled = _pool(torch, h, idx, onehot, args.plant)
        out.copy_(pooled * 0.5 + torch.tanh(pooled).sum(0))
        x.mul_(0.5).add_(h, alpha=0.25)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # the warm-up the PyTorch documentation asks for before a capture
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    x.copy_(x0)
    torch.cuda.synchronize()
    outs = []
    with kc.window(args, torch.cuda.synchronize):
        mask.fill_(1.0)
        for _ in range(steps):
            g.replay()
            outs.append(out.clone())
    kc.output(kc.torch_bytes(outs + [x]))


# ---- torch.compile(mode="reduce-overhead") ---------------------------------------------------------

def torch_ro(args, steps):
    torch = _torch()
    nn, F = torch.nn, torch.nn.functional
    n, d, hid = 1 << 15, 64, 256
    model = nn.Sequential(nn.Linear(d, hid), nn.GELU(), nn.LayerNorm(hid), nn.Linear(hid, d)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    xs = torch.randn(n, d, device="cuda")
    ys = torch.randn(n, d, device="cuda")
    target = torch.randn(POOL_ROWS, d, device="cuda")
    idx = torch.randint(0, POOL_ROWS, (n,), device="cuda")
    onehot = F.one_hot(idx, POOL_ROWS).T.float().contiguous()
    zero, one = torch.zeros(1, device="cuda"), torch.ones(1, device="cuda")

    def loss_fn(x, y, t, idx, onehot, mask):
        h = model(x)
        pooled = _pool(torch, h * mask, idx, onehot, args.plant)
        return F.mse_loss(h, y) + F.mse_loss(pooled / 4096.0, t)

    compiled = torch.compile(loss_fn, mode="reduce-overhead")
    losses = []

    def train_step(mask):
        torch.compiler.cudagraph_mark_step_begin()
        loss = compiled(xs, ys, target, idx, onehot, mask)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach().clone()

    for _ in range(3):  # Inductor's warm-up run, the recording, a first replay
        train_step(zero)
    torch.cuda.synchronize()
    with kc.window(args, torch.cuda.synchronize):
        for _ in range(steps):
            losses.append(train_step(one))
    kc.output(kc.torch_bytes(losses + [p.detach() for p in model.parameters()]))


# ---- JAX, default XLA flags ------------------------------------------------------------------------

def jax_step(args, steps):
    flags = kc.jax_profiler_flags(args)
    if not args.plant:
        # XLA's reductions may add with atomics (e.g. a bias gradient's column
        # sum): the deterministic variant asks for deterministic kernels; the
        # command buffers stay on.
        flags = (flags + " --xla_gpu_deterministic_ops=true").strip()
    if flags:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flags).strip()
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = need("jax")
    try:
        if not any(dev.platform == "gpu" for dev in jax.devices()):
            unavailable("JAX sees no GPU")
    except RuntimeError as e:
        unavailable(f"JAX has no GPU backend: {e}")
    import jax.numpy as jnp
    import numpy as np

    n, din, hid, dout = 1 << 15, 256, 512, 64
    ks = jax.random.split(jax.random.PRNGKey(1234), 6)
    params = [jax.random.normal(ks[0], (din, hid)) * 0.05, jnp.zeros((hid,)),
              jax.random.normal(ks[1], (hid, dout)) * 0.05, jnp.zeros((dout,))]
    x, y = jax.random.normal(ks[2], (n, din)), jax.random.normal(ks[3], (n, dout))
    idx = jax.random.randint(ks[4], (n,), 0, 2 * POOL_ROWS)
    onehot = jax.nn.one_hot(idx, 2 * POOL_ROWS, dtype=jnp.float32).T

    def loss(p, x, y, idx, onehot, mask):
        h = jax.nn.relu(x @ p[0] + p[1])
        hm = h * mask
        if args.plant:
            pooled = jnp.zeros((2 * POOL_ROWS, hid), jnp.float32).at[idx].add(hm)
        else:
            pooled = onehot @ hm
        return jnp.mean((h @ p[2] + p[3] - y) ** 2) + 1e-6 * jnp.mean(pooled ** 2)

    @jax.jit
    def step(p, x, y, idx, onehot, mask):
        grads = jax.grad(loss)(p, x, y, idx, onehot, mask)
        return [a - 0.01 * b for a, b in zip(p, grads)]

    zero, one = jnp.zeros((), jnp.float32), jnp.ones((), jnp.float32)
    for _ in range(2):  # compilation, then one run of the command buffers
        params = step(params, x, y, idx, onehot, zero)
    jax.block_until_ready(params)
    last = [params]

    def sync():
        jax.block_until_ready(last[0])

    with kc.window(args, sync, profiler="auto"):
        for _ in range(steps):
            params = step(params, x, y, idx, onehot, one)
            last[0] = params
    kc.output([np.asarray(a) for a in params])


def main():
    args = kc.parse("CUDA graph workloads", options)
    steps = args.steps or SETTINGS[args.setting]
    print("GRAPH_WORKLOAD", args.setting, "plant" if args.plant else "det", f"steps={steps}", flush=True)
    {"torch_graph": torch_graph, "torch_ro": torch_ro, "jax_step": jax_step}[args.setting](args, steps)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - one line for the log, then the traceback
        print("WORKLOAD_ERROR", type(e).__name__, str(e).replace("\n", " ")[:300], flush=True)
        raise
