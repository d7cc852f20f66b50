"""test/gpu/workloads/torch_eager.py: a PyTorch eager training step (cuDNN
convolutions, cuBLAS linear layers, ATen elementwise ops and reductions,
layer norm, cross entropy, AdamW with multi-tensor apply), deterministic.

    python3 torch_eager.py [--profile] [--compile]

--compile runs the same model under torch.compile (Inductor); the optimizer
stays eager.  Inductor's static CUDA launcher is used for the model when this
PyTorch has it; --compile also compiles a second small function with Triton's
own launcher, so both launch paths run.  Output lines: see kt_common.py.
"""
import os

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import contextlib  # noqa: E402

import kt_common as kc  # noqa: E402

import sys  # noqa: E402

compile_mode = "--compile" in sys.argv
if compile_mode:
    sys.argv.remove("--compile")
args = kc.parse("PyTorch training step")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
torch.backends.cudnn.benchmark = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1, stride=2)
        self.norm = nn.LayerNorm(32 * 8 * 8)
        self.fc1 = nn.Linear(32 * 8 * 8, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = nn.functional.gelu(self.conv2(x))
        x = self.norm(x.flatten(1))
        return self.fc2(torch.relu(self.fc1(x)))


model = Net().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(32, 3, 16, 16, device="cuda")
y = torch.randint(0, 10, (32,), device="cuda")
fwd = model
extra = None
launcher = None
if compile_mode:
    import torch._inductor.config as icfg

    static = hasattr(icfg, "use_static_cuda_launcher")
    print("STATIC_LAUNCHER_OPTION", static, flush=True)
    fwd = torch.compile(model)

    def g(a):
        return (torch.sin(a) * 2 + 1).sum(dim=1)

    extra = torch.compile(g)

    def launcher(static_on):
        # Compilation is lazy: the option must hold around the calls.
        return icfg.patch(use_static_cuda_launcher=static_on) if static else contextlib.nullcontext()


def step():
    opt.zero_grad(set_to_none=True)
    with launcher(True) if launcher else contextlib.nullcontext():
        loss = nn.functional.cross_entropy(fwd(x), y)
        loss.backward()
    opt.step()
    out = [loss.detach()]
    if extra is not None:
        with launcher(False):
            out.append(extra(x.flatten(1)))
    return out


for _ in range(2):
    step()
results = []
with kc.window(args, torch.cuda.synchronize):
    for _ in range(3):
        results += step()
kc.output(kc.torch_bytes([*model.parameters(), *results]))
