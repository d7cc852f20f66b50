#!/usr/bin/env bash
# test/gpu/91-nccl-1-single.sh: NCCL recorded on one GPU (COMM and COLL records).
#
# test/gpu/workloads/nccl_single.py under `ktrace run` (hashing on): a world-size-1
# PyTorch job on the NCCL backend (file:// rendezvous, rank 0): all_reduce,
# broadcast, all_gather_into_tensor, reduce_scatter_tensor, a new_group and an
# all_reduce on it, barrier.  The trace (ktrace-dump --json) must hold:
#   nccl-single-comm-init          the init's COMM record: comm_id, rank 0 of 1,
#                                  NCCL's version (the one torch reports)
#   nccl-single-comm-split         the new group's COMM split, its parent the init
#                                  (SKIP where torch makes it without ncclCommSplit)
#   nccl-single-coll-records       a COLL record per operation, each result 0 (torch's
#                                  broadcast is ncclBcast; at world size 1 its
#                                  reduce_scatter_tensor may call no NCCL function)
#   nccl-single-comm-seq           comm_seq 0, 1, 2, ... on each communicator
#   nccl-single-launches           each reduction's COLL (or its group end) names
#                                  LAUNCH records of its thread (one rank: NCCL
#                                  launches a kernel only for a scaling reduction,
#                                  AVG; the other operations' counts are reported)
#   nccl-single-regions            those launches carry the operations' coll_buffer
#                                  regions, with pre- and post-digests
#   nccl-single-received-digests   what each reduction received equals ktrace-hash
#                                  of the tensor the program saved
# Prints RESULT|...|PASS|FAIL|SKIP|detail lines (test/gpu/run.sh).
set -u
B=${KT_BUILD:-$PWD/build}
R=${KT_ROOT:-$PWD}
T=${KT_TMP:-$(mktemp -d)}
L=${KT_LOGS:-$T}
w=$R/test/gpu/workloads/nccl_single.py
names="nccl-single-comm-init nccl-single-comm-split nccl-single-coll-records nccl-single-comm-seq
nccl-single-launches nccl-single-regions nccl-single-received-digests"
limit=${KT_SCRIPT_TIMEOUT:-400}

skip_all() {
	for n in $names; do echo "RESULT|$n|SKIP|$1"; done
	exit 0
}
fail_all() {
	for n in $names; do echo "RESULT|$n|FAIL|$1"; done
	exit 0
}

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	skip_all "no GPU"
fi
for f in "$B/ktrace" "$B/ktrace-dump" "$B/ktrace-hash" "$B/libktrace.so"; do
	[ -f "$f" ] || skip_all "$f not built (make)"
done
why=$(python3 "$w" check 2>&1) || skip_all "${why:-PyTorch not usable}"
d=$T/nccl-single
rm -rf "$d"
mkdir -p "$d/traced" "$d/plain" "$L"
log=$L/nccl-single.log
# One rank: no other process to meet; MASTER_* unset, so that nothing else is tried.
unset MASTER_ADDR MASTER_PORT RANK WORLD_SIZE LOCAL_RANK
if ! timeout $((limit / 2)) "$B/ktrace" run --overwrite -o "$d/trace.ktrace" -- python3 "$w" run "$d/traced" \
	>"$log" 2>&1; then
	if timeout $((limit / 4)) python3 "$w" run "$d/plain" >>"$log" 2>&1; then
		fail_all "the program failed under ktrace and ran without it (see nccl-single.log)"
	fi
	skip_all "the program fails without ktrace too: no usable NCCL on this machine (see nccl-single.log)"
fi
"$B/ktrace-dump" --json "$d/trace.ktrace" >"$d/dump.json" 2>>"$log"
if ! grep -q '"type":"comm"' "$d/dump.json"; then
	skip_all "no COMM record: PyTorch's NCCL is not called through libnccl.so.2's exported functions (linked statically?)"
fi
python3 "$w" verify "$d/dump.json" "$d/traced" "$B/ktrace-hash" 2>&1 | tee -a "$log" | grep '^RESULT|'
exit 0
