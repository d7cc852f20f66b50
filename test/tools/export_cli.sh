#!/bin/sh
# test/tools/export_cli.sh: ktrace-export and ktrace-diff --perfetto (run by build/export_cli).
#
# Each timeline is checked by an independent reader, test/tools/check_trace_events.py:
# the trace-event format's JSON Schema (python3-jsonschema), the structural rules a
# viewer relies on (slices nest per track, flows pair up and bind to slices, tracks
# named), and, against `ktrace-dump --json` of the same trace, that every launch, copy
# and memset is on it with its kernel's name and its arguments' digests.  Traces: the
# generator's scenarios (build/ktgen) and the two runs of examples/traces/.
#
#   sh test/tools/export_cli.sh        (BUILD=build by default)
set -u
ROOT=$(pwd)
B=$ROOT/${BUILD:-build}
T=$(mktemp -d "${TMPDIR:-/tmp}/ktrace-export.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
ncase=0

# A python3 with the jsonschema package (Debian: python3-jsonschema, scripts/install-deps.sh).
PY=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import jsonschema' 2>/dev/null; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
	echo "export_cli: no python3 with the jsonschema package (install python3-jsonschema: sh scripts/install-deps.sh)"
	exit 1
fi
CHECK="$PY $ROOT/test/tools/check_trace_events.py"

ok() { ncase=$((ncase + 1)); echo "ok   $1"; }
bad() { ncase=$((ncase + 1)); fail=1; echo "FAIL $1"; [ -f "$T/out" ] && sed 's/^/     /' "$T/out"; }

# check NAME TRACE [checker options]: export TRACE and check the timeline against its dump.
check() {
	name=$1 trace=$2
	shift 2
	if "$B/ktrace-export" -q --perfetto "$trace" -o "$T/$name.json" >"$T/out" 2>&1 &&
		"$B/ktrace-dump" --json "$trace" >"$T/$name.jsonl" 2>>"$T/out" &&
		$CHECK --dump "$T/$name.jsonl" "$@" "$T/$name.json" >"$T/out" 2>&1; then
		ok "$name: $(sed 's/.*: ok: //' "$T/out")"
	else
		bad "$name"
	fi
}

# expect NAME STATUS COMMAND...: the exit status, and one line on stderr when it is 2.
expect() {
	name=$1 want=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		cat "$T/err" >>"$T/out"
		bad "$name (exit $rc, want $want)"
	elif [ "$want" -eq 2 ] && [ "$(wc -l <"$T/err")" -ne 1 ]; then
		cp "$T/err" "$T/out"
		bad "$name (stderr is not one line)"
	else
		ok "$name"
	fi
}

cd "$T" || exit 1
"$B/ktgen" basic.ktrace && "$B/ktgen" --scenario many --frame-bytes 4096 many.ktrace &&
	"$B/ktgen" --scenario order order.ktrace && "$B/ktgen" --cut-at-flush 2 cut.ktrace || exit 1

check basic basic.ktrace
check many many.ktrace
check order order.ktrace
"$B/ktgen" --scenario graph graph.ktrace && check graph graph.ktrace
"$B/ktgen" --scenario gputimes gputimes.ktrace && check gputimes gputimes.ktrace
"$B/ktgen" --scenario ranges ranges.ktrace && check ranges ranges.ktrace
check example "$ROOT/examples/traces/atomic_sum-run1.ktrace"

# A trace the library wrote: 8 threads launching on their per-thread default streams
# (build/interpose_app under the fake driver): a host track and a stream track per thread.
# (The sanitizer build's app and library need these ASan settings, as in interpose_intercept_test.c.)
if ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0:handle_segv=0:handle_abort=0:allow_user_segv_handler=1 \
	LD_PRELOAD="$B/libktrace.so" LD_LIBRARY_PATH="$B/fakecuda" KTRACE_OUTPUT="$T/threads.ktrace" KTRACE_QUIET=1 \
	"$B/interpose_app" threads 50 >/dev/null 2>&1; then
	check threads threads.ktrace
	n=$($PY -c 'import json, sys
names = [e["args"]["name"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"]
print(sum(n.startswith("per-thread stream") for n in names), sum(n.startswith("thread ") for n in names))' threads.json)
	[ "$n" = "8 8" ] && ok "threads: 8 per-thread streams, 8 host threads" || bad "threads: per-thread streams and host threads: $n"
else
	bad "threads: interpose_app under the fake driver wrote no trace"
fi

# The divergence view: run A's timeline with every divergent launch marked and the
# first highlighted; what to expect comes from ktrace-diff --json.
A=$ROOT/examples/traces/atomic_sum-run1.ktrace
Bt=$ROOT/examples/traces/atomic_sum-run2.ktrace
"$B/ktrace-diff" --json "$A" "$Bt" >diff.json
"$B/ktrace-diff" --perfetto diverged.json "$A" "$Bt" >/dev/null
rc=$?
first=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["divergences"][0]["kernel"])' diff.json)
n=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["launches"]["diverged"])' diff.json)
"$B/ktrace-dump" --json "$A" >a.jsonl
if [ "$rc" -eq 1 ] && $CHECK --dump a.jsonl --first-divergence "$first" --marks "$n" diverged.json >"$T/out" 2>&1; then
	ok "diff --perfetto: first divergence on $first, $n marked"
else
	bad "diff --perfetto (ktrace-diff exit $rc)"
fi
"$B/ktrace-diff" --perfetto same.json "$A" "$A" >/dev/null
if $CHECK --marks 0 same.json >"$T/out" 2>&1; then ok "diff --perfetto, no divergence: nothing marked"; else bad "diff --perfetto, identical runs"; fi

# The front end, the default output name, truncated traces, mistakes.
cp many.ktrace named.ktrace
expect "ktrace export (front end), default output name" 0 "$B/ktrace" export --perfetto named.ktrace
[ -s named.json ] && ok "named.ktrace -> named.json" || bad "named.ktrace -> named.json"
expect "truncated trace refused" 2 "$B/ktrace-export" cut.ktrace -o cut.json
expect "truncated trace with --partial" 0 "$B/ktrace-export" --partial -q cut.ktrace -o cut.json
$CHECK cut.json >"$T/out" 2>&1 && ok "truncated trace's timeline" || bad "truncated trace's timeline"
expect "missing trace" 2 "$B/ktrace-export" nosuch.ktrace -o x.json
expect "no trace" 2 "$B/ktrace-export" -o x.json
expect "two traces" 2 "$B/ktrace-export" many.ktrace basic.ktrace
expect "bad option" 2 "$B/ktrace-export" --bogus many.ktrace
expect "unwritable output" 2 "$B/ktrace-export" many.ktrace -o /nonexistent/dir/x.json
expect "diff --perfetto unwritable" 2 "$B/ktrace-diff" --perfetto /nonexistent/dir/x.json "$A" "$Bt"
"$B/ktrace-export" -q many.ktrace -o - >stdout.json && $CHECK stdout.json >"$T/out" 2>&1 &&
	ok "-o - writes standard output" || bad "-o - writes standard output"
# a trace read from standard input goes to standard output unless -o names a file
rm -f ./-.json
"$B/ktrace-export" - <many.ktrace >stdin.json && $CHECK stdin.json >"$T/out" 2>&1 && [ ! -e ./-.json ] &&
	ok "- (standard input) writes standard output" || bad "- (standard input) writes standard output"

# Measured GPU times: the layout of scenario gputimes, slice by slice (ts, dur, gpu_time).
$PY - gputimes.json >"$T/out" 2>&1 <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
got = [(e["args"]["op_seq"], e["cat"], e["ts"], e["dur"], e["args"]["gpu_time"]) for e in ev
       if e["ph"] == "X" and e["cat"] != "cuda_api"]
want = [(0, "kernel", 2.0, 1.0, "unmeasured"), (1, "kernel", 4.0, 10.0, "measured"),
        (2, "kernel", 14.0, 0.75, "unmeasured"), (3, "kernel", 14.75, 0.75, "unmeasured"),
        (4, "kernel", 15.5, 10.0, "measured"), (5, "graph_launch", 26.0, 4.0, "measured"),
        (5, "kernel", 26.0, 1.0, "graph_launch_measured"), (6, "memcpy", 27.0, 1.0, "graph_launch_measured"),
        (7, "memset", 28.0, 1.0, "graph_launch_measured"), (8, "kernel", 30.0, 1.0, "unmeasured")]
if got != want:
    sys.exit("layout %s, want %s" % (got, want))
PYEOF
[ $? -eq 0 ] && ok "gputimes: measured at their times, unmeasured squeezed between, graph nodes inside their launch" ||
	bad "gputimes: layout"

# NVTX ranges: scenario ranges' range slices on the thread's track, in order (name, ts, dur);
# its launch in XLA's ranges is a graph node made in them (format 1.11): no slice for those.
$PY - ranges.json >"$T/out" 2>&1 <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
got = [(e["name"][:30], e["ts"], e["dur"]) for e in ev if e["ph"] == "X" and e["cat"] == "nvtx"]
want = [("train_step", 3.0, 9.0), ("aten::linear", 6.0, 1.0), ("aten::addmm", 6.0, 1.0),
        ("autograd::engine::evaluate_fun", 11.0, 1.0), ("AddmmBackward0", 11.0, 1.0), ("aten::mm", 11.0, 1.0),
        ("loading", 17.0, 1.0)]
if got != want:
    sys.exit("range slices %s, want %s" % (got, want))
PYEOF
[ $? -eq 0 ] && ok "ranges: each range from its first call to its last, nested on the thread's track" ||
	bad "ranges: range slices"

# NVTX ranges of real programs (build/nvtx_app under the library and the fake driver): two
# threads with nested, wide, domain and start/end ranges; PyTorch-like op ranges; ranges
# closed out of order; a graph launched inside a range.
for mode in threads torch order graph; do
	if ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0:handle_segv=0:handle_abort=0:allow_user_segv_handler=1 \
		LD_PRELOAD="$B/libktrace.so" LD_LIBRARY_PATH="$B/fakecuda" KTRACE_OUTPUT="$T/nvtx-$mode.ktrace" \
		KTRACE_QUIET=1 "$B/nvtx_app" $mode >/dev/null 2>&1; then
		check "nvtx_app $mode" "nvtx-$mode.ktrace"
	else
		bad "nvtx_app $mode under the fake driver wrote no trace"
	fi
done

# The checker catches what it checks: broken copies of a good timeline must fail.
"$B/ktrace-dump" --json ranges.ktrace >ranges-dump.jsonl
for breakage in range_missing range_renamed range_short; do
	$PY - ranges.json "broken-$breakage.json" "$breakage" <<'PYEOF'
import json, sys
doc = json.load(open(sys.argv[1]))
rs = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "nvtx"]
what = sys.argv[3]
if what == "range_missing":
    doc["traceEvents"].remove(rs[2])
elif what == "range_renamed":
    rs[1]["name"] = "aten::other"
elif what == "range_short":
    rs[0]["dur"] = 1.0
json.dump(doc, open(sys.argv[2], "w"))
PYEOF
	if $CHECK --dump ranges-dump.jsonl "broken-$breakage.json" >"$T/out" 2>&1; then
		bad "checker misses: $breakage"
	else
		ok "checker catches: $breakage"
	fi
done
"$B/ktrace-dump" --json gputimes.ktrace >gputimes-dump.jsonl
for breakage in moved_measured unmeasured_said_measured node_outside; do
	$PY - gputimes.json "broken-$breakage.json" "$breakage" <<'PYEOF'
import json, sys
doc = json.load(open(sys.argv[1]))
xs = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] != "cuda_api"]
what = sys.argv[3]
if what == "moved_measured":
    next(e for e in xs if e["args"]["gpu_time"] == "measured" and e["cat"] == "kernel")["ts"] += 3.0
