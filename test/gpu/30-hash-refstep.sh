#!/usr/bin/env bash
# test/gpu/30-hash-refstep.sh: ktrace's hashing on the reference training step.
#
#   bench/gpu/amplification.py             hash amplification (bytes the checksum
#                                          kernels read / twice the op tensor bytes),
#                                          the extent ratio, the share of pre-digests
#                                          carried, region coverage
#   bench/gpu/amplification.py --overhead  ms/step plain, traced, traced+hashed, and
#                                          bitwise-identical final parameters; hash
#                                          launches per traced launch; a run with
#                                          KTRACE_HASH_VERIFY=1 whose carried
#                                          pre-digests must all match (RESULT
#                                          hash-carry-verify-<mode>)
# Eager mode; KT_HASH_COMPILE=1 adds --compile (Inductor/Triton, slow to compile).
# Needs build/libktrace.so, build/ktrace-dump and python3 with CUDA torch.
set -u
B=${KT_BUILD:-$PWD/build}
L=${KT_LOGS:-$(mktemp -d)}
W=${KT_TMP:-$L}   # traces go here, not into the logs that come back

result() { echo "RESULT|$1|$2|$3"; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	result hash-refstep SKIP "no GPU"
	exit 0
fi
for f in "$B/libktrace.so" "$B/ktrace-dump"; do
	if [ ! -f "$f" ]; then
		result hash-refstep SKIP "$f not built (make)"
		exit 0
	fi
done
if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	result hash-refstep SKIP "python3 with CUDA torch not available"
	exit 0
fi
modes="eager"
[ "${KT_HASH_COMPILE:-0}" = 1 ] && modes="eager compile"
for m in $modes; do
	flag=; [ $m = compile ] && flag=--compile
	timeout 200 python3 bench/gpu/amplification.py --lib "$B/libktrace.so" --dump "$B/ktrace-dump" \
		--out "$W" --timeout 180 $flag 2>&1 | tail -20
	timeout 420 python3 bench/gpu/amplification.py --overhead --lib "$B/libktrace.so" --dump "$B/ktrace-dump" \
		--out "$W" --timeout 180 $flag 2>&1 | tail -20
done
exit 0
