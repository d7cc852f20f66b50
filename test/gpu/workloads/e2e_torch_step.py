"""test/gpu/workloads/e2e_torch_step.py: the PyTorch workload of test/gpu/40-e2e-torch.sh.

A small MLP training step (Linear 256->512, ReLU, Linear 512->256, MSE, SGD),
made deterministic: fixed seeds, torch.use_deterministic_algorithms(True),
CUBLAS_WORKSPACE_CONFIG=:4096:8, no TF32, no cuDNN benchmarking.

  --plant    add one non-deterministic op: index_add_ of the 8192 hidden rows
             into 8 rows (1024 float atomics per element), with deterministic
             algorithms switched off around that op only (in deterministic mode
             PyTorch would pick a deterministic implementation)
  E2E_SEED   seed of the input data (default 0; "random": a new seed per run);
             x and y are made on the CPU and copied to the GPU (host-to-device)

Prints one line: e2e_torch_step plant=<0|1> seed=<s> loss=<l> params=<sha256 prefix>
"""
import argparse
import hashlib
import os

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--plant", action="store_true")
p.add_argument("--steps", type=int, default=2)
a = p.parse_args()

torch.use_deterministic_algorithms(True)
torch.backends.cudnn.benchmark = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.manual_seed(0)

seed_env = os.environ.get("E2E_SEED", "0")
seed = int.from_bytes(os.urandom(4), "little") if seed_env == "random" else int(seed_env)
g = torch.Generator().manual_seed(seed)

ROWS, TARGETS = 8192, 8
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 256)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(ROWS, 256, generator=g).cuda()  # the input data: host-to-device copies
y = torch.randn(ROWS, 256, generator=g).cuda()
idx = (torch.arange(ROWS) % TARGETS).cuda()

for _ in range(a.steps):
    h = model[1](model[0](x))
    if a.plant:
        torch.use_deterministic_algorithms(False)
        agg = torch.zeros(TARGETS, 512, device="cuda").index_add_(0, idx, h.detach())
        torch.use_deterministic_algorithms(True)
        h = h + agg[idx] * 1e-3
    out = model[2](h)
    loss = nn.functional.mse_loss(out, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
torch.cuda.synchronize()

digest = hashlib.sha256()
for prm in model.parameters():
    digest.update(prm.detach().cpu().numpy().tobytes())
print(f"e2e_torch_step plant={int(a.plant)} seed={seed} loss={loss.item():.9g} params={digest.hexdigest()[:16]}")
