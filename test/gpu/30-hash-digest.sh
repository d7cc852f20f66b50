#!/usr/bin/env bash
# test/gpu/30-hash-digest.sh: ktrace's checksum kernel and hash pipeline on the GPU.
#
#   build/gpu/hash_digest          GPU digests == CPU reference (sizes 1 .. 64 MiB+5,
#                                  start offsets 0..15, grid sizes, 1..160 regions per
#                                  launch), pipeline around real kernels (known output,
#                                  read-only pre == post, bitwise transparency, 4 streams,
#                                  capture skipped and left intact), a chain of launches
#                                  with merged hash launches (digests == CPU digests,
#                                  BENCH hash_launches_per_launch_merged), small-hash latency;
#   compute-sanitizer memcheck and racecheck of the kernel (hash_digest --quick;
#   KT_HASH_SANITIZERS picks the tools);
#   register/stack use and the sm_90 SASS of the kernel (logs: hashkern-*.txt).
# Prints RESULT|...|PASS|FAIL|SKIP|detail and BENCH|... lines (test/gpu/run.sh).
set -u
B=${KT_BUILD:-$PWD/build}
L=${KT_LOGS:-$(mktemp -d)}
prog=$B/gpu/hash_digest

result() { echo "RESULT|$1|$2|$3"; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	result hash-digest SKIP "no GPU"
	exit 0
fi
if [ ! -x "$prog" ]; then
	result hash-digest SKIP "$prog not built (make gpu)"
	exit 0
fi

timeout 240 "$prog" 2>&1 | tee "$L/hash_digest.out"
rc=${PIPESTATUS[0]}
grep -q '^RESULT|hash-pipeline-no-errors|' "$L/hash_digest.out" ||
	result hash-digest-run FAIL "hash_digest ended early (exit $rc)"

if command -v compute-sanitizer >/dev/null 2>&1; then
	for tool in ${KT_HASH_SANITIZERS:-memcheck racecheck}; do
		timeout 100 compute-sanitizer --tool $tool --print-limit 20 "$prog" --quick >"$L/hash_$tool.txt" 2>&1
		src=$?
		summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/hash_$tool.txt" | tail -1)
		if [ $src = 0 ] && echo "$summary" | grep -qE ' 0 (errors|hazards)'; then
			result hash-kernel-$tool PASS "$summary"
		elif [ $src = 124 ]; then
			result hash-kernel-$tool FAIL "timed out"
		else
			result hash-kernel-$tool FAIL "exit $src: ${summary:-no summary}; see hash_$tool.txt"
		fi
	done
else
	result hash-kernel-memcheck SKIP "compute-sanitizer not found"
fi

if command -v cuobjdump >/dev/null 2>&1 && [ -f "$B/hashkern/hashkern.fatbin" ]; then
	cuobjdump -res-usage "$B/hashkern/hashkern.fatbin" >"$L/hashkern-res-usage.txt" 2>&1
	cuobjdump -sass -arch sm_90 "$B/hashkern/hashkern.fatbin" >"$L/hashkern-sass-sm90.txt" 2>&1
	grep -A1 'sm_90' "$L/hashkern-res-usage.txt" | grep -o 'Function [a-z_0-9]*:REG:[0-9]*:STACK:[0-9]*' | head -3
	n=$(grep -c 'ktrace_hash_r8' "$L/hashkern-sass-sm90.txt")
	[ "$n" -gt 0 ] && result hash-kernel-sass PASS "sm_90 SASS in the fatbin ($(grep -c '/\*[0-9a-f]*\*/' "$L/hashkern-sass-sm90.txt") instructions, 3 kernels)" ||
		result hash-kernel-sass FAIL "no sm_90 SASS for ktrace_hash_r8 in the fatbin"
fi
exit 0
