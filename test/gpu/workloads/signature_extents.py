"""test/gpu/workloads/signature_extents.py: Inductor kernels' regions bounded by
their own source (format 1.6, region flag SIGNATURE), on the GPU
(test/gpu/32-signature-extents.sh).

    signature_extents.py run OUT     a torch.compile'd step (static shapes) on
                                     tensors of the caching allocator (run under
                                     `ktrace run --keep-allocator`); writes the
                                     inputs' and the output's (data_ptr, nbytes)
                                     to OUT
    signature_extents.py verify DUMP OUT
                                     checks the trace (ktrace-dump --json lines in
                                     DUMP): RESULT lines
"""
import json
import sys


def program(out):
    import torch

    torch.manual_seed(0)
    a = torch.randn(512, 384, device="cuda")
    w = torch.randn(384, 256, device="cuda")
    b = torch.randn(256, device="cuda")

    @torch.compile(dynamic=False)
    def step(a, w, b):
        h = torch.nn.functional.gelu(a @ w + b)
        return h.sum(-1), h * 2.0

    for _ in range(3):
        s, h2 = step(a, w, b)
    torch.cuda.synchronize()
    with open(out, "w") as f:
        for name, t in (("b", b), ("s", s), ("h2", h2)):
            f.write("%s %d %d\n" % (name, t.data_ptr(), t.numel() * t.element_size()))


def result(name, ok, detail):
    print("RESULT|%s|%s|%s" % (name, "PASS" if ok else "FAIL", detail))


def verify(dump, out):
    tensors = {}
    with open(out) as f:
        for line in f:
            name, ptr, nbytes = line.split()
            tensors[int(ptr)] = (name, int(nbytes))
    triton = sig = 0
    matched = {}
    with open(dump) as f:
        for line in f:
            if '"type":"launch"' not in line:
                continue
            r = json.loads(line)
            if not (r.get("kernel") or "").startswith("triton_"):
                continue
            for g in r.get("regions", []):
                triton += 1
                if "signature" not in g.get("flags", []):
                    continue
                sig += 1
                ptr = int(g["ptr"], 16)
                if ptr in tensors:
                    matched.setdefault(tensors[ptr][0], set()).add(g["hash_len"] == tensors[ptr][1])
    result("signature-extents-present", sig > 0,
           "%d of %d regions of Triton kernels bounded by their source" % (sig, triton))
    exact = [n for n, oks in matched.items() if oks == {True}]
    result("signature-extents-match-tensors", bool(matched) and len(exact) == len(matched),
           "tensors whose regions are bounded by their kernel's source: %s; extent equals the tensor's "
           "bytes for: %s" % (", ".join(sorted(matched)) or "none", ", ".join(sorted(exact)) or "none"))


if __name__ == "__main__":
    if sys.argv[1] == "run":
        program(sys.argv[2])
    else:
        verify(sys.argv[2], sys.argv[3])
