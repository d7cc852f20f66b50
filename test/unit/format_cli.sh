#!/bin/sh
# test/unit/format_cli.sh: golden tests of ktrace-dump (run by build/format_cli).
#
# Traces come from build/ktgen (deterministic content).  Each case runs
# ktrace-dump inside a scratch folder (so file names in messages are short and
# stable) and compares stdout with test/golden/dump/<case>.out, stderr with
# <case>.err (empty when that file is absent) and the exit status with the
# expected one.  The time_ns of the writer's own COUNTERS/END records is real
# time: it is set to 0 in JSON output before comparing.
#
#   sh test/unit/format_cli.sh            compare (BUILD=build by default)
#   KT_UPDATE_GOLDEN=1 sh test/unit/format_cli.sh   rewrite the golden files
set -u
ROOT=$(pwd)
B=$ROOT/${BUILD:-build}
G=$ROOT/test/golden/dump
T=$(mktemp -d "${TMPDIR:-/tmp}/ktrace-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
ncase=0

cd "$T" || exit 1
"$B/ktgen" basic.ktrace || exit 1
"$B/ktgen" --scenario many --frame-bytes 4096 many.ktrace || exit 1
"$B/ktgen" --scenario order order.ktrace || exit 1
"$B/ktgen" --scenario order-filter order-filter.ktrace || exit 1
"$B/ktgen" --scenario graph graph.ktrace || exit 1
"$B/ktgen" --scenario threads threads.ktrace || exit 1
"$B/ktgen" --scenario ranges ranges.ktrace || exit 1
"$B/ktgen" --scenario gputimes gputimes.ktrace || exit 1
"$B/ktgen" --scenario sources sources.ktrace || exit 1
"$B/ktgen" --cut-at-flush 2 cut.ktrace || exit 1
"$B/ktgen" --major 2 v2.ktrace || exit 1
"$B/ktgen" --major 1 v1.ktrace || exit 1  # 1.0: regions without exactness
: >empty.ktrace
printf 'hello, this is not a trace\n' >garbage.ktrace
head -c 12 basic.ktrace >short.ktrace

normalise() {
	sed -E '/^\{"type":"(counters|end)"/ s/"time_ns":[0-9]+/"time_ns":0/'
}

# case NAME EXPECTED_STATUS ARGS...
case_() {
	name=$1
	want_rc=$2
	shift 2
	ncase=$((ncase + 1))
	"$B/ktrace-dump" "$@" >"$name.out.raw" 2>"$name.err"
	rc=$?
	normalise <"$name.out.raw" >"$name.out"
	if [ "${KT_UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$name.out" "$G/$name.out"
		if [ -s "$name.err" ]; then cp "$name.err" "$G/$name.err"; else rm -f "$G/$name.err"; fi
	fi
	ok=1
	if [ "$rc" != "$want_rc" ]; then
		echo "FAIL $name: exit status $rc, expected $want_rc"
		ok=0
	fi
	if ! cmp -s "$name.out" "$G/$name.out"; then
		echo "FAIL $name: stdout differs from $G/$name.out:"
		diff -u "$G/$name.out" "$name.out" | head -40
		ok=0
	fi
	if [ -f "$G/$name.err" ]; then
		if ! cmp -s "$name.err" "$G/$name.err"; then
			echo "FAIL $name: stderr differs from $G/$name.err:"
			diff -u "$G/$name.err" "$name.err" | head -20
			ok=0
		fi
	elif [ -s "$name.err" ]; then
		echo "FAIL $name: unexpected stderr:"
		head -5 "$name.err"
		ok=0
	fi
	if [ $ok = 1 ]; then echo "ok   $name"; else fail=1; fi
}

case_ basic-text 0 basic.ktrace
case_ basic-json 0 --json basic.ktrace
case_ kernel-filter 0 --kernel 'vecAdd|^triton_' basic.ktrace
case_ range 0 --range 3:6 basic.ktrace
case_ range-json 0 --json --range :1 basic.ktrace
case_ summary 0 --summary basic.ktrace
case_ order-text 0 order.ktrace
case_ order-json 0 --json order.ktrace
case_ order-filter-kernel 0 --kernel '^kern_a$' order-filter.ktrace
case_ order-filter-kernel-json 0 --json --kernel '^kern_a$' order-filter.ktrace
case_ order-filter-range 0 --range 1:3 order-filter.ktrace
case_ order-filter-both 0 --kernel '^kern_a$' --range 3:4 order-filter.ktrace
case_ graph-text 0 graph.ktrace
case_ graph-json 0 --json graph.ktrace
case_ graph-kernel-filter 0 --kernel vecAdd graph.ktrace
case_ gputimes-text 0 gputimes.ktrace
case_ gputimes-json 0 --json gputimes.ktrace
case_ gputimes-range 0 --range 1:5 gputimes.ktrace
case_ gputimes-group-stream 0 --group stream gputimes.ktrace
case_ threads-text 0 threads.ktrace
case_ threads-json 0 --json threads.ktrace
case_ threads-group-stream 0 --group stream threads.ktrace
case_ threads-group-kernel 0 --group kernel threads.ktrace
case_ ranges-text 0 ranges.ktrace
case_ ranges-json 0 --json ranges.ktrace
case_ ranges-filter 0 --nvtx 'aten::mm$|loading' ranges.ktrace
case_ ranges-filter-none 0 --nvtx 'no such range' ranges.ktrace
case_ many-summary 0 --summary many.ktrace
case_ many-summary-json 0 --json --summary many.ktrace
case_ sources-summary 0 --summary sources.ktrace
case_ sources-summary-json 0 --json --summary sources.ktrace
case_ many-filtered-summary 0 --summary --kernel reduce --range 100:200 many.ktrace
case_ truncated 2 cut.ktrace
case_ truncated-json 2 --json cut.ktrace
case_ two-files 2 basic.ktrace cut.ktrace
case_ newer-version 2 v2.ktrace
case_ older-minor 0 --range 0:1 v1.ktrace
case_ older-minor-json 0 --json --range 0:1 v1.ktrace
case_ empty 2 empty.ktrace
case_ garbage 2 garbage.ktrace
case_ short 2 short.ktrace
case_ missing 2 no-such.ktrace
case_ bad-option 2 --bogus basic.ktrace
case_ bad-range 2 --range 5:x basic.ktrace
case_ bad-regex 2 --kernel '(' basic.ktrace
case_ no-file 2
case_ missing-arg 2 basic.ktrace --kernel
case_ dashdash-value 2 --kernel -- basic.ktrace
case_ flag-value 2 --json=yes basic.ktrace
case_ empty-range 2 --range 5:5 basic.ktrace
case_ help 0 --help

# standard input gives the same as the file
ncase=$((ncase + 1))
"$B/ktrace-dump" - <basic.ktrace >stdin.out 2>stdin.err
if [ $? = 0 ] && cmp -s stdin.out "$G/basic-text.out" && [ ! -s stdin.err ]; then
	echo "ok   stdin"
else
	echo "FAIL stdin: output differs from basic-text"
	fail=1
fi

# every JSON line parses (when python3 is there)
if command -v python3 >/dev/null 2>&1; then
	ncase=$((ncase + 1))
	if cat basic-json.out many-summary-json.out sources-summary-json.out truncated-json.out range-json.out order-json.out threads-json.out |
		python3 -c 'import json, sys; [json.loads(l) for l in sys.stdin]'; then
		echo "ok   json-parses"
	else
		echo "FAIL json-parses"
		fail=1
	fi
fi

# never a crash on damaged files: every cut and a few thousand bit flips
ncase=$((ncase + 1))
size=$(wc -c <basic.ktrace)
bad=0
i=0
while [ $i -lt "$size" ]; do
	head -c $i basic.ktrace >cutx.ktrace
	"$B/ktrace-dump" cutx.ktrace >/dev/null 2>cutx.err
	rc=$?
	if [ $rc -ne 2 ] || [ "$(wc -l <cutx.err)" -lt 1 ]; then
		echo "FAIL cut at $i: exit $rc"
		bad=1
		break
	fi
	i=$((i + 7))
done
if [ $bad = 0 ]; then echo "ok   every-7th-cut"; else fail=1; fi

echo "$ncase cases"
if [ $fail != 0 ]; then
	echo "ktrace-dump golden tests FAILED (KT_UPDATE_GOLDEN=1 rewrites the golden files after review)"
	exit 1
fi
exit 0
