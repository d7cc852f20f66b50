"""test/gpu/workloads/verdict_programs.py: the programs of the verdict suite.

test/gpu/60-verdict-suite.sh sets ktrace check's verdict against ground truth
on these programs (docs/verdicts.md).  Each program is a function that runs a
small workload (a second or so on an H100) from inputs made from a fixed seed,
the same in every run, and returns its outputs (tensors, arrays or bytes).

    verdict_programs.py NAME              run NAME once; prints OUTPUT<TAB>name<TAB>sha256
    verdict_programs.py --list            one line per program, tab-separated:
        name expected kind group truth-mode culprit flags timeout-s available description
    verdict_programs.py --truth NAME...   ground truth in this one process: each
        program 3 times, fresh inputs from the same seed each time; prints
        TRUTH<TAB>name<TAB>deterministic|nondeterministic|error|unavailable<TAB>how<TAB>detail
    verdict_programs.py --truth-procs NAME...  each program once; prints
        HASH<TAB>name<TAB>sha256 (or ERROR / UNAVAILABLE and why).  The suite runs
        this 3 times and compares (verdict_report.py truth-merge): for programs
        whose outputs may depend on the process (XLA autotunes per process)
    verdict_programs.py --debugmode NAME...  PyTorch DebugMode's verdict: each
        program twice in this process under DebugMode with tensor hashes; prints
        DEBUGMODE<TAB>name<TAB>diverged|identical|error|unavailable<TAB>first op<TAB>detail

expected: "nondet" (the culprit is a regex that the kernel ktrace names must
match, searched in the demangled and the mangled name) or "det".  flags:
"probabilistic" (the nondeterminism may not show in a given run),
"expected-miss" (ktrace cannot see the culprit; the description says why;
no program has it now), "race" (the right verdict is `race`: the culprit names
the launch that reads what another stream writes unordered), "debugmode" (PyTorch eager: DebugMode can judge it;
then the culprit op regex follows as "dm=REGEX").  Programs of one group share environment
variables (XLA_FLAGS) and can share a process.

Exit status (single run): 0, 3 the program failed, 4 a framework is missing,
2 bad usage.
"""
from __future__ import annotations

import contextlib
import gc
import hashlib
import importlib
import importlib.util
import os
import runpy
import sys
import time
import traceback

# cuBLAS reads it when its handle is made: deterministic workspaces (the
# cuBLAS documentation's condition for reproducible results with streams)
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

SEED = 1234
HERE = os.path.dirname(os.path.abspath(__file__))
JAX_ENV = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}  # parallel jobs share the GPU
# Command buffers off: an extra setting beside the default one, not a need.
JAX_NO_GRAPHS = dict(JAX_ENV, XLA_FLAGS="--xla_gpu_enable_command_buffer=")

tl = None  # triton.language, set by _triton(); the Triton kernels below name it


class Unavailable(Exception):
    """A framework the program needs is not installed (or has no GPU)."""


class Program:
    def __init__(self, name, fn, expected, culprit, kind, group, truth, flags, dm, timeout, env, needs, doc):
        self.name, self.fn, self.expected, self.culprit = name, fn, expected, culprit
        self.kind, self.group, self.truth, self.flags = kind, group, truth, flags
        self.dm, self.timeout, self.env, self.needs, self.doc = dm, timeout, env, needs, doc


REGISTRY = {}


def program(name, expected, culprit="", kind="eager", group="main", truth="inproc", flags=(), dm="",
            timeout=60, env=None, needs=("torch",), doc=""):
    """Register the decorated function as program NAME (see the module doc)."""
    def deco(fn):
        assert name not in REGISTRY, name
        assert expected in ("det", "nondet") and (expected == "det") == (not culprit), name
        REGISTRY[name] = Program(name, fn, expected, culprit, kind, group, truth, tuple(flags), dm, timeout,
                                 env or {}, needs, " ".join(doc.split()))
        return fn
    return deco


def need(module):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise Unavailable(f"{module} not importable: {e}") from e


# ---- PyTorch helpers -------------------------------------------------------------------------------

def _torch():
    torch = need("torch")
    if not torch.cuda.is_available():
        raise Unavailable("PyTorch sees no CUDA device")
    return torch


def _F():
    return _torch().nn.functional


def _gen():
    """A CUDA generator from the fixed seed: the same inputs in every run."""
    return _torch().Generator(device="cuda").manual_seed(SEED)


def _randn(shape, g, **kw):
    return _torch().randn(shape, device="cuda", generator=g, **kw)


def _randint(lo, hi, shape, g):
    return _torch().randint(lo, hi, shape, device="cuda", generator=g)


@contextlib.contextmanager
def torch_mode(det=False, cudnn_det=False, benchmark=False):
    """Deterministic algorithms on or off for the program, restored after it."""
    torch = _torch()
    bk = torch.backends
    old = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
           bk.cudnn.deterministic, bk.cudnn.benchmark, bk.cuda.matmul.allow_tf32, bk.cudnn.allow_tf32)
    torch.use_deterministic_algorithms(det)
    bk.cudnn.deterministic, bk.cudnn.benchmark = cudnn_det, benchmark
    bk.cuda.matmul.allow_tf32 = bk.cudnn.allow_tf32 = False
    try:
        yield torch
    finally:
        torch.use_deterministic_algorithms(old[0], warn_only=old[1])
        bk.cudnn.deterministic, bk.cudnn.benchmark, bk.cuda.matmul.allow_tf32, bk.cudnn.allow_tf32 = old[2:]


def _backward(op, shape, det=False):
    """The gradient of op at a random input, for a random output gradient."""
    with torch_mode(det=det):
        g = _gen()
        x = _randn(shape, g).requires_grad_()
        out = op(x)
        out.backward(_randn(tuple(out.shape), g))
        return [x.grad]


def _accumulate(method, n=1 << 20, slots=16, det=False, dtype="float32", **kw):
    """out = zeros(slots).<method>(...) with n values landing on few slots."""
    with torch_mode(det=det) as torch:
        g = _gen()
        idx = _randint(0, slots, (n,), g)
        if dtype == "int64":
            src = _randint(-1000, 1000, (n,), g)
        else:
            src = _randn((n,), g)
        out = torch.zeros(slots, device="cuda", dtype=src.dtype)
        if method == "index_add_":
            out.index_add_(0, idx, src)
        elif method == "index_put_":
            out.index_put_((idx,), src, accumulate=True)
        elif method == "put_":
            out.put_(idx, src, accumulate=True)
        elif method == "scatter_add_":
            out.scatter_add_(0, idx, src)
        else:
            out.scatter_reduce_(0, idx, src, include_self=True, **kw)
        return [out]


