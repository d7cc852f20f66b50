#!/usr/bin/env bash
# test/gpu/34-hash-merge.sh: merged hash launches (docs/hashing.md, "Merged hash
# launches") through the real driver wrappers, on the reference training step.
#
#   ref_step.py eager (5 steps) under libktrace.so three times: merging on
#   (KTRACE_HASH_MERGE=1), and twice with KTRACE_HASH_MERGE=0 (the default);
#   RESULT hash-merge-digests   ktrace-diff finds the merged trace identical to an
#                               unmerged one (when the two unmerged runs are
#                               identical to each other: else SKIP, the workload
#                               is not deterministic on this machine);
#   RESULT hash-merge-transparent  the final parameters' checksum equal in all three;
#   RESULT hash-merge-target    hash launches per traced launch <= 1.0 with merging;
#   BENCH hash_launches_per_launch_{merged,unmerged}, hash_merged_per_launch,
#   hash_post_flushed_per_launch (COUNTERS of the traces), the lone post-hashes by
#   cause, hash_mib_{pointer,struct,guessed}_per_launch (the merged run's hashed
#   bytes by where their pointers came from: ktrace-dump --summary).
# Needs build/libktrace.so, build/ktrace-dump, build/ktrace-diff and python3 with CUDA torch.
set -u
B=${KT_BUILD:-$PWD/build}
L=${KT_LOGS:-$(mktemp -d)}
W=${KT_TMP:-$L}   # traces go here, not into the logs that come back
REF=${KT_REF_STEP:-$PWD/test/gpu/workloads/ref_step.py}

