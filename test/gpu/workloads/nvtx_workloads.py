"""test/gpu/workloads/nvtx_workloads.py: the programs of test/gpu/90-nvtx-*.sh.

    nvtx_workloads.py torch [--plant] [--steps N] [--workers N] [--compile] [--threads]
    nvtx_workloads.py jax [--plant] [--steps N]

torch  a small training step (conv, ReLU, x4 upsampling, conv, MSE, SGD) fed
       by a DataLoader with --workers worker processes (default 2).  With
       --plant the upsampling is bilinear: its backward
       (upsample_bilinear2d_backward) adds with float atomics, the planted
       non-deterministic op; without, nearest (deterministic).  The backward
       runs on autograd's device thread.  --compile compiles the head (a
       second conv) with torch.compile: Inductor's kernels, its compile
       workers and Triton's launcher are there too.  --threads runs two
       more steps in a second Python thread at the same time as the main
       thread's (both launch while the other holds the GIL).
jax    a jitted training step (MLP, MSE, SGD) whose pooling sits inside
       jax.named_scope("kt_pool"): with --plant a scatter-add (float atomics),
       else a one-hot matrix product; XLA's default flags (command buffers).

Ground truth, printed by the program itself:
    FORWARD_CALL <file> <line> <function>  the line of the model that calls
                                           the planted op (torch: F.interpolate;
                                           jax: the scatter-add)
    PLANTED <op>                           the op (aten::upsample_bilinear2d, scatter-add)
    SCOPE <name>                           jax: the named scope around it
and kt_common's PID and OUTPUT lines (the final parameters' digest).
Exit 0; 3 on a failure; 4 when the framework is missing (UNAVAILABLE <why>).
"""
import argparse
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import kt_common as kc  # noqa: E402

SEED = 1234
FORWARD = {}


def unavailable(why):
    print("UNAVAILABLE", why, flush=True)
    sys.exit(4)


def need(module):
    try:
        return __import__(module)
    except Exception as e:  # noqa: BLE001 (any import failure: the framework is not usable)
        unavailable(f"{module}: {type(e).__name__}: {e}")


def forward_call(line, function):
    """Record the model line that calls the planted op (once)."""
    if "line" not in FORWARD:
        FORWARD.update(file=os.path.abspath(__file__), line=line, function=function)


# ---- PyTorch ------------------------------------------------------------------------------


def torch_main(a):
    torch = need("torch")
    if not torch.cuda.is_available():
        unavailable("PyTorch sees no CUDA device")
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(SEED)
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = True, False
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    up = dict(mode="bilinear", align_corners=False) if a.plant else dict(mode="nearest")

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(4, 16, 3, padding=1)
            self.c2 = nn.Conv2d(16, 4, 3, padding=1)
            self.head = nn.Conv2d(4, 4, 1)

        def forward(self, x):
            h = torch.relu(self.c1(x))
            forward_call(sys._getframe().f_lineno + 1, "forward")
            h = F.interpolate(h, scale_factor=4, **up)
            return self.c2(h)

    class Data(torch.utils.data.Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            g = torch.Generator().manual_seed(SEED + i)
            return torch.randn(4, 32, 32, generator=g), torch.randn(4, 128, 128, generator=g)

    model = Net().cuda()
    head = torch.compile(model.head) if a.compile else model.head
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loader = torch.utils.data.DataLoader(Data(), batch_size=8, num_workers=a.workers,
                                         persistent_workers=a.workers > 0)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(head(model(x)), y)
        loss.backward()
        opt.step()
        return loss

    def epoch(steps):
        n = 0
        for x, y in loader:
            if n == steps:
                break
            step(x.cuda(non_blocking=False), y.cuda())
            n += 1

    errors = []

    def side():
        try:
            with torch.no_grad():
                for _ in range(2):
                    z = torch.randn(8, 4, 32, 32, device="cuda")
                    model(z).sum().item()
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    t = threading.Thread(target=side) if a.threads else None
    if t:
        t.start()
    epoch(a.steps or 4)
    if t:
        t.join()
    torch.cuda.synchronize()
    if errors:
        print("FAIL side thread:", errors[0], flush=True)
        sys.exit(3)
    print("FORWARD_CALL", FORWARD["file"], FORWARD["line"], FORWARD["function"], flush=True)
    print("PLANTED", "aten::upsample_bilinear2d" if a.plant else "none", flush=True)
    kc.output(kc.torch_bytes([p.detach() for p in model.parameters()]))


# ---- JAX ----------------------------------------------------------------------------------


def jax_main(a):
    if not a.plant:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_deterministic_ops=true").strip()
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = need("jax")
    try:
        if not any(d.platform == "gpu" for d in jax.devices()):
            unavailable("JAX sees no GPU")
    except RuntimeError as e:
        unavailable(f"JAX has no GPU backend: {e}")
    import jax.numpy as jnp
    import numpy as np

    rows = 16
    n, din, hid, dout = 1 << 15, 256, 512, 64
    ks = jax.random.split(jax.random.PRNGKey(SEED), 6)
    params = [jax.random.normal(ks[0], (din, hid)) * 0.05, jnp.zeros((hid,)),
              jax.random.normal(ks[1], (hid, dout)) * 0.05, jnp.zeros((dout,))]
    x, y = jax.random.normal(ks[2], (n, din)), jax.random.normal(ks[3], (n, dout))
    idx = jax.random.randint(ks[4], (n,), 0, rows)
    onehot = jax.nn.one_hot(idx, rows, dtype=jnp.float32).T

    def loss(p, x, y, idx, onehot):
        h = jax.nn.relu(x @ p[0] + p[1])
        with jax.named_scope("kt_pool"):
            if a.plant:
                forward_call(sys._getframe().f_lineno + 1, "loss")
                pooled = jnp.zeros((rows, hid), jnp.float32).at[idx].add(h)
            else:
                pooled = onehot @ h
        return jnp.mean((h @ p[2] + p[3] - y) ** 2) + 1e-6 * jnp.mean(pooled ** 2)

    @jax.jit
    def step(p, x, y, idx, onehot):
        grads = jax.grad(loss)(p, x, y, idx, onehot)
        return [w - 0.01 * g for w, g in zip(p, grads)]

    for _ in range(a.steps or 4):
        params = step(params, x, y, idx, onehot)
    jax.block_until_ready(params)
    if FORWARD:
        print("FORWARD_CALL", FORWARD["file"], FORWARD["line"], FORWARD["function"], flush=True)
    print("PLANTED", "scatter-add" if a.plant else "none", flush=True)
    print("SCOPE kt_pool", flush=True)
    kc.output([np.asarray(w) for w in params])


def options(p):
    p.add_argument("framework", choices=["torch", "jax"])
    p.add_argument("--plant", action="store_true")
    p.add_argument("--steps", type=int, default=0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--threads", action="store_true")


def main():
    a = kc.parse("programs of the NVTX tests", options)
    (torch_main if a.framework == "torch" else jax_main)(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