# ---- PyTorch ops that torch.use_deterministic_algorithms documents as non-deterministic on CUDA ----

@program("torch_index_add", "nondet", r"indexFunc|index_add", dm=r"index_add", flags=("debugmode",),
         doc="index_add_ of 65536 rows into 8 (8192 float atomics per element): indexFuncLargeIndex")
def p_index_add():
    with torch_mode() as torch:
        g = _gen()
        src, idx = _randn((1 << 16, 64), g), _randint(0, 8, (1 << 16,), g)
        return [torch.zeros(8, 64, device="cuda").index_add_(0, idx, src)]


@program("torch_scatter_add", "nondet", r"scatter_gather|scatter", dm=r"scatter_add", flags=("debugmode",),
         doc="scatter_add_ of 2^20 values into 16 slots: _scatter_gather_elementwise_kernel, float atomics")
def p_scatter_add():
    return _accumulate("scatter_add_")


@program("torch_scatter_reduce_sum", "nondet", r"scatter_gather|scatter", dm=r"scatter_reduce",
         flags=("debugmode",), doc="scatter_reduce_(reduce='sum') of 2^20 values into 16 slots")
def p_scatter_reduce_sum():
    return _accumulate("scatter_reduce_", reduce="sum")


@program("torch_put_accumulate", "nondet", r"put_kernel|take_put", dm=r"put", flags=("debugmode",),
         doc="put_(accumulate=True) of 2^20 values into 16 slots: cuda_take_put_kernel's put_kernel lambda")
def p_put_accumulate():
    return _accumulate("put_")


@program("torch_bincount_weights", "nondet", r"kernelHistogram|[Hh]istogram", dm=r"bincount",
         flags=("debugmode",), doc="bincount with float weights, 2^20 values into 16 bins: kernelHistogram1D")
def p_bincount_weights():
    with torch_mode() as torch:
        g = _gen()
        idx, w = _randint(0, 16, (1 << 20,), g), _randn((1 << 20,), g)
        return [torch.bincount(idx, weights=w, minlength=16)]


@program("torch_embedding_bag_max_bwd", "nondet", r"EmbeddingBag_accGradParametersKernel_max|[Ee]mbedding[Bb]ag.*max",
         dm=r"embedding_bag", flags=("debugmode",),
         doc="embedding_bag(mode='max') backward, 16384 bags over 4 rows: each row is the max of thousands of "
             "bags, their gradients added with atomics")
def p_embedding_bag_max_bwd():
    with torch_mode():
        F = _F()
        g = _gen()
        weight = _randn((4, 64), g).requires_grad_()
        idx = _randint(0, 4, (16384, 8), g)
        out = F.embedding_bag(idx, weight, mode="max")
        out.backward(_randn(tuple(out.shape), g))
        return [weight.grad]


@program("torch_nll_loss2d", "nondet", r"nll_loss2d_forward", dm=r"nll_loss2d", flags=("debugmode", "probabilistic"),
         doc="nll_loss on (32, 8, 512, 512): nll_loss2d_forward_kernel adds its block sums into one float with "
             "atomics (two runs can still add them in the same order: probabilistic)")
def p_nll_loss2d():
    with torch_mode():
        F = _F()
        g = _gen()
        logp, target = _randn((32, 8, 512, 512), g), _randint(0, 8, (32, 512, 512), g)
        return [F.nll_loss(logp, target)]


@program("torch_ctc_loss_bwd", "nondet", r"ctc_loss", dm=r"ctc_loss", flags=("debugmode", "probabilistic"),
         doc="ctc_loss backward, 3 labels repeated along 40-long targets (T=256, so the 'large' path of "
             "LossCTC.cu, whose non-blank gradient is collected with atomics in the releases that have it)")
def p_ctc_loss_bwd():
    with torch_mode() as torch:
        F = _F()
        g = _gen()
        T, N, C, S = 256, 32, 4, 40
        logits = _randn((T, N, C), g).requires_grad_()
        targets = _randint(1, C, (N, S), g)
        lengths_in = torch.full((N,), T, dtype=torch.long, device="cuda")
        lengths_tg = torch.full((N,), S, dtype=torch.long, device="cuda")
        loss = F.ctc_loss(logits.log_softmax(2), targets, lengths_in, lengths_tg, reduction="sum")
        loss.backward()
        return [logits.grad, loss]


@program("torch_upsample_bilinear_bwd", "nondet", r"upsample_bilinear2d_backward", dm=r"upsample_bilinear2d_backward",
         flags=("debugmode",), doc="interpolate(bilinear, x4) backward: 64 outputs add into each input pixel")
def p_upsample_bilinear_bwd():
    F = _F()
    return _backward(lambda x: F.interpolate(x, scale_factor=4, mode="bilinear", align_corners=False),
                     (8, 16, 64, 64))


@program("torch_upsample_bicubic_bwd", "nondet", r"upsample_bicubic2d_backward", dm=r"upsample_bicubic2d_backward",
         flags=("debugmode",), doc="interpolate(bicubic, x4) backward: 256 outputs add into each input pixel")
def p_upsample_bicubic_bwd():
    F = _F()
    return _backward(lambda x: F.interpolate(x, scale_factor=4, mode="bicubic", align_corners=False),
                     (8, 16, 32, 32))


@program("torch_upsample_linear_bwd", "nondet", r"upsample_linear1d.*backward", dm=r"upsample_linear1d_backward",
         flags=("debugmode",), doc="interpolate(linear, x32) backward on (16, 32, 256): 64 outputs per input")
def p_upsample_linear_bwd():
    F = _F()
    return _backward(lambda x: F.interpolate(x, scale_factor=32, mode="linear", align_corners=False),
                     (16, 32, 256))


@program("torch_upsample_trilinear_bwd", "nondet", r"upsample_trilinear3d_backward",
         dm=r"upsample_trilinear3d_backward", flags=("debugmode",),
         doc="interpolate(trilinear, x4) backward on (2, 8, 16, 16, 16): 512 outputs per input")
def p_upsample_trilinear_bwd():
    F = _F()
    return _backward(lambda x: F.interpolate(x, scale_factor=4, mode="trilinear", align_corners=False),
                     (2, 8, 16, 16, 16))