result() { echo "RESULT|$1|$2|$3"; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	result hash-merge SKIP "no GPU"
	exit 0
fi
for f in "$B/libktrace.so" "$B/ktrace-dump" "$B/ktrace-diff"; do
	if [ ! -f "$f" ]; then
		result hash-merge SKIP "$f not built (make)"
		exit 0
	fi
done
if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	result hash-merge SKIP "python3 with CUDA torch not available"
	exit 0
fi

# run NAME [VAR=value...]: ref_step.py under the library, trace $W/NAME.ktrace,
# its output line in $L/NAME.out
run() {
	local name=$1
	shift
	env LD_PRELOAD="$B/libktrace.so" KTRACE_OUTPUT="$W/$name.ktrace" KTRACE_OVERWRITE=1 KTRACE_QUIET=1 \
		KTRACE_HASH=1 "$@" timeout 300 python3 "$REF" --steps 5 --warmup 1 >"$L/$name.out" 2>"$L/$name.err"
}

# counter NAME KEY: the last COUNTERS record's value of KEY in $W/NAME.ktrace (0 if none)
counter() {
	"$B/ktrace-dump" --json "$W/$1.ktrace" 2>/dev/null | python3 -c '
import json, sys
last = {}
for line in sys.stdin:
    if "\"counters\"" in line:
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("type") == "counters" and isinstance(r.get("counters"), dict):
            last = r["counters"]
print(last.get(sys.argv[1], 0))' "$2"
}

run merged KTRACE_HASH_MERGE=1 || { result hash-merge FAIL "merged run exited $?: $(tail -n 2 "$L/merged.err" | tr '\n' ' ' | cut -c1-300)"; exit 0; }
run unmerged1 KTRACE_HASH_MERGE=0 || { result hash-merge FAIL "unmerged run exited $?"; exit 0; }
run unmerged2 KTRACE_HASH_MERGE=0 || { result hash-merge FAIL "second unmerged run exited $?"; exit 0; }

sums=$(sed -n 's/.*checksum=\([0-9a-f]*\).*/\1/p' "$L"/merged.out "$L"/unmerged1.out "$L"/unmerged2.out | sort -u | wc -l)
[ "$sums" = 1 ] && result hash-merge-transparent PASS "final parameters' checksum equal in the three runs" ||
	result hash-merge-transparent FAIL "final parameters' checksums differ: $(cat "$L"/*.out | tr '\n' ' ')"

"$B/ktrace-diff" "$W/unmerged1.ktrace" "$W/unmerged2.ktrace" >"$L/diff-unmerged.txt" 2>&1
"$B/ktrace-diff" "$W/merged.ktrace" "$W/unmerged1.ktrace" >"$L/diff-merged.txt" 2>&1
if ! grep -q '^result: identical' "$L/diff-unmerged.txt"; then
	result hash-merge-digests SKIP "two unmerged runs differ already: $(grep -m1 '^result' "$L/diff-unmerged.txt")"
elif grep -q '^result: identical' "$L/diff-merged.txt"; then
	result hash-merge-digests PASS "$(grep -m1 '^result' "$L/diff-merged.txt")"
else
	result hash-merge-digests FAIL "merged vs unmerged: $(grep -m1 '^result' "$L/diff-merged.txt"); see diff-merged.txt"
fi

# per NAME: launches_seen hash_launches hash_merged hash_post_flushed
read -r m_seen m_hl m_merged m_flushed <<<"$(for k in launches_seen hash_launches hash_merged hash_post_flushed; do counter merged $k; done | tr '\n' ' ')"
read -r u_seen u_hl <<<"$(for k in launches_seen hash_launches; do counter unmerged1 $k; done | tr '\n' ' ')"
per() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else printf "nan" }'; }
m_ratio=$(per "$m_hl" "$m_seen")
echo "BENCH|hash_launches_per_launch_merged|$m_ratio|ratio|ref_step eager, 5 steps: $m_hl hash launches, $m_seen launches"
echo "BENCH|hash_launches_per_launch_unmerged|$(per "$u_hl" "$u_seen")|ratio|KTRACE_HASH_MERGE=0: $u_hl hash launches, $u_seen launches"
echo "BENCH|hash_merged_per_launch|$(per "$m_merged" "$m_seen")|ratio|post-hashes merged into the next pre-hash launch ($m_merged)"
echo "BENCH|hash_post_flushed_per_launch|$(per "$m_flushed" "$m_seen")|ratio|post-hashes held and launched alone ($m_flushed)"
# what sent the lone post-hashes alone, and the regions the merged launches read once
for k in hash_flush_stream hash_flush_carried hash_flush_unmergeable hash_flush_unhashed hash_flush_copy \
	hash_flush_order hash_flush_memory hash_flush_bound hash_flush_other hash_pre_shared; do
	v=$(counter merged $k)
	echo "BENCH|${k}_per_launch|$(per "$v" "$m_seen")|ratio|merged run: $v"
done
m_bytes=$(counter merged hash_bytes)
u_bytes=$(counter unmerged1 hash_bytes)
echo "BENCH|hash_bytes_merged_over_unmerged|$(per "$m_bytes" "$u_bytes")|ratio|bytes the checksum kernels read: $m_bytes merged, $u_bytes unmerged"
# where the merged run's hashed bytes went: pointer parameters, struct words of known
# layouts, words guessed by value (ktrace-dump --summary's "sources")
python3 - "$B/ktrace-dump" "$W/merged.ktrace" "$m_seen" "$(dirname "$0")/../../bench/gpu" <<'PY'
import sys
sys.path.insert(0, sys.argv[4])
from hash_cost import byte_sources
for key, v in byte_sources(sys.argv[1], sys.argv[2], int(sys.argv[3] or 0)):
    mib = isinstance(v, float)
    print(f"BENCH|{key}|{v:.2f}|MiB|merged run" if mib else f"BENCH|{key}|{v}|count|merged run")
PY
if awk -v r="$m_ratio" 'BEGIN { exit !(r != "nan" && r + 0 <= 1.0) }'; then
	result hash-merge-target PASS "$m_ratio hash launches per traced launch (target <= 1.0)"
else
	result hash-merge-target FAIL "$m_ratio hash launches per traced launch (target <= 1.0; $m_merged merged, $m_flushed flushed alone)"
fi
exit 0
