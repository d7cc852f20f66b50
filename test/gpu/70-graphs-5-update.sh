#!/usr/bin/env bash
# test/gpu/70-graphs-5-update.sh: an executable graph changed between its
# launches the ways that make ktrace update its instrumented copy in place
# (build/gpu/graph_update: a kernel node's hashed regions one fewer and back
# through parameters set on the exec, a memset node disabled and enabled
# again; 16 MiB buffers, so the checksum kernels run many blocks that add
# into their scratch words).
#
#   graphs-update-transparency  under libktrace.so with hashing on, merged and
#                               not, the program's own checks hold (y after each
#                               launch, z 0 while the memset is disabled and 7
#                               once it is enabled again), as without ktrace
#   graphs-update-digests       launch 2's kernel node has both regions hashed,
#                               with the digests of launch 0's (same buffers,
#                               same bytes): post of y, pre and post of w
# Needs build/gpu/graph_update (make gpu), build/libktrace.so, build/ktrace-dump.
# Logs: $KT_LOGS/graphs/.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${KT_BUILD:-$PWD/build}
L=${KT_LOGS:-$(mktemp -d)}/graphs
W=${KT_TMP:-$(mktemp -d)}
mkdir -p "$L"
result() { echo "RESULT|$1|$2|$3"; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	result graphs-update SKIP "no GPU"
	exit 0
fi
for f in "$B/gpu/graph_update" "$B/libktrace.so" "$B/ktrace-dump"; do
	[ -e "$f" ] || { result graphs-update SKIP "$f not built (make gpu)"; exit 0; }
done

if ! timeout 120 "$B/gpu/graph_update" >"$L/update-plain.out" 2>&1; then
	result graphs-update-transparency FAIL "without ktrace: $(tail -n 2 "$L/update-plain.out" | tr '\n' ' ')"
	exit 0
fi
bad=""
for merge in 0 1; do
	env LD_PRELOAD="$B/libktrace.so" KTRACE_OUTPUT="$W/update-$merge.ktrace" KTRACE_OVERWRITE=1 \
		KTRACE_HASH=1 KTRACE_HASH_MERGE=$merge timeout 120 "$B/gpu/graph_update" \
		>"$L/update-$merge.out" 2>"$L/update-$merge.err" ||
		bad="$bad merge=$merge: $(tail -n 1 "$L/update-$merge.out") $(tail -n 1 "$L/update-$merge.err")"
done
if [ -z "$bad" ]; then
	result graphs-update-transparency PASS "$(tail -n 1 "$L/update-1.out")"
else
	result graphs-update-transparency FAIL "$bad"
fi

"$B/ktrace-dump" --json "$W/update-0.ktrace" >"$W/update-0.jsonl" 2>"$L/update-dump.err"
python3 - "$W/update-0.jsonl" <<'PY'
import json, sys
k = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") == "launch" and r.get("kernel") == "twice" and "graph" in r:
        k[r["graph"]["launch"]] = r
def digests(r):
    return [(g.get("pre_hash"), g.get("post_hash")) for g in r.get("regions", [])]
a, b = k.get(0), k.get(2)
if not a or not b:
    print("RESULT|graphs-update-digests|FAIL|launches 0 and 2 of twice not both recorded (%s)" % sorted(k))
elif "hashed" not in b.get("launch_flags", []) or len(digests(b)) != 2 or None in sum(digests(b), ()):
    print("RESULT|graphs-update-digests|FAIL|launch 2 not hashed with two regions: %s" % digests(b))
elif digests(a)[0][1] != digests(b)[0][1] or digests(a)[1] != digests(b)[1]:
    print("RESULT|graphs-update-digests|FAIL|launch 0 %s, launch 2 %s" % (digests(a), digests(b)))
else:
    print("RESULT|graphs-update-digests|PASS|launch 2's digests are launch 0's: %s" % digests(b))
PY
[ "${KT_GRAPHS_KEEP:-0}" = 1 ] || rm -f "$W"/update-*.ktrace "$W"/update-*.jsonl
exit 0
