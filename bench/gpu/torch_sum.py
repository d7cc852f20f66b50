"""bench/gpu/torch_sum.py: read bandwidth of torch.sum over fp32 tensors, the
reference for ktrace's checksum kernel (bench/gpu/hash_bandwidth.c).

    python3 bench/gpu/torch_sum.py [MAX_BYTES]     (default 4 GiB)

Sizes 4 KiB .. MAX_BYTES in x4 steps, timed with CUDA events around batches
of back-to-back calls (the same method as hash_bandwidth); prints
    BENCH|torch_sum_<size>|<GB/s>|GB/s|<median us per call, ...>
GB/s = tensor bytes / time (10^9 B/s).
"""
import sys

import torch


def label(n):
    if n >= 1 << 30:
        return f"{n >> 30}GiB"
    if n >= 1 << 20:
        return f"{n >> 20}MiB"
    return f"{n >> 10}KiB"


def main():
    mx = int(sys.argv[1], 0) if len(sys.argv) > 1 else 4 << 30
    dev = torch.device("cuda")
    print(f"device {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    x = torch.rand(mx // 4, device=dev, dtype=torch.float32)
    for _ in range(20):
        x.sum()
    torch.cuda.synchronize()
    size = 4096
    while size <= mx:
        v = x[: size // 4]
        batch = 1 if size >= 256 << 20 else min(2000, (256 << 20) // size)
        reps = 10 if size >= 1 << 30 else 30
        times = []
        for _ in range(reps):
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(batch):
                v.sum()
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1))
        times.sort()
        us = times[len(times) // 2] * 1000.0 / batch
        print(f"BENCH|torch_sum_{label(size)}|{size / (us * 1e3):.1f}|GB/s|{us:.2f} us per call, "
              f"median of {reps} batches of {batch}", flush=True)
        size *= 4


if __name__ == "__main__":
    main()
