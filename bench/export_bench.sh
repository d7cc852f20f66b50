#!/usr/bin/env bash
# bench/export_bench.sh: how long the timeline export takes on a large trace.
#
#   bash bench/export_bench.sh [LAUNCHES] [REPEATS]      (default 200000 launches, 3 runs)
#
# Makes the trace with the test generator (build/ktgen --scenario many --launches N:
# one thread, 3 kernels on 2 streams, 2 hashed pointer arguments and 2 scalars per
# launch), then times, REPEATS times each, with /usr/bin/time (wall seconds, CPU seconds
# (user + system: what to compare on a shared machine), peak RSS):
#   ktrace-export --perfetto TRACE -o OUT.json
#   ktrace-diff --perfetto OUT.json TRACE TRACE  (two loads, the diff, run A's timeline)
#   python3: ktrace.load(TRACE) (the Python module on libktrace-reader.so)
# and prints per step the median wall time as BENCH|<name>|<seconds>|s|<detail> with the
# median CPU time and the load average in the detail (docs/performance.md).
# Needs `make` (the tools, ktgen, libktrace-reader.so); KT_BUILD overrides build/.
set -u
cd "$(dirname "$0")/.."
B=${KT_BUILD:-$PWD/build}
N=${1:-200000}
R=${2:-3}
T=$(mktemp -d "${TMPDIR:-/tmp}/kt-export-bench.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
for f in ktgen ktrace-export ktrace-diff libktrace-reader.so; do
	[ -e "$B/$f" ] || { echo "export_bench: $B/$f missing (make $B/$f)"; exit 1; }
done

"$B/ktgen" --scenario many --launches "$N" "$T/big.ktrace" || exit 1
echo "trace: $N launches, $(wc -c <"$T/big.ktrace") bytes compressed"

# bench NAME DETAIL COMMAND...: REPEATS timed runs, the median wall time and peak RSS.
bench() {
	local name=$1 detail=$2
	shift 2
	: >"$T/times"
	for _ in $(seq "$R"); do
		/usr/bin/time -f "%e %M %U %S" -o "$T/one" "$@" >/dev/null 2>"$T/err" || { cat "$T/err"; return 1; }
		cat "$T/one" >>"$T/times"
	done
	local load
	load=$(cut -d' ' -f1 /proc/loadavg)
	python3 - "$T/times" "$name" "$detail" "$R" "$load" <<'PYEOF'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
wall = sorted(r[0] for r in rows)
cpu = statistics.median(r[2] + r[3] for r in rows)
rss = statistics.median(r[1] for r in rows) / 1024
print("BENCH|%s|%.2f|s|wall, median of %s runs (%.2f-%.2f s); CPU %.2f s (median user+sys); peak RSS %.0f MB; "
      "load %s; %s" % (sys.argv[2], statistics.median(wall), sys.argv[4], wall[0], wall[-1], cpu, rss, sys.argv[5],
                       sys.argv[3]))
PYEOF
}

bench export-perfetto "$N launches -> Chrome JSON" "$B/ktrace-export" -q --perfetto "$T/big.ktrace" -o "$T/out.json"
echo "timeline: $(wc -c <"$T/out.json") bytes, $(grep -o '"ph":"X"' "$T/out.json" | wc -l) slices"
bench diff-perfetto "ktrace-diff of the trace with itself, run A's timeline" \
	"$B/ktrace-diff" --perfetto "$T/diff.json" "$T/big.ktrace" "$T/big.ktrace"
bench python-load "ktrace.load(): objects, args not decoded" env KTRACE_READER_LIB="$B/libktrace-reader.so" \
	PYTHONPATH="$PWD/python" python3 -c "import ktrace, sys; t = ktrace.load(sys.argv[1]); assert len(t.launches) == $N" \
	"$T/big.ktrace"
