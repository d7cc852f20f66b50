# Copy of /work/shared/bench/ref_step.py (the reference workload), carried to the GPU machine with the tree.
"""Reference workload for ktrace overhead figures: a small transformer training step.

4 pre-norm blocks (d=512, 8 heads, MLP 4x), batch 16 x 128 tokens, fp32, AdamW.
About 284 kernels per step on an H200 with PyTorch 2.11 (cuBLAS, ATen elementwise,
layer norm, softmax, fused AdamW multi-tensor apply).

    python3 ref_step.py                 # plain, prints median ms/step
    python3 ref_step.py --compile       # torch.compile'd model (Inductor/Triton kernels)
    python3 ref_step.py --graphs        # torch.compile(mode="reduce-overhead"): CUDA graph replays
    python3 ref_step.py --debugmode     # under PyTorch DebugMode + log_tensor_hashes (the anchor)
    LD_PRELOAD=.../libktrace.so python3 ref_step.py   # under ktrace

Prints one line: `ref_step ms_per_step=<median> steps=<n> mode=<mode> checksum=<hex>`.
The checksum is a bitwise digest of the final parameters, so runs with and without a
tool can be compared for transparency (same seed, deterministic algorithms where possible).
"""
import argparse, hashlib, os, time
import torch
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=20)
p.add_argument("--warmup", type=int, default=3)
p.add_argument("--compile", action="store_true")
p.add_argument("--graphs", action="store_true", help='torch.compile(mode="reduce-overhead")')
p.add_argument("--debugmode", action="store_true")
a = p.parse_args()

torch.manual_seed(0)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.att = nn.MultiheadAttention(d, 8, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.att(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


d = 512
model = nn.Sequential(*[Block(d) for _ in range(4)], nn.Linear(d, 1000)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
fwd = (torch.compile(model, mode="reduce-overhead") if a.graphs
       else torch.compile(model) if a.compile else model)
x = torch.randn(16, 128, d, device="cuda")
y = torch.randint(0, 1000, (16, 128), device="cuda")


def step():
    out = fwd(x)
    loss = nn.functional.cross_entropy(out.flatten(0, 1), y.flatten())
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def run_step():
    if a.debugmode:
        from torch.utils._debug_mode import DebugMode
        with DebugMode(), DebugMode.log_tensor_hashes():
            step()
    else:
        step()


for _ in range(a.warmup):
    run_step()
torch.cuda.synchronize()
times = []
for _ in range(a.steps):
    t = time.perf_counter()
    run_step()
    torch.cuda.synchronize()
    times.append(time.perf_counter() - t)
times.sort()
h = hashlib.sha256()
for prm in model.parameters():
    h.update(prm.detach().cpu().numpy().tobytes())
mode = "graphs" if a.graphs else "compile" if a.compile else "debugmode" if a.debugmode else "eager"
print(f"ref_step ms_per_step={times[len(times) // 2] * 1e3:.3f} steps={a.steps} mode={mode} checksum={h.hexdigest()[:16]}")
