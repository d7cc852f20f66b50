#!/usr/bin/env bash
# test/gpu/30-hash-bench.sh: digest bandwidth of ktrace's checksum kernel against
# torch.sum, 4 KiB .. 4 GiB, in the same call on the same GPU.
#
#   build/hash_bandwidth           the kernel, CUDA events (bench/gpu/hash_bandwidth.c)
#   bench/gpu/torch_sum.py         torch.sum over fp32 tensors, same method
# RESULT hash-bandwidth: the 4 GiB digest reaches >= 90% of torch.sum's GB/s.
# KT_HASH_BENCH_MAX overrides the largest size (bytes).
set -u
B=${KT_BUILD:-$PWD/build}
L=${KT_LOGS:-$(mktemp -d)}
max=${KT_HASH_BENCH_MAX:-4294967296}

result() { echo "RESULT|$1|$2|$3"; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	result hash-bandwidth SKIP "no GPU"
	exit 0
fi
if [ ! -x "$B/hash_bandwidth" ]; then
	result hash-bandwidth SKIP "$B/hash_bandwidth not built (make gpu)"
	exit 0
fi
timeout 150 "$B/hash_bandwidth" "$max" 2>&1 | tee "$L/hash_bandwidth.out"
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	timeout 150 python3 bench/gpu/torch_sum.py "$max" 2>&1 | tee "$L/torch_sum.out"
else
	result hash-bandwidth SKIP "python3 with CUDA torch not available for the torch.sum reference"
	exit 0
fi
python3 - "$L/hash_bandwidth.out" "$L/torch_sum.out" <<'PY'
import sys
def bench(path, prefix):
    d = {}
    for line in open(path):
        f = line.rstrip("\n").split("|")
        if len(f) >= 4 and f[0] == "BENCH" and f[1].startswith(prefix):
            d[f[1][len(prefix):]] = float(f[2])
    return d
h = bench(sys.argv[1], "hash_bw_")
t = bench(sys.argv[2], "torch_sum_")
for k in h:
    if k in t and t[k] > 0:
        print(f"BENCH|hash_vs_torch_sum_{k}|{100.0 * h[k] / t[k]:.1f}|%|hash {h[k]:.1f} GB/s, torch.sum {t[k]:.1f} GB/s")
big = max((k for k in h if k in t), key=lambda k: (k.endswith("GiB"), k.endswith("MiB"), int(k[:-3])), default=None)
if big is None:
    print("RESULT|hash-bandwidth|FAIL|no size measured by both")
else:
    r = h[big] / t[big]
    print(f"RESULT|hash-bandwidth|{'PASS' if r >= 0.9 else 'FAIL'}|{big}: hash {h[big]:.1f} GB/s = {100 * r:.1f}% of torch.sum {t[big]:.1f} GB/s (target >= 90%)")
PY
exit 0
