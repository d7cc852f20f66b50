"""test/gpu/workloads/wheel_torch.py: the PyTorch program of test/gpu/80-wheel.sh.

Runs with the ktrace module of the installed wheel: a warm-up step inside
ktrace.paused() (not traced), then --steps steps of a small MLP, each announced
with ktrace.mark("step N"). Deterministic (fixed seeds, deterministic algorithms)
unless --plant adds index_add_ of 8192 rows into 8 (float atomics) with
deterministic algorithms off around it only.

Prints LD_PRELOAD (which library traced it) and one line with the loss.
"""
import argparse
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import ktrace  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--plant", action="store_true")
p.add_argument("--steps", type=int, default=2)
a = p.parse_args()
print("LD_PRELOAD=" + os.environ.get("LD_PRELOAD", ""), "ktrace=" + ktrace.__file__, file=sys.stderr)

torch.use_deterministic_algorithms(True)
torch.backends.cuda.matmul.allow_tf32 = False
torch.manual_seed(0)
ROWS, TARGETS = 8192, 8
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 256)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
g = torch.Generator().manual_seed(0)
x = torch.randn(ROWS, 256, generator=g).cuda()
y = torch.randn(ROWS, 256, generator=g).cuda()
idx = (torch.arange(ROWS) % TARGETS).cuda()


def step():
    h = model[1](model[0](x))
    if a.plant:
        torch.use_deterministic_algorithms(False)
        agg = torch.zeros(TARGETS, 512, device="cuda").index_add_(0, idx, h.detach())
        torch.use_deterministic_algorithms(True)
        h = h + agg[idx] * 1e-3
    loss = nn.functional.mse_loss(model[2](h), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


with ktrace.paused():  # warm-up (cuBLAS handles, allocator): not traced
    with torch.no_grad():
        model(x).sum().item()
for s in range(a.steps):
    ktrace.mark("step %d" % s)
    loss = step()
torch.cuda.synchronize()
print("wheel_torch plant=%d loss=%.9g" % (a.plant, loss.item()))