elif what == "unmeasured_said_measured":
    next(e for e in xs if e["args"]["gpu_time"] == "unmeasured")["args"]["gpu_time"] = "measured"
elif what == "node_outside":
    next(e for e in xs if e["args"]["gpu_time"] == "graph_launch_measured" and e["cat"] == "memset")["ts"] += 5.0
json.dump(doc, open(sys.argv[2], "w"))
PYEOF
	if $CHECK --dump gputimes-dump.jsonl "broken-$breakage.json" >"$T/out" 2>&1; then
		bad "checker misses: $breakage"
	else
		ok "checker catches: $breakage"
	fi
done
for breakage in overlap unpaired_flow no_dur unnamed_track backwards; do
	$PY - many.json "broken-$breakage.json" "$breakage" <<'PYEOF'
import json, sys
doc = json.load(open(sys.argv[1]))
ev, what = doc["traceEvents"], sys.argv[3]
xs = [e for e in ev if e["ph"] == "X" and e["cat"] == "kernel"]
if what == "overlap":
    xs[1]["ts"] = xs[0]["ts"] + xs[0]["dur"] / 2
    xs[1]["tid"] = xs[0]["tid"]
elif what == "unpaired_flow":
    ev.remove(next(e for e in ev if e["ph"] == "f"))
elif what == "no_dur":
    del xs[0]["dur"]
elif what == "unnamed_track":
    doc["traceEvents"] = [e for e in ev if not (e["ph"] == "M" and e["name"] == "thread_name")]
elif what == "backwards":
    xs[3]["ts"], xs[5]["ts"] = xs[5]["ts"], xs[3]["ts"]
json.dump(doc, open(sys.argv[2], "w"))
PYEOF
	if $CHECK "broken-$breakage.json" >"$T/out" 2>&1; then bad "checker misses: $breakage"; else ok "checker catches: $breakage"; fi
done

echo "$ncase export cases, $([ $fail -eq 0 ] && echo all passed || echo some FAILED)"
exit $fail
