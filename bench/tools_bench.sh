#!/usr/bin/env bash
# bench/tools_bench.sh: the trace-reading tools' speed and memory on a large trace.
#
#   bash bench/tools_bench.sh [LAUNCHES] [REPEATS]     (default 1000000 launches, 3 runs)
#
# Makes two traces with the test generator (build/ktgen --scenario many: one thread,
# 3 kernels on 2 streams, 2 hashed pointer arguments and 2 scalars per launch; the
# second run's launch LAUNCHES/2 writes a different output digest, --diverge-at), then
# runs each step REPEATS times pinned to one core (taskset -c $KT_CPU, default the last
# core) under /usr/bin/time -v:
#   dump-json      ktrace-dump --json A >/dev/null
#   dump-text      ktrace-dump A >/dev/null
#   diff-same      ktrace-diff A A         (identical: every launch compared)
#   diff-one       ktrace-diff A B         (one divergence, at the middle launch)
#   diff-disjoint  ktrace-diff A C         (C: B with every address 4 GiB higher, --shift-addresses:
#                                           no launch of C shares A's regions)
#   py-load        ktrace.load(A)          (Python objects, args decoded on first use)
#   py-columns     ktrace.columns(A)       (numpy arrays per field; skipped without numpy)
# (the Python steps under $KT_PYTHON, else python3, else /usr/bin/python3 when only it has numpy)
# and prints one line per step,
#   BENCH|<name>|<records/s>|<wall s>|<records/CPU s>|<CPU s>|<peak RSS MiB>|<detail>
# (median wall time of the runs and the records/s it gives, the same for CPU time, user +
# system: what to compare on a shared machine; the largest peak RSS), then a table.
# Records are the trace's (every record ktrace-dump prints), counted once with
# ktrace-dump --json A | wc -l.  The method and figures: docs/perf-tools.md.
# Needs the tools, ktgen and libktrace-reader.so built (make); KT_BUILD overrides build/.
set -u
cd "$(dirname "$0")/.."
B=${KT_BUILD:-$PWD/build}
N=${1:-1000000}
R=${2:-3}
CPU=${KT_CPU:-$(($(nproc) - 1))}
T=$(mktemp -d "${TMPDIR:-/tmp}/kt-tools-bench.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
for f in ktgen ktrace-dump ktrace-diff libktrace-reader.so; do
	[ -e "$B/$f" ] || { echo "tools_bench: $B/$f missing (make $B/$f)"; exit 1; }
done
[ -x /usr/bin/time ] || { echo "tools_bench: /usr/bin/time missing (scripts/install-deps.sh installs it)"; exit 1; }

"$B/ktgen" --scenario many --launches "$N" "$T/a.ktrace" || exit 1
"$B/ktgen" --scenario many --launches "$N" --diverge-at $((N / 2)) "$T/b.ktrace" || exit 1
"$B/ktgen" --scenario many --launches "$N" --diverge-at $((N / 2)) --shift-addresses 0x100000000 \
	"$T/c.ktrace" || exit 1
RECORDS=$("$B/ktrace-dump" --json "$T/a.ktrace" | wc -l)
echo "trace: $N launches, $RECORDS records, $(wc -c <"$T/a.ktrace") bytes compressed;" \
	"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), core $CPU, $(date -u +%F)"

export KTRACE_READER_LIB="$B/libktrace-reader.so" PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
# the Python steps run under $KT_PYTHON, else python3, else the system's python3 when only it has numpy
PY=${KT_PYTHON:-python3}
if [ -z "${KT_PYTHON:-}" ] && ! python3 -c "import numpy" 2>/dev/null && /usr/bin/python3 -c "import numpy" 2>/dev/null; then
	PY=/usr/bin/python3
fi
: >"$T/table"

# bench NAME DETAIL EXPECTED_STATUS COMMAND...: REPEATS runs on core CPU, one BENCH line.
bench() {
	local name=$1 detail=$2 want=$3 rc
	shift 3
	: >"$T/runs"
	for _ in $(seq "$R"); do
		taskset -c "$CPU" /usr/bin/time -v -o "$T/one" "$@" >/dev/null 2>"$T/err"
		rc=$?
		if [ "$rc" != "$want" ]; then
			echo "BENCH|$name|-|-|-|-|-|exit status $rc, not $want: $(tail -n 3 "$T/err" | tr '\n' ' ')"
			return
		fi
		awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0;
				for (i = 1; i <= n; i++) s = s * 60 + t[i]; w = s }
			/Maximum resident set size/ { m = $2 }
			/User time \(seconds\)/ { u = $2 }
			/System time \(seconds\)/ { y = $2 }
			END { print w, m, u + y }' "$T/one" >>"$T/runs"
	done
	python3 - "$T/runs" "$name" "$detail" "$RECORDS" "$T/table" <<'PYEOF'
import statistics, sys
runs = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
wall = statistics.median(r[0] for r in runs)
cpu = statistics.median(r[2] for r in runs)
rss = max(r[1] for r in runs) / 1024
rate = int(sys.argv[4]) / wall if wall else 0
cpu_rate = int(sys.argv[4]) / cpu if cpu else 0
line = "BENCH|%s|%.0f|%.2f|%.0f|%.2f|%.0f|%s; %d runs, wall %.2f-%.2f s, CPU %.2f-%.2f s" % (
    sys.argv[2], rate, wall, cpu_rate, cpu, rss, sys.argv[3], len(runs), min(r[0] for r in runs),
    max(r[0] for r in runs), min(r[2] for r in runs), max(r[2] for r in runs))
print(line)
open(sys.argv[5], "a").write(line + "\n")
PYEOF
}

bench dump-json "ktrace-dump --json" 0 "$B/ktrace-dump" --json "$T/a.ktrace"
bench dump-text "ktrace-dump (text)" 0 "$B/ktrace-dump" "$T/a.ktrace"
bench diff-same "ktrace-diff, identical traces" 0 "$B/ktrace-diff" "$T/a.ktrace" "$T/a.ktrace"
bench diff-one "ktrace-diff, one divergence" 1 "$B/ktrace-diff" "$T/a.ktrace" "$T/b.ktrace"
bench diff-disjoint "ktrace-diff, one divergence, every address different" 1 "$B/ktrace-diff" "$T/a.ktrace" \
	"$T/c.ktrace"
bench py-load "ktrace.load() objects" 0 "$PY" -c \
	"import ktrace, sys; t = ktrace.load(sys.argv[1]); assert len(t.launches) == $N" "$T/a.ktrace"
if "$PY" -c "import numpy" 2>/dev/null; then
	bench py-columns "ktrace.columns() numpy arrays" 0 "$PY" -c \
		"import ktrace, sys; c = ktrace.columns(sys.argv[1]); assert len(c['launches']['op_seq']) == $N" \
		"$T/a.ktrace"
else
	echo "BENCH|py-columns|-|-|-|-|-|skipped: no numpy (python3-numpy)"
fi

echo
printf '%-12s %12s %8s %12s %8s %9s\n' step records/s wall_s cpu_rec/s cpu_s peak_MiB
awk -F'|' '{ printf "%-12s %12s %8s %12s %8s %9s\n", $2, $3, $4, $5, $6, $7 }' "$T/table"