@program("torch_adaptive_avg_pool2d_bwd", "nondet", r"adaptive_?average_?gradinput",
         dm=r"adaptive_avg_pool2d_backward", flags=("debugmode",),
         doc="adaptive_avg_pool2d 8x8 -> 63x63 backward: windows overlap, ~80 atomic adds per input "
             "(atomic_adaptive_average_gradinput)")
def p_adaptive_avg_pool2d_bwd():
    F = _F()
    return _backward(lambda x: F.adaptive_avg_pool2d(x, (63, 63)), (32, 64, 8, 8))


@program("torch_adaptive_max_pool2d_bwd", "nondet", r"adaptivemaxgradinput", dm=r"adaptive_max_pool2d_backward",
         flags=("debugmode",), doc="adaptive_max_pool2d 8x8 -> 63x63 backward: each max picked by many windows")
def p_adaptive_max_pool2d_bwd():
    F = _F()
    return _backward(lambda x: F.adaptive_max_pool2d(x, (63, 63)), (32, 64, 8, 8))


@program("torch_avg_pool3d_bwd", "nondet", r"avg_pool3d.*(grad|backward)", dm=r"avg_pool3d_backward",
         flags=("debugmode",), doc="avg_pool3d(kernel 5, stride 2) backward: overlapping windows, up to 27 "
                                    "atomic adds per input (avg_pool3d_cuda_update_grad_input_atomic)")
def p_avg_pool3d_bwd():
    F = _F()
    return _backward(lambda x: F.avg_pool3d(x, kernel_size=5, stride=2), (4, 16, 32, 32, 32))


@program("torch_max_pool3d_bwd", "nondet", r"max_pool3d_with_indices_backward", dm=r"max_pool3d_with_indices_backward",
         flags=("debugmode", "probabilistic"),
         doc="max_pool3d(kernel 3, stride 1) backward: a local maximum gets the gradients of up to 27 windows")
def p_max_pool3d_bwd():
    F = _F()
    return _backward(lambda x: F.max_pool3d(x, kernel_size=3, stride=1, padding=1), (4, 16, 24, 24, 24))


@program("torch_grid_sample_bwd", "nondet", r"grid_sampler_2d_backward", dm=r"grid_sampler_2d_backward",
         flags=("debugmode",), doc="grid_sample backward, 65536 samples per 16x16 image: ~256 adds per pixel")
def p_grid_sample_bwd():
    with torch_mode():
        F = _F()
        g = _gen()
        img = _randn((4, 8, 16, 16), g).requires_grad_()
        grid = _randn((4, 256, 256, 2), g).tanh()
        out = F.grid_sample(img, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
        out.backward(_randn(tuple(out.shape), g))
        return [img.grad]


@program("torch_replication_pad2d_bwd", "nondet", r"replication_pad.*backward", dm=r"replication_pad2d_backward",
         flags=("debugmode",), doc="pad(replicate, 32) of 4x4 images backward: a corner gets 1089 adds")
def p_replication_pad2d_bwd():
    F = _F()
    return _backward(lambda x: F.pad(x, (32, 32, 32, 32), mode="replicate"), (16, 16, 4, 4))


@program("torch_cumsum", "nondet", r"[Ss]can", dm=r"cumsum", flags=("debugmode", "probabilistic"),
         doc="cumsum of 2^24 floats: CUB's decoupled look-back scan adds tile prefixes in an order that "
             "depends on timing")
def p_cumsum():
    with torch_mode() as torch:
        g = _gen()
        return [torch.cumsum(_randn((1 << 24,), g), 0)]


# ---- the same kind of op, deterministic ------------------------------------------------------------

@program("torch_index_add_detmode", "det", dm=r"index_add", flags=("debugmode",),
         doc="torch_index_add under torch.use_deterministic_algorithms(True) (sorted index_put_)")
def p_index_add_detmode():
    with torch_mode(det=True) as torch:
        g = _gen()
        src, idx = _randn((1 << 16, 64), g), _randint(0, 8, (1 << 16,), g)
        return [torch.zeros(8, 64, device="cuda").index_add_(0, idx, src)]


@program("torch_scatter_add_detmode", "det", flags=("debugmode",),
         doc="torch_scatter_add under use_deterministic_algorithms(True)")
def p_scatter_add_detmode():
    return _accumulate("scatter_add_", det=True)


@program("torch_scatter_reduce_sum_detmode", "det", flags=("debugmode",),
         doc="torch_scatter_reduce_sum under use_deterministic_algorithms(True)")
def p_scatter_reduce_sum_detmode():
    return _accumulate("scatter_reduce_", det=True, reduce="sum")


@program("torch_replication_pad2d_bwd_detmode", "det", flags=("debugmode",),
         doc="torch_replication_pad2d_bwd under use_deterministic_algorithms(True)")
def p_replication_pad2d_bwd_detmode():
    F = _F()
    return _backward(lambda x: F.pad(x, (32, 32, 32, 32), mode="replicate"), (16, 16, 4, 4), det=True)


@program("torch_index_put_accumulate", "det", flags=("debugmode",),
         doc="index_put_(accumulate=True) of 2^20 values into 16 slots: on CUDA it sorts the indices and adds "
             "each slot's values in order (documented non-deterministic on the CPU only)")
def p_index_put_accumulate():
    return _accumulate("index_put_")


@program("torch_index_add_int64", "det", flags=("debugmode",),
         doc="index_add_ of int64 values into 16 slots: integer atomics, exact in any order")
def p_index_add_int64():
    return _accumulate("index_add_", dtype="int64")


@program("torch_scatter_amax", "det", flags=("debugmode",),
         doc="scatter_reduce_(reduce='amax') into 16 slots: atomic max is exact in any order")
def p_scatter_amax():
    return _accumulate("scatter_reduce_", reduce="amax")


@program("torch_histc", "det", flags=("debugmode",),
         doc="histc of 2^22 floats into 100 bins: documented as non-deterministic (float atomics), but it "
             "adds 1.0 per value, exact in any order below 2^24")
def p_histc():
    with torch_mode() as torch:
        return [torch.histc(_randn((1 << 22,), _gen()), bins=100, min=-4, max=4)]


@program("torch_embedding_bag_sum_bwd", "det", flags=("debugmode",),
         doc="embedding_bag(mode='sum') backward over 4 rows: sorted segment sums, no atomics")
def p_embedding_bag_sum_bwd():
    with torch_mode():
        F = _F()
        g = _gen()
        weight = _randn((4, 64), g).requires_grad_()
        idx = _randint(0, 4, (16384, 8), g)
        out = F.embedding_bag(idx, weight, mode="sum")
        out.backward(_randn(tuple(out.shape), g))
        return [weight.grad]


@program("torch_upsample_nearest_bwd", "det", flags=("debugmode",),
         doc="interpolate(nearest, x4) backward: each input sums its own 16 outputs (a gather, no atomics)")
def p_upsample_nearest_bwd():
    F = _F()
    return _backward(lambda x: F.interpolate(x, scale_factor=4, mode="nearest"), (8, 16, 64, 64))


@program("torch_adaptive_avg_pool2d_bwd_tiled", "det", flags=("debugmode",),
         doc="adaptive_avg_pool2d 64x64 -> 8x8 backward: the atomic kernel, but windows tile the input, so "
             "each input gets one add")
def p_adaptive_avg_pool2d_bwd_tiled():
    F = _F()
    return _backward(lambda x: F.adaptive_avg_pool2d(x, (8, 8)), (32, 64, 64, 64))


# ---- allocator reuse, libraries, streams -----------------------------------------------------------

@program("torch_alloc_reuse", "nondet", r"indexFunc|index_add", dm=r"index_add", flags=("debugmode",),
         doc="free a 64 MiB tensor, allocate 32 1-MiB ones in its place, free every other one, allocate a "
             "16 MiB tensor over their old starts, index_add_ into its tail (non-deterministic), then sum it: "
             "the culprit is the index_add, not the reduction that reads it")
def p_alloc_reuse():
    with torch_mode() as torch:
        g = _gen()
        big = torch.ones(16 << 20, device="cuda")
        del big
        smalls = [torch.full((1 << 18,), float(i), device="cuda") for i in range(32)]
        del smalls[::2]
        big2 = torch.zeros(4 << 20, device="cuda")
        src, idx = _randn((1 << 16, 64), g), _randint(0, 8, (1 << 16,), g)
        big2[-8 * 64:].view(8, 64).index_add_(0, idx, src)
        total = big2.sum()
        del smalls
        return [big2, total]


@program("torch_hash_cut", "nondet", r"indexFunc|index_add", timeout=90,
         doc="a 1 GiB tensor, index_add_ (non-deterministic float atomics) into 16 rows past its first "
             "256 MiB, then a sum that reads all of it: the culprit is the index_add, never the reduction "
             "(with the old KTRACE_HASH_MAX=256M the index_add's writes lie past the cut; "
             "test/gpu/62-hash-cut.sh checks that the verdict then names the cut)")
def p_hash_cut():
    with torch_mode() as torch:
        g = _gen()
        big = torch.zeros((1 << 18, 1024), device="cuda")  # 2^28 floats: 1 GiB, rows of 4 KiB
        src, idx = _randn((1 << 14, 1024), g), _randint((1 << 16) + 64, (1 << 16) + 80, (1 << 14,), g)
        big.index_add_(0, idx, src)  # rows 65600..65615: bytes from 256 MiB + 256 KiB on
        total = big.sum()
        rows = big[(1 << 16) + 64:(1 << 16) + 80].clone()
        del big
        return [rows, total]


def _conv_net(torch, upsample):
    g = _gen()
    w1, w2 = _randn((16, 8, 31, 31), g) * 0.01, _randn((8, 16, 5, 5), g) * 0.05
    w1.requires_grad_()
    w2.requires_grad_()
    x = _randn((4, 8, 96, 96), g).requires_grad_()
    F = torch.nn.functional
    y = F.conv2d(F.relu(F.conv2d(x, w1, padding=15)), w2, padding=2)
    if upsample:
        y = F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)
    (y * y).mean().backward()
    return [y, x.grad, w1.grad, w2.grad]


