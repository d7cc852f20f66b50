#!/usr/bin/env bash
# test/gpu/31-copy-readback.sh: what device-to-host copies delivered, on the GPU.
#
# test/gpu/workloads/copy_readback.py under `ktrace run` (hashing on): PyTorch's
# read-backs (.cpu() into pageable memory, .item(), .tolist(), a non_blocking copy
# into pinned memory) are asynchronous copies; their MEMCPY records must carry the
# digest of what they delivered, taken on the GPU in stream order (state "device"),
# equal to ktrace-hash of the bytes the program received and to the digest of a
# synchronous driver copy of the same bytes (state "host"):
#   copy-readback-async-digested      every asynchronous device-to-host copy digested
#   copy-readback-sync-equals-async   one digest for the tensor, whichever copy
#   copy-readback-item, -tolist       .item() and .tolist() digests are their bytes'
# BENCH: 2000 .item() read-backs, untraced and traced (hashing on).
# Prints RESULT|...|PASS|FAIL|SKIP|detail and BENCH|... lines (test/gpu/run.sh).
set -u
B=${KT_BUILD:-$PWD/build}
R=${KT_ROOT:-$PWD}
T=${KT_TMP:-$(mktemp -d)}
L=${KT_LOGS:-$T}
w=$R/test/gpu/workloads/copy_readback.py
names="copy-readback-async-digested copy-readback-sync-equals-async copy-readback-item copy-readback-tolist"

skip_all() {
	for n in $names; do echo "RESULT|$n|SKIP|$1"; done
	exit 0
}

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	skip_all "no GPU"
fi
for f in "$B/ktrace" "$B/ktrace-dump" "$B/ktrace-hash" "$B/libktrace.so"; do
	[ -f "$f" ] || skip_all "$f not built (make)"
done
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null ||
	skip_all "PyTorch with CUDA not available"
d=$T/copy-readback
rm -rf "$d"
mkdir -p "$d" "$L"
if ! timeout 200 "$B/ktrace" run --overwrite -o "$d/trace.ktrace" -- python3 "$w" run "$d" >"$L/copy-readback.log" 2>&1; then
	skip_all "the traced program failed (see copy-readback.log)"
fi
"$B/ktrace-dump" --json "$d/trace.ktrace" >"$d/dump.json" 2>>"$L/copy-readback.log"
python3 "$w" verify "$d/dump.json" "$d" "$B/ktrace-hash" 2>&1 | tee -a "$L/copy-readback.log" | grep '^RESULT|'

plain=$(timeout 100 python3 "$w" bench 2000 2>>"$L/copy-readback.log")
traced=$(timeout 100 "$B/ktrace" run --quiet --overwrite -o "$d/bench.ktrace" -- python3 "$w" bench 2000 \
	2>>"$L/copy-readback.log")
[ -n "$plain" ] && echo "BENCH|copy-readback-item-plain|$plain|s|2000 .item() read-backs, untraced"
[ -n "$traced" ] && echo "BENCH|copy-readback-item-traced|$traced|s|2000 .item() read-backs, ktrace run (hashing on: one checksum launch per copy)"
exit 0
