#!/usr/bin/env bash
# test/gpu/30-hash-jax.sh: hash amplification on a JAX training step:
# bench/gpu/jax_amplification.py, XLA's preallocated pool, hashing on.
set -u
B=${KT_BUILD:-$PWD/build}
W=${KT_TMP:-$(mktemp -d)}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "RESULT|hash-amplification-jax|SKIP|no GPU"
	exit 0
fi
if ! python3 -c 'import jax' 2>/dev/null; then
	echo "RESULT|hash-amplification-jax|SKIP|python3 without jax"
	exit 0
fi
timeout 280 python3 bench/gpu/jax_amplification.py --lib "$B/libktrace.so" --dump "$B/ktrace-dump" \
	--out "$W" --timeout 260 2>&1 | tail -n 20
exit 0