@program("cudnn_conv", "det", kind="cudnn", flags=("debugmode",),
         doc="conv net (31x31 and 5x5 kernels on 96x96, the sizes where cuDNN picks FFT and multi-stream "
             "algorithms) forward and backward with cudnn.deterministic=True, benchmark=False")
def p_cudnn_conv():
    with torch_mode(cudnn_det=True) as torch:
        return _conv_net(torch, upsample=False)


@program("cudnn_conv_upsample", "nondet", r"upsample_bilinear2d_backward", kind="cudnn",
         dm=r"upsample_bilinear2d_backward", flags=("debugmode",),
         doc="cudnn_conv plus a bilinear upsample: its backward (atomics) is the culprit; the convolutions' "
             "backward then sees differing inputs")
def p_cudnn_conv_upsample():
    with torch_mode(cudnn_det=True) as torch:
        return _conv_net(torch, upsample=True)


@program("cublas_matmuls", "det", kind="cublas", flags=("debugmode",),
         doc="matmuls of several shapes (split-K 64x8192x64, odd 1000x300x700, bmm, mv, fp16, addmm) with "
             "CUBLAS_WORKSPACE_CONFIG=:4096:8, TF32 off")
def p_cublas_matmuls():
    with torch_mode() as torch:
        g = _gen()
        outs = [_randn((64, 8192), g) @ _randn((8192, 64), g),
                _randn((1000, 300), g) @ _randn((300, 700), g),
                torch.bmm(_randn((16, 128, 64), g), _randn((16, 64, 128), g)),
                torch.mv(_randn((4096, 4096), g), _randn((4096,), g)),
                _randn((1024, 1024), g).half() @ _randn((1024, 1024), g).half(),
                torch.addmm(_randn((512,), g), _randn((256, 512), g), _randn((512, 512), g))]
        return outs


@program("torch_side_streams", "det", kind="streams", flags=("debugmode",),
         doc="two side streams doing dependent work ordered by events (matmul+tanh on one, scale and column "
             "sums on the other), joined back on the default stream")
def p_side_streams():
    with torch_mode() as torch:
        g = _gen()
        x, w = _randn((2048, 1024), g), _randn((1024, 1024), g)
        s1, s2, cur = torch.cuda.Stream(), torch.cuda.Stream(), torch.cuda.current_stream()
        ready = cur.record_event()
        with torch.cuda.stream(s1):
            s1.wait_event(ready)
            a = torch.tanh(x @ w)
            done_a = s1.record_event()
        with torch.cuda.stream(s2):
            s2.wait_event(done_a)
            c = (a * 2 + 1).sum(0)
            done_c = s2.record_event()
        cur.wait_event(done_c)
        a.record_stream(cur)
        c.record_stream(cur)
        return [a, c * 3]


