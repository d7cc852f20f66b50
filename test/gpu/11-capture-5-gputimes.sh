#!/usr/bin/env bash
# test/gpu/11-capture-5-gputimes.sh: the GPU times of sampled launches
# (KTRACE_GPU_TIMES, GPUTIME records; docs/format.md "GPUTIME") on a GPU.
#
#  1. build/gpu/gputime_spin (test/gpu/gputime_spin.cu) under libktrace.so in
#     metadata mode with KTRACE_GPU_TIMES=1: kernels that spin 20 us to 2 ms
#     by the GPU's global timer and write down when they ran.  Every launch
#     after the warm-up must have its GPUTIME record, whose duration holds
#     the kernel's own, whose start is not before its call and whose end is
#     not after the synchronisation that waited for it
#     (test/gpu/workloads/gputime_check.py spin):
#       RESULT capture-gputimes-spin, capture-gputimes-alignment
#       BENCH  capture-gputimes-spin-excess (measured minus the kernel's own),
#              capture-gputimes-idle-excess (the first launch, the only one on
#              an idle stream: its excess, its launch call's host time and how
#              much of the excess lies before its kernel's start),
#              capture-gputimes-ref-err, capture-gputimes-globaltimer-offset
#  2. the reference step (test/gpu/workloads/ref_step.py, eager, 20 steps) at
#     the default rate (one launch in 64): the records are of the launches the
#     hash picks, and the timeline export places them (the independent checker,
#     test/tools/check_trace_events.py, when python3 has jsonschema):
#       RESULT capture-gputimes-sample-64, capture-gputimes-export
# The cost of GPU times on the reference step is measured by
# 11-capture-3-refstep.sh (BENCH capture-refstep-<mode>-gputimes<N>-...).
set -u
cd "$(dirname "$0")/../.."
B=${KT_BUILD:-$PWD/build}
T=${KT_TMP:-$(mktemp -d)}/gputimes
mkdir -p "$T"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "RESULT|capture-gputimes|SKIP|no GPU"
	exit 0
fi
[ -f "$B/libktrace.so" ] || { echo "RESULT|capture-gputimes|SKIP|libktrace.so not built"; exit 0; }
CHECK="python3 test/gpu/workloads/gputime_check.py"

# 1. kernels of known run time
if [ -x "$B/gpu/gputime_spin" ]; then
	KTRACE_OUTPUT="$T/spin.ktrace" KTRACE_HASH=0 KTRACE_GPU_TIMES=1 KTRACE_QUIET=1 KTRACE_OVERWRITE=1 \
		LD_PRELOAD="$B/libktrace.so" timeout 120 "$B/gpu/gputime_spin" >"$T/spin.out" 2>"$T/spin.err"
	if [ $? = 0 ] && grep -q '^OK' "$T/spin.out" && "$B/ktrace-dump" --json "$T/spin.ktrace" >"$T/spin.jsonl"; then
		"$B/ktrace-dump" --summary "$T/spin.ktrace" | grep counters | cut -c1-300
		$CHECK spin "$T/spin.jsonl" "$T/spin.out" ||
			{ mkdir -p "${KT_LOGS:-$T}/gputimes" && cp "$T/spin.jsonl" "$T/spin.out" "${KT_LOGS:-$T}/gputimes/"; }
	else
		echo "RESULT|capture-gputimes-spin|FAIL|gputime_spin under ktrace: $(tail -n 2 "$T/spin.err" | tr '\n' ' ' | cut -c1-300)"
	fi
else
	echo "RESULT|capture-gputimes-spin|SKIP|build/gpu/gputime_spin not built (make gpu)"
fi

# 2. the reference step at the default rate, and its timeline
REF=${KT_REF_STEP:-$PWD/test/gpu/workloads/ref_step.py}
if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	echo "RESULT|capture-gputimes-sample-64|SKIP|no PyTorch with CUDA"
	exit 0
fi
KTRACE_OUTPUT="$T/ref-%p.ktrace" KTRACE_HASH=0 KTRACE_QUIET=1 KTRACE_OVERWRITE=1 LD_PRELOAD="$B/libktrace.so" \
	timeout 200 python3 "$REF" --steps 20 --warmup 2 >"$T/ref.out" 2>"$T/ref.err"
tr=$(ls -S "$T"/ref-*.ktrace 2>/dev/null | head -n 1)
if [ -z "$tr" ] || ! "$B/ktrace-dump" --json "$tr" >"$T/ref.jsonl"; then
	echo "RESULT|capture-gputimes-sample-64|FAIL|no trace of ref_step.py: $(tail -n 2 "$T/ref.err" | tr '\n' ' ' | cut -c1-300)"
	exit 0
fi
"$B/ktrace-dump" --summary "$tr" | grep counters | cut -c1-300
$CHECK sample "$T/ref.jsonl" 64
if python3 -c 'import jsonschema' 2>/dev/null; then
	if "$B/ktrace-export" -q "$tr" -o "$T/ref.json" &&
		python3 test/tools/check_trace_events.py --dump "$T/ref.jsonl" "$T/ref.json" >"$T/check.out" 2>&1; then
		echo "RESULT|capture-gputimes-export|PASS|$(sed 's/.*: ok: //' "$T/check.out" | cut -c1-300)"
	else
		echo "RESULT|capture-gputimes-export|FAIL|$(head -n 4 "$T/check.out" | tr '\n' ' ' | cut -c1-300)"
	fi
else
	echo "RESULT|capture-gputimes-export|SKIP|python3 has no jsonschema (the checker needs it)"
fi
rm -f "$T"/*.ktrace
