"""bench/gpu/ref_model.py: the model and training step of ../shared/bench/ref_step.py,
importable (ref_step.py itself runs when imported).

4 pre-norm blocks (d=512, 8 heads, MLP 4x), batch 16 x 128 tokens, fp32, AdamW,
seed 0, TF32 off: the same construction order as ref_step.py, so the same
parameters and kernels.  build(compile) returns (model, step, fwd) where step()
runs one training step.
"""


def build(compile=False):
    import torch
    import torch.nn as nn

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
    fwd = torch.compile(model) if compile else model
    x = torch.randn(16, 128, d, device="cuda")
    y = torch.randint(0, 1000, (16, 128), device="cuda")

    def step():
        out = fwd(x)
        loss = nn.functional.cross_entropy(out.flatten(0, 1), y.flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return model, step, fwd


def checksum(model):
    """sha256 prefix of the final parameters, as ref_step.py prints it."""
    import hashlib

    h = hashlib.sha256()
    for prm in model.parameters():
        h.update(prm.detach().cpu().numpy().tobytes())
    return h.hexdigest()[:16]