@program("torch_mlp_adamw", "det", kind="train", flags=("debugmode",),
         doc="a tiny MLP (128-256-10), MSE loss, AdamW, 3 steps, deterministic algorithms on")
def p_mlp_adamw():
    with torch_mode(det=True) as torch:
        torch.manual_seed(SEED)
        model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        g = _gen()
        x, y = _randn((512, 128), g), _randn((512, 10), g)
        for _ in range(3):
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        return list(model.parameters())


@program("torch_ref_step", "det", kind="train", flags=("debugmode",), timeout=90,
         doc="the reference training step (test/gpu/workloads/ref_step.py: 4 transformer blocks, AdamW), "
             "1 warm-up step and 1 step")
def p_ref_step():
    path = os.path.join(HERE, "ref_step.py")
    if not os.path.exists(path):
        raise Unavailable(f"{path} missing")
    with torch_mode():
        argv, sys.argv = sys.argv, [path, "--steps", "1", "--warmup", "1"]
        try:
            glob = runpy.run_path(path, run_name="__main__")
        finally:
            sys.argv = argv
        return list(glob["model"].parameters())


# ---- Triton kernels --------------------------------------------------------------------------------
# Plain functions here, made Triton kernels by _triton() (so that programs
# that do not use Triton do not import it); `tl` is set there before any
# kernel compiles.

def kt_atomic_accum_kernel(x_ptr, out_ptr, n, SLOTS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.atomic_add(out_ptr + offs % SLOTS, x, mask=mask)


def kt_lock_accum_kernel(x_ptr, acc_ptr, lock_ptr, n, SLOTS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    part = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    slot = pid % SLOTS
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    cur = tl.load(acc_ptr + slot, volatile=True)
    tl.store(acc_ptr + slot, cur + part)
    tl.debug_barrier()
    tl.atomic_xchg(lock_ptr, 0)


def kt_block_sum_kernel(x_ptr, y_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask, other=0.0) * 2.0 + 1.0
    tl.store(y_ptr + offs, y, mask=mask)
    tl.store(part_ptr + pid, tl.sum(y, axis=0))


_TRITON = {}


def _triton():
    global tl
    if not _TRITON:
        triton = need("triton")
        tl = need("triton.language")
        for fn in (kt_atomic_accum_kernel, kt_lock_accum_kernel, kt_block_sum_kernel):
            _TRITON[fn.__name__] = triton.jit(fn)
        _TRITON["cdiv"] = triton.cdiv
    return _TRITON


def _triton_input(n):
    return _randn((n,), _gen())


@program("triton_atomic_add", "nondet", r"kt_atomic_accum_kernel", kind="triton", needs=("torch", "triton"),
         dm=r"kt_atomic_accum_kernel", flags=("debugmode",),
         doc="a Triton kernel adding 2^20 floats into 4 slots with tl.atomic_add")
def p_triton_atomic_add():
    with torch_mode() as torch:
        k = _triton()
        n = 1 << 20
        x, out = _triton_input(n), torch.zeros(4, device="cuda")
        k["kt_atomic_accum_kernel"][(k["cdiv"](n, 1024),)](x, out, n, SLOTS=4, BLOCK=1024)
        return [out]


@program("triton_lock_accum", "nondet", r"kt_lock_accum_kernel", kind="triton", needs=("torch", "triton"),
         dm=r"kt_lock_accum_kernel", flags=("debugmode",),
         doc="a Triton kernel whose 1024 programs add their block sums into 4 slots under a tl.atomic_cas "
             "spin lock: the order in which they take the lock changes between runs")
def p_triton_lock_accum():
    with torch_mode() as torch:
        k = _triton()
        n = 1 << 20
        x = _triton_input(n)
        acc = torch.zeros(4, device="cuda")
        lock = torch.zeros(1, dtype=torch.int32, device="cuda")
        k["kt_lock_accum_kernel"][(k["cdiv"](n, 1024),)](x, acc, lock, n, SLOTS=4, BLOCK=1024)
        return [acc]


@program("triton_block_sum", "det", kind="triton", needs=("torch", "triton"), flags=("debugmode",),
         doc="a deterministic Triton kernel (elementwise, one partial sum per program), then torch.sum")
def p_triton_block_sum():
    with torch_mode() as torch:
        k = _triton()
        n = 1 << 20
        x = _triton_input(n)
        y = torch.empty_like(x)
        parts = torch.empty(k["cdiv"](n, 1024), device="cuda")
        k["kt_block_sum_kernel"][(parts.numel(),)](x, y, parts, n, BLOCK=1024)
        return [y, parts.sum()]


# ---- torch.compile ---------------------------------------------------------------------------------

_COMPILED = {}


def _compiled(name):
    """The compiled function, made once per process (recompiled code would hit the same cache)."""
    torch = _torch()
    if name not in _COMPILED:
        F = torch.nn.functional

        def mlp(x, w1, b1, w2, b2):
            h = F.layer_norm(F.gelu(x @ w1 + b1), (w1.shape[1],))
            return h @ w2 + b2

        def index_add(x, w, idx):
            h = torch.relu(x @ w)
            out = torch.zeros(8, h.shape[1], device=x.device, dtype=h.dtype).index_add_(0, idx, h)
            return out * 2.0

        _COMPILED["mlp"], _COMPILED["index_add"] = torch.compile(mlp), torch.compile(index_add)
    return _COMPILED[name]


@program("compile_mlp", "det", kind="compile", timeout=90,
         doc="torch.compile of a small MLP with layer norm (Inductor's Triton kernels), forward")
def p_compile_mlp():
    with torch_mode() as torch:
        g = _gen()
        args = (_randn((4096, 256), g), _randn((256, 512), g) * 0.05, _randn((512,), g),
                _randn((512, 128), g) * 0.05, _randn((128,), g))
        with torch.no_grad():
            return [_compiled("mlp")(*args)]


@program("compile_index_add", "nondet", r"index_add|index_put|scatter|indexFunc", kind="compile", timeout=90,
         doc="torch.compile of relu(x @ w).index_add_ into 8 rows (65536 rows: Inductor's scatter kernel "
             "with tl.atomic_add)")
def p_compile_index_add():
    with torch_mode() as torch:
        g = _gen()
        x, w, idx = _randn((1 << 16, 64), g), _randn((64, 64), g) * 0.1, _randint(0, 8, (1 << 16,), g)
        with torch.no_grad():
            return [_compiled("index_add")(x, w, idx)]


# ---- JAX -------------------------------------------------------------------------------------------

_JAX = {}


def _jax():
    jax = need("jax")
    try:
        if not any(d.platform == "gpu" for d in jax.devices()):
            raise Unavailable("JAX sees no GPU")
    except RuntimeError as e:
        raise Unavailable(f"JAX has no GPU backend: {e}") from e
    return jax


def _jax_fn(name):
    jax = _jax()
    jnp = jax.numpy
    if name not in _JAX:
        def scatter(x, idx):
            y = jnp.tanh(x) * 1.5 + 0.25
            s = jnp.zeros((16,), jnp.float32).at[idx].add(y)
            return s, jnp.max(y), jnp.sum(y * y), jnp.sort(y[:4096])[:8]

        def loss(p, x, y):
            h = jax.nn.relu(x @ p[0] + p[1])
            return jnp.mean((h @ p[2] + p[3] - y) ** 2)

        def step(p, x, y):
            grads = jax.grad(loss)(p, x, y)
            return [a - 0.01 * b for a, b in zip(p, grads)]

        _JAX["scatter"], _JAX["mlp"] = jax.jit(scatter), jax.jit(step)
    return _JAX[name]


def _jax_scatter():
    jax = _jax()
    np = need("numpy")
    k1, k2 = jax.random.split(jax.random.PRNGKey(SEED))
    x = jax.random.normal(k1, (1 << 20,), dtype=jax.numpy.float32)
    idx = jax.random.randint(k2, (1 << 20,), 0, 16)
    return [np.asarray(a) for a in _jax_fn("scatter")(x, idx)]


@program("jax_scatter_add", "nondet", r"scatter", kind="jax", group="jax-default", truth="procs",
         needs=("jax",), env=JAX_ENV, timeout=90,
         doc="a jitted step with .at[idx].add of 2^20 values into 16 slots (XLA's atomic scatter) plus "
             "reductions and a sort, default XLA flags: XLA runs the step as command buffers (CUDA graphs), "
             "so the scatter is a kernel node of a graph launch")
def p_jax_scatter_add():
    return _jax_scatter()


@program("jax_scatter_add_nographs", "nondet", r"scatter", kind="jax", group="jax-nographs", truth="procs",
         needs=("jax",), env=JAX_NO_GRAPHS, timeout=90,
         doc="jax_scatter_add with XLA_FLAGS=--xla_gpu_enable_command_buffer= (command buffers off): the same "
             "kernels as ordinary launches, the setting to compare with jax_scatter_add")
def p_jax_scatter_add_nographs():
    return _jax_scatter()


@program("jax_mlp_step", "det", kind="jax", group="jax-default", truth="procs", needs=("jax",), env=JAX_ENV,
         flags=("probabilistic",), timeout=90,
         doc="a jitted MLP training step (256-512-64, MSE, SGD), 3 steps, default XLA flags "
             "(XLA autotunes its GEMMs in each process: run-to-run truth is measured across "
             "processes; which GEMM algorithm wins the autotuning is chance, so two processes may "
             "or may not differ: probabilistic)")
def p_jax_mlp_step():
    jax = _jax()
    np = need("numpy")
    jnp = jax.numpy
    ks = jax.random.split(jax.random.PRNGKey(SEED), 6)
    p = [jax.random.normal(ks[0], (256, 512)) * 0.05, jnp.zeros((512,)),
         jax.random.normal(ks[1], (512, 64)) * 0.05, jnp.zeros((64,))]
    x, y = jax.random.normal(ks[2], (1024, 256)), jax.random.normal(ks[3], (1024, 64))
    for _ in range(3):
        p = _jax_fn("mlp")(p, x, y)
    return [np.asarray(a) for a in p]


def _jax_loop_fn(name):
    """Jitted loops.  With default XLA flags (JAX 0.11.2) XLA runs them from the host (a command buffer
    updated and launched again per iteration); with XLA_FLAGS=--xla_gpu_enable_command_buffer=+WHILE,+CONDITIONAL
    as a WHILE conditional node of a command buffer (test/gpu/70-graphs-4-jax-while.sh)."""
    jax = _jax()
    jnp, lax = jax.numpy, jax.lax
    if name not in _JAX:
        def fori(x, idx, n):  # n is traced: a while loop whose trip count XLA cannot unroll
            def body(i, s):
                return s.at[idx].add(jnp.tanh(x + i.astype(jnp.float32) * 0.01))
            return lax.fori_loop(0, n, body, jnp.zeros((16,), jnp.float32))

        def scan(x, idx, ks):
            def step(c, k):
                y = jnp.sin(x * k)
                return c + jnp.zeros((16,), jnp.float32).at[idx].add(y), jnp.max(y)
            return lax.scan(step, jnp.zeros((16,), jnp.float32), ks)

        def fori_det(x, idx, n):
            def body(i, s):
                return s * 0.5 + jnp.tanh(x + i.astype(jnp.float32) * 0.01)
            return jnp.sum(lax.fori_loop(0, n, body, jnp.zeros_like(x)).reshape(-1, 1024), axis=1)

        _JAX["fori"], _JAX["scan"], _JAX["fori_det"] = jax.jit(fori), jax.jit(scan), jax.jit(fori_det)
    return _JAX[name]


def _jax_loop(name):
    jax = _jax()
    np = need("numpy")
    jnp = jax.numpy
    k1, k2 = jax.random.split(jax.random.PRNGKey(SEED))
    x = jax.random.normal(k1, (1 << 20,), dtype=jnp.float32)
    idx = jax.random.randint(k2, (1 << 20,), 0, 16)
    if name == "scan":
        out = _jax_loop_fn(name)(x, idx, jnp.arange(1, 9, dtype=jnp.float32))
    else:
        out = _jax_loop_fn(name)(x, idx, jnp.int32(8))
    return [np.asarray(a) for a in jax.tree_util.tree_leaves(out)]


@program("jax_fori_scatter_add", "nondet", r"scatter", kind="jax", group="jax-default", truth="procs",
         needs=("jax",), env=JAX_ENV, timeout=90,
         doc="lax.fori_loop (8 iterations, the bound traced) whose body scatter-adds 2^20 values into 16 "
             "slots (XLA's atomic scatter), default XLA flags: XLA runs the loop from the host, one command "
             "buffer updated and launched again per iteration (no conditional node; with WHILE commands "
             "enabled it is a WHILE node: test/gpu/70-graphs-4-jax-while.sh)")
def p_jax_fori_scatter_add():
    return _jax_loop("fori")


@program("jax_scan_scatter_add", "nondet", r"scatter", kind="jax", group="jax-default", truth="procs",
         needs=("jax",), env=JAX_ENV, timeout=90,
         doc="lax.scan over 8 steps, each scatter-adding 2^20 values into 16 slots, default XLA flags "
             "(the loop run from the host, its command buffer updated per iteration)")
def p_jax_scan_scatter_add():
    return _jax_loop("scan")


@program("jax_fori_det", "det", kind="jax", group="jax-default", truth="procs", needs=("jax",), env=JAX_ENV,
         timeout=90,
         doc="lax.fori_loop (8 iterations, the bound traced) of elementwise updates, then row sums: the "
             "deterministic variant of jax_fori_scatter_add")
def p_jax_fori_det():
    return _jax_loop("fori_det")


# ---- CuPy ------------------------------------------------------------------------------------------

CUPY_ATOMIC_SRC = r"""
extern "C" __global__ void kt_cupy_atomic_sum(const float *x, float *out, int n, int slots)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		atomicAdd(&out[i % slots], x[i]);
}
"""


def _cupy_input(n):
    cp, np = need("cupy"), need("numpy")
    try:
        cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - CuPy raises its own CUDA error types
        raise Unavailable(f"CuPy sees no CUDA device: {e}") from e
    return cp, cp.asarray(np.random.default_rng(SEED).standard_normal(n, dtype=np.float32))


@program("cupy_atomic_add", "nondet", r"kt_cupy_atomic_sum", kind="cupy", needs=("cupy",),
         doc="a CuPy RawKernel adding 2^20 floats into 16 slots with atomicAdd")
def p_cupy_atomic_add():
    n = 1 << 20
    cp, x = _cupy_input(n)
    out = cp.zeros(16, dtype=cp.float32)
    cp.RawKernel(CUPY_ATOMIC_SRC, "kt_cupy_atomic_sum")(((n + 255) // 256,), (256,),
                                                        (x, out, cp.int32(n), cp.int32(16)))
    return [out]


@program("cupy_elementwise", "det", kind="cupy", needs=("cupy",),
         doc="a CuPy ElementwiseKernel (y = a * x + b) and a sum")
def p_cupy_elementwise():
    cp, x = _cupy_input(1 << 20)
    axpb = cp.ElementwiseKernel("float32 x, float32 a, float32 b", "float32 y", "y = a * x + b", "kt_cupy_axpb")
    y = axpb(x, cp.float32(2.0), cp.float32(1.0))
    return [y, y.sum()]


# A side stream writes a buffer while another stream reads it, nothing ordering them (no event):
# the writer's blocks write later the higher their index, the reader's read later the lower theirs,
# so where the two sweeps cross (which elements the reader saw written) moves with each run's
# timing.  Both streams are non-blocking (the legacy stream orders neither), and the arrays are
# allocations of their own (no memory pool), so that their extents are exact.
CUPY_RACE_SRC = r"""
extern "C" __global__ void kt_race_writer(float *buf, int n, long long spin)
{
	long long t0 = clock64();
	while (clock64() - t0 < (long long)blockIdx.x * spin)
		;
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		buf[i] = 1.0f + (float)i;
}

extern "C" __global__ void kt_race_reader(const float *buf, float *out, int n, long long spin)
{
	long long t0 = clock64();
	while (clock64() - t0 < (long long)(gridDim.x - 1 - blockIdx.x) * spin)
		;
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = buf[i] * 2.0f;
}
"""


def _cupy_race(with_event):
    cp = need("cupy")
    try:
        cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - CuPy raises its own CUDA error types
        raise Unavailable(f"CuPy sees no CUDA device: {e}") from e
    blocks, threads = 64, 256
    n = blocks * threads
    cp.cuda.set_allocator(None)  # cudaMalloc per array: exact extents
    try:
        mod = cp.RawModule(code=CUPY_RACE_SRC)
        writer, reader = mod.get_function("kt_race_writer"), mod.get_function("kt_race_reader")
        buf, out = cp.zeros(n, dtype=cp.float32), cp.zeros(n, dtype=cp.float32)
        cp.cuda.Device().synchronize()
        s1, s2 = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
        spin = cp.int64(2000)  # about 1 us per block: the sweeps take some 60 us
        writer((blocks,), (threads,), (buf, cp.int32(n), spin), stream=s1)
        if with_event:
            done = cp.cuda.Event()
            done.record(s1)
            s2.wait_event(done)
        reader((blocks,), (threads,), (buf, out, cp.int32(n), spin), stream=s2)
        cp.cuda.Device().synchronize()
        return [out.get()]
    finally:
        cp.cuda.set_allocator(cp.get_default_memory_pool().malloc)


@program("cupy_side_stream_race", "nondet", r"kt_race_reader", kind="cupy", needs=("cupy",),
         flags=("probabilistic", "race"),
         doc="a side stream writes a buffer that another stream reads with no event between them: what "
             "the reader saw depends on timing; ktrace's verdict must be race (both launches, their "
             "streams and the missing ordering named), exit 1")
def p_cupy_side_stream_race():
    return _cupy_race(with_event=False)


@program("cupy_side_stream_event", "det", kind="cupy", needs=("cupy",),
         doc="cupy_side_stream_race with an event recorded after the write and waited for before the "
             "read: deterministic, no race")
def p_cupy_side_stream_event():
    return _cupy_race(with_event=True)


# ---- running ---------------------------------------------------------------------------------------

def to_bytes(obj):
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return bytes(obj)
    if hasattr(obj, "detach"):  # torch.Tensor
        t = obj.detach().cpu().contiguous().reshape(-1)
        return t.view(dtype=__import__("torch").uint8).numpy().tobytes()
    if hasattr(obj, "get") and type(obj).__module__.startswith("cupy"):
        return obj.get().tobytes()
    return obj.tobytes()  # numpy


def digest(outputs):
    h = hashlib.sha256()
    for o in outputs:
        h.update(to_bytes(o))
    return h.hexdigest()


def apply_env(progs):
    """Set the environment the programs need before any framework is imported.
    Returns the programs that conflict with the first ones (they cannot run here)."""
    chosen = progs[0].env if progs else {}
    conflicts = [p for p in progs if p.env != chosen]
    for k, v in chosen.items():
        if k == "XLA_FLAGS":
            v = (os.environ.get(k, "") + " " + v).strip()
        os.environ[k] = v
    return conflicts


def release():
    """Free what a program left behind (between programs of one process)."""
    gc.collect()
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()
            torch.cuda.empty_cache()


def one_line(e):
    return (f"{type(e).__name__}: {e}").replace("\n", " ").replace("\t", " ")[:300]


def available(p):
    missing = [m for m in p.needs if importlib.util.find_spec(m) is None]
    return "no: " + ",".join(missing) + " missing" if missing else "yes"


def cmd_list():
    for p in REGISTRY.values():
        flags = list(p.flags) + ([f"dm={p.dm}"] if p.dm else [])
        print("\t".join([p.name, p.expected, p.kind, p.group, p.truth, p.culprit or "-", ",".join(flags) or "-",
                         str(p.timeout), available(p), p.doc]))
    return 0


def cmd_truth(progs, reps=3):
    for p in apply_env(progs):
        print(f"TRUTH\t{p.name}\terror\tin one process\tits environment conflicts with an earlier program's",
              flush=True)
        progs = [q for q in progs if q is not p]
    for p in progs:
        t0 = time.time()
        try:
            hashes = [digest(p.fn()) for _ in range(reps)]
        except Unavailable as e:
            print(f"TRUTH\t{p.name}\tunavailable\tin one process\t{one_line(e)}", flush=True)
            continue
        except Exception as e:  # noqa: BLE001 - report any failure of a program and go on
            traceback.print_exc()
            print(f"TRUTH\t{p.name}\terror\tin one process\t{one_line(e)}", flush=True)
            continue
        finally:
            release()
        n = len(set(hashes))
        verdict = "deterministic" if n == 1 else "nondeterministic"
        print(f"TRUTH\t{p.name}\t{verdict}\t{reps} runs in one process\t{n} distinct outputs of {reps} "
              f"({time.time() - t0:.1f} s): {' '.join(h[:12] for h in hashes)}", flush=True)
    return 0


def cmd_truth_procs(progs):
    conflicts = apply_env(progs)
    for p in progs:
        if p in conflicts:
            print(f"HASH\t{p.name}\tERROR\tits environment conflicts with an earlier program's", flush=True)
            continue
        try:
            print(f"HASH\t{p.name}\t{digest(p.fn())}", flush=True)
        except Unavailable as e:
            print(f"HASH\t{p.name}\tUNAVAILABLE\t{one_line(e)}", flush=True)
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            print(f"HASH\t{p.name}\tERROR\t{one_line(e)}", flush=True)
        finally:
            release()
    return 0


def _debugmode_api():
    """DebugMode and a hashing context, or the reason they are unavailable."""
    torch = _torch()
    try:
        from torch.utils._debug_mode import DebugMode
    except ImportError as e:
        return None, None, f"no torch.utils._debug_mode.DebugMode ({one_line(e)})"
    if not hasattr(DebugMode, "log_tensor_hashes") or not hasattr(DebugMode, "check_hash_mismatches"):
        return None, None, "DebugMode has no log_tensor_hashes/check_hash_mismatches"
    try:
        DebugMode()
    except Exception as e:  # noqa: BLE001 - an API other than the one expected
        return None, None, f"DebugMode() failed: {one_line(e)}"
    kind = "hash_tensor" if hasattr(torch, "hash_tensor") else "norm"

    def hashes():
        try:
            return DebugMode.log_tensor_hashes(hash_fn=kind)
        except TypeError:  # an older signature without hash_fn
            return DebugMode.log_tensor_hashes()
    return DebugMode, hashes, kind


def debugmode_one(p, DebugMode, hashes):
    logs = []
    for _ in range(2):
        with DebugMode() as dm, hashes():
            p.fn()
        logs.append(dm.logs)
        release()
    try:
        diffs = DebugMode.check_hash_mismatches(logs[0], logs[1])
    except ValueError as e:
        return "error", "-", f"the two runs' op sequences differ: {one_line(e)}"
    if not diffs:
        return "identical", "-", f"{len(logs[0])} calls, no hash differs"
    first = diffs[0]
    ops = sorted({str(d.get("call")) for d in diffs})
    return "diverged", str(first.get("call")), (f"{len(diffs)} hash mismatches in {len(ops)} ops of "
                                                f"{len(logs[0])} calls; first rel_diff {first.get('rel_diff')}")


def cmd_debugmode(progs):
    try:
        DebugMode, hashes, how = _debugmode_api()
    except Unavailable as e:
        DebugMode, how = None, one_line(e)
    for p in progs:
        if DebugMode is None:
            print(f"DEBUGMODE\t{p.name}\tunavailable\t-\t{how}", flush=True)
            continue
        try:
            verdict, op, detail = debugmode_one(p, DebugMode, hashes)
        except Unavailable as e:
            verdict, op, detail = "unavailable", "-", one_line(e)
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            verdict, op, detail = "error", "-", one_line(e)
        print(f"DEBUGMODE\t{p.name}\t{verdict}\t{op}\t{detail} (hashes: {how})", flush=True)
    return 0


def cmd_run(p):
    apply_env([p])
    try:
        out = digest(p.fn())
    except Unavailable as e:
        print(f"UNAVAILABLE\t{p.name}\t{one_line(e)}", flush=True)
        return 4
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        return 3
    print(f"OUTPUT\t{p.name}\t{out}", flush=True)
    return 0


def main(argv):
    usage = "usage: verdict_programs.py NAME | --list | --truth NAME... | --truth-procs NAME... | --debugmode NAME..."
    if not argv:
        print(usage, file=sys.stderr)
        return 2
    if argv[0] == "--list":
        return cmd_list()
    modes = {"--truth": cmd_truth, "--truth-procs": cmd_truth_procs, "--debugmode": cmd_debugmode}
    names = argv[1:] if argv[0] in modes else argv
    unknown = [n for n in names if n not in REGISTRY]
    if unknown or not names or (argv[0] not in modes and len(names) != 1):
        print(f"{usage}\nunknown program(s): {' '.join(unknown)}" if unknown else usage, file=sys.stderr)
        return 2
    progs = [REGISTRY[n] for n in names]
    return modes[argv[0]](progs) if argv[0] in modes else cmd_run(progs[0])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
