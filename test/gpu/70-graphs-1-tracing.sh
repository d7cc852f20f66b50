#!/usr/bin/env bash
# test/gpu/70-graphs-1-tracing.sh: every kernel of every CUDA graph replay
# traced, hashed and diffed, in five settings (test/gpu/graphs_lib.sh):
# stream capture and the explicit graph API (CUDA C, build/gpu/graph_*),
# torch.cuda.graph, torch.compile(mode="reduce-overhead"), a jitted JAX step
# with the default XLA flags (command buffers on).
#
# Coverage, hashing, transparency (each setting's deterministic variant, plus
# capture into an existing graph and a WHILE conditional node): the program
# runs twice without ktrace and once under LD_PRELOAD=libktrace.so with
# hashing on; test/gpu/workloads/graph_check.py coverage then requires
#   graphs-<s>-coverage      per kernel name, the LAUNCH records of the kernels
#                            that ran == the ground truth: the CUDA profiler
#                            (CUPTI kernel activity, node-level: torch.profiler,
#                            or jax.profiler without PyTorch) in the measured
#                            window of the traced process, or the CUDA C
#                            program's own counts over the whole run
#   graphs-<s>-hashed        those records come from graph launches and carry
#                            digests taken before and after each kernel
#   graphs-<s>-transparency  the program's output is bitwise the same
#   graphs-explicit-updates  the records carry the values of the node parameter
#                            update and the exec update
# Determinism: `ktrace check --json` on each setting with a planted
# non-deterministic kernel inside the graph (float atomics: --plant) and on
# its deterministic variant; graph_check.py verdict requires
#   graphs-verdict-<s>-plant the first divergence is the planted kernel,
#                            "inputs identical", from a graph launch; exit 1
#   graphs-verdict-<s>-det   exit 0, no divergence
# and BENCH lines with each check's wall time.  Also
#   graphs-torch_ro-allocator  reduce-overhead runs under the allocator that
#                            ktrace run/check ask PyTorch for (cudaMallocAsync),
#                            or, where PyTorch's graph trees cannot, the planted
#                            check (run without --keep-allocator) says so and
#                            goes on with the program's allocator; the
#                            deterministic check then uses --keep-allocator
#   graphs-memcheck          compute-sanitizer memcheck clean on the stream
#                            capture program under ktrace with hashing on
#   graphs-<s>-merged        (capture, explicit) KTRACE_HASH_MERGE=1 against =0:
#                            the same OUTPUT, every digest equal (ktrace-diff
#                            identical), fewer checksum nodes per hashed kernel
#                            node (docs/hashing.md "Hashing inside graphs")
# The settings run as parallel jobs (one Python process each at a time);
# ref_step.py --graphs is compiled meanwhile for 70-graphs-2-cost.sh.
# Environment: KT_GRAPHS_BUDGET_S (default KT_SCRIPT_TIMEOUT - 20): start
# nothing that could end later; KT_GRAPHS_KEEP=1 keeps the traces;
# KT_GRAPHS_MEMCHECK=0, KT_GRAPHS_WARM_REFSTEP=0 skip those parts.
# Logs: $KT_LOGS/graphs/.
set -u
cd "$(dirname "$0")/../.." || exit 1
. test/gpu/graphs_lib.sh
graphs_ready graphs-tracing "$lib" "$dump" "$kt" || exit 0
exec 3>&1 # RESULT and BENCH lines go straight out; each job's other lines to its log
budget=${KT_GRAPHS_BUDGET_S:-$((${KT_SCRIPT_TIMEOUT:-400} - 20))}
deadline=$(($(date +%s) + budget))
rm -f "$T"/*.done "$T"/*.failed "$T"/job-*.log

emit() { grep --line-buffered '^RESULT|\|^BENCH|' >&3; }
say() { echo "RESULT|$1|$2|$3" >&3; }

# limit WANTED: WANTED seconds, or what is left before the deadline (0: none).
limit() {
	local left=$((deadline - $(date +%s) - 10))
	if [ "$left" -lt 20 ]; then echo 0; elif [ "$left" -lt "$1" ]; then echo "$left"; else echo "$1"; fi
}

# bounded SECONDS CMD...: CMD under timeout, within the budget; 125 without running it
# when no time is left.
bounded() {
	local s
	s=$(limit "$1")
	shift
	[ "$s" = 0 ] && return 125
	timeout -k 5 "$s" "$@"
}

# cover NAME [GRAPH_CHECK_OPTION...]: two runs without ktrace, one traced with hashing on.
cover() {
	local name=$1 to py=0 o=$T/cov-$1 rc trace t0
	shift
	local prof=() cmd=()
	setting_is_python "$name" && { py=1; prof=(--profile); }
	mapfile -t cmd < <(setting_cmd "$name")
	[ $py = 1 ] || [ -x "${cmd[0]}" ] || { say "graphs-$name-coverage" SKIP "${cmd[0]} not built (make gpu)"; return 1; }
	t0=$(date +%s.%N)
	to=$(limit $((3 * $(setting_timeout "$name"))))
	[ "$to" = 0 ] && { say "graphs-$name-coverage" SKIP "time budget (KT_GRAPHS_BUDGET_S=$budget)"; return 1; }
	timeout -k 5 "$to" "${cmd[@]}" "${prof[@]}" >"$o.p1.out" 2>"$o.p1.err" </dev/null
	rc=$?
	if [ $rc = 4 ] || { [ $rc != 0 ] && [ -n "$(missing_framework "$o.p1.out" "$o.p1.err")" ]; }; then
		say "graphs-$name-coverage" SKIP "$(missing_framework "$o.p1.out" "$o.p1.err")"
		return 1
	fi
	cp "$o.p1.out" "$o.p1.err" "$L/" 2>/dev/null
	if [ $rc != 0 ]; then
		say "graphs-$name-run" FAIL "run without ktrace exited $rc: $(tail -n 3 "$o.p1.err" | tr '\n' ' ' | cut -c1-300)"
		return 1
	fi
	touch "$T/$name.warm.done"
	bounded "$(setting_timeout "$name")" "${cmd[@]}" >"$o.p2.out" 2>"$o.p2.err" </dev/null
	rm -f "$o"-*.ktrace
	KTRACE_OUTPUT="$o-%p.ktrace" KTRACE_HASH=1 LD_PRELOAD="$lib" \
		bounded "$(setting_timeout "$name")" "${cmd[@]}" "${prof[@]}" >"$o.kt.out" 2>"$o.kt.err" </dev/null
	rc=$?
	if [ $py = 1 ] && [ $rc != 0 ] && [ $rc != 125 ]; then
		# The profiler and ktrace in one process: should they not get along, the traced run
		# goes again without the profiler and the run without ktrace is the ground truth.
		say "graphs-$name-profiled" FAIL "traced run with the profiler exited $rc: $(tail -n 2 "$o.kt.err" | tr '\n' ' ' | cut -c1-200); again without it"
		cp "$o.kt.err" "$L/$name.kt-profiled.err" 2>/dev/null
		rm -f "$o"-*.ktrace
		KTRACE_OUTPUT="$o-%p.ktrace" KTRACE_HASH=1 LD_PRELOAD="$lib" \
			bounded "$(setting_timeout "$name")" "${cmd[@]}" >"$o.kt.out" 2>"$o.kt.err" </dev/null
		rc=$?
	fi
	[ $rc = 125 ] && { say "graphs-$name-coverage" SKIP "time budget (KT_GRAPHS_BUDGET_S=$budget)"; return 0; }
	cp "$o.kt.out" "$o.kt.err" "$L/" 2>/dev/null
	trace=$(ls -S "$T"/cov-"$name"-*.ktrace 2>/dev/null | head -n 1) # the largest: compile workers write traces too
	echo "$name: runs took $(elapsed "$t0") s; traced exit $rc, trace ${trace:-missing}"
	if [ $rc != 0 ] || [ -z "$trace" ]; then
		say "graphs-$name-run" FAIL "traced run exited $rc (trace ${trace:-missing}): $(tail -n 3 "$o.kt.err" | tr '\n' ' ' | cut -c1-300)"
		return 1
	fi
	if ! grep -q "tracing to .*(hashing on)" "$o.kt.err" || grep -q "hashing is off" "$o.kt.err"; then
		say "graphs-$name-run" FAIL "hashing was not on throughout: $(grep -m2 'ktrace' "$o.kt.err" | tr '\n' ' ' | cut -c1-200)"
	fi
	"$dump" --json "$trace" >"$o.jsonl" 2>"$o.dump.err" || echo "$name: ktrace-dump: $(head -c 300 "$o.dump.err")"
	"$dump" --summary "$trace" >"$L/$name.summary.txt" 2>&1
	python3 "$W/graph_check.py" coverage --name "$name" --traced "$o.kt.out" --plain "$o.p1.out" \
		--plain2 "$o.p2.out" --json "$o.jsonl" "$@" >"$L/$name.coverage.txt" 2>&1
	grep -v '^RESULT|' "$L/$name.coverage.txt"
	emit <"$L/$name.coverage.txt"
	grep -q "^RESULT|graphs-$name-coverage|" "$L/$name.coverage.txt" ||
		say "graphs-$name-coverage" FAIL "graph_check.py: $(tail -n 2 "$L/$name.coverage.txt" | tr '\n' ' ' | cut -c1-300)"
	echo "BENCH|graphs-$name-coverage-wall|$(elapsed "$t0")|s|two runs without ktrace, one traced with hashing on, the checks" >&3
	[ "${KT_GRAPHS_KEEP:-0}" = 1 ] || rm -f "$o"-*.ktrace
	rm -f "$o.jsonl"
	return 0
}

# verdict NAME det|plant [KTRACE_CHECK_OPTION...]: ktrace check on one variant.
verdict() {
	local name=$1 v=$2 mode=det runs=3 rc t0 to out
	shift 2
	local tag=graphs-verdict-$name-$v d=$T/check-$name-$v cmd=()
	[ "$v" = plant ] && mode=nondet
	setting_is_python "$name" && runs=2
	# shellcheck disable=SC2046 # no word, or --plant
	mapfile -t cmd < <(setting_cmd "$name" $([ "$v" = plant ] && echo --plant))
	to=$(limit $((2 * $(setting_timeout "$name") + 60)))
	[ "$to" = 0 ] && { say "$tag" SKIP "time budget (KT_GRAPHS_BUDGET_S=$budget)"; return; }
	rm -rf "$d"
	t0=$(date +%s.%N)
	timeout -k 10 "$to" "$kt" check --json --runs "$runs" --dir "$d" "$@" -- "${cmd[@]}" \
		>"$d.json" 2>"$d.log" </dev/null
	rc=$?
	cp "$d.json" "$d.log" "$L/" 2>/dev/null
	echo "$tag: ktrace check exit $rc in $(elapsed "$t0") s ($*)"
	tail -n 4 "$d.log"
	if [ -n "$(missing_framework "$d.log")" ] && [ $rc = 2 ]; then
		say "$tag" SKIP "$(missing_framework "$d.log")"
		return
	fi
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		say "$tag" FAIL "ktrace check timed out after $to s"
	else
		out=$(python3 "$W/graph_check.py" verdict "$mode" "$d.json" "$rc" "$d.log" "$(setting_culprit "$name")" \
			--trace-dir "$d" --dump "$dump" --require-graph 2>&1 | tail -n 1)
		case "$out" in
		PASS* | FAIL* | SKIP*) say "$tag" "${out%% *}" "${out#* }${*:+ (ktrace check $*)}" ;;
		*) say "$tag" FAIL "graph_check.py: $out" ;;
		esac
	fi
	echo "BENCH|$tag-wall|$(elapsed "$t0")|s|ktrace check --runs $runs${*:+ $*}, other jobs running" >&3
	[ "${KT_GRAPHS_KEEP:-0}" = 1 ] || rm -rf "$d"
}

# The allocator ktrace run/check set for PyTorch, on the reduce-overhead step (planted
# variant: this run also compiles it for its check).  Writes $T/ro-allocator.done: the
# option the torch_ro checks need ("--keep-allocator" when that allocator fails), and
# $T/ro-compiled.done when the run got through (compile caches warm).
ro_allocator() {
	local o=$T/ro-alloc rc opts="" cmd=()
	mapfile -t cmd < <(setting_cmd torch_ro --plant)
	PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync${PYTORCH_CUDA_ALLOC_CONF:+,$PYTORCH_CUDA_ALLOC_CONF} \
		bounded "$(setting_timeout torch_ro)" "${cmd[@]}" >"$o.out" 2>"$o.err" </dev/null
	rc=$?
	cp "$o.out" "$o.err" "$L/" 2>/dev/null
	if [ $rc = 125 ]; then
		say graphs-torch_ro-allocator SKIP "time budget (KT_GRAPHS_BUDGET_S=$budget)"
	elif [ $rc = 4 ]; then
		say graphs-torch_ro-allocator SKIP "$(missing_framework "$o.out" "$o.err")"
	elif [ $rc = 0 ]; then
		say graphs-torch_ro-allocator PASS "reduce-overhead runs with backend:cudaMallocAsync (what ktrace check sets)"
		touch "$T/ro-compiled.done"
	else
		# PyTorch's graph trees do not run under cudaMallocAsync: the planted
		# check meets that itself (ktrace check must fall back, see job_py_plant)
		grep -m1 -o '[A-Za-z]*Error: .*' "$o.err" | cut -c1-160 >"$T/ro-allocator.failed"
		opts="--keep-allocator"
	fi
	echo "$opts" >"$T/ro-allocator.done"
}

# When reduce-overhead fails under cudaMallocAsync (ro_allocator), the planted
# check ran without --keep-allocator: ktrace check must have said so and gone on
# with the program's own allocator.
ro_fallback() {
	local log=$T/check-torch_ro-plant.log
	[ -f "$T/ro-allocator.failed" ] || return 0
	if grep -q "running it again with its own allocator" "$log" 2>/dev/null; then
		say graphs-torch_ro-allocator PASS "reduce-overhead fails under backend:cudaMallocAsync ($(cat "$T/ro-allocator.failed")); ktrace check said so and went on with the program's allocator"
	else
		say graphs-torch_ro-allocator FAIL "reduce-overhead fails under backend:cudaMallocAsync ($(cat "$T/ro-allocator.failed")) and ktrace check did not say it fell back to the program's allocator"
	fi
}

# The option of ro_allocator (waits for it, at most 300 s).
ro_allocator_opts() {
	local _
	for _ in $(seq 1 300); do
		[ -f "$T/ro-allocator.done" ] && break
		sleep 1
	done
	cat "$T/ro-allocator.done" 2>/dev/null
}

memcheck() {
	[ "${KT_GRAPHS_MEMCHECK:-1}" = 1 ] || return
	command -v compute-sanitizer >/dev/null 2>&1 || { say graphs-memcheck SKIP "compute-sanitizer not found"; return; }
	[ -x "$B/gpu/graph_capture" ] || { say graphs-memcheck SKIP "$B/gpu/graph_capture not built (make gpu)"; return; }
	local o=$T/memcheck rc
	# shellcheck disable=SC2016 # expanded by the inner shell
	KTRACE_OUTPUT="$o-%p.ktrace" KTRACE_HASH=1 bounded 180 compute-sanitizer --tool memcheck \
		--print-limit 20 --error-exitcode 9 \
		sh -c 'LD_PRELOAD="$0${LD_PRELOAD:+:$LD_PRELOAD}" exec "$1" --replays 3' "$lib" "$B/gpu/graph_capture" \
		>"$L/memcheck.txt" 2>&1
	rc=$?
	tail -n 3 "$L/memcheck.txt"
	if [ $rc = 125 ]; then
		say graphs-memcheck SKIP "time budget (KT_GRAPHS_BUDGET_S=$budget)"
	elif [ $rc = 0 ] && grep -q "ERROR SUMMARY: 0 errors" "$L/memcheck.txt"; then
		say graphs-memcheck PASS "graph_capture --replays 3 under ktrace (hashing on): 0 errors"
	elif grep -q "ERROR SUMMARY: 0 errors" "$L/memcheck.txt"; then
		say graphs-memcheck FAIL "memcheck found no error but the run exited $rc: $(grep -v '^=====' "$L/memcheck.txt" | tail -n 2 | tr '\n' ' ' | cut -c1-200)"
	else
		say graphs-memcheck FAIL "exit $rc, $(grep -m1 'ERROR SUMMARY' "$L/memcheck.txt")$(grep -q 'ktrace_hash' "$L/memcheck.txt" && echo ', in ktrace_hash_*')"
	fi
	rm -f "$o"-*.ktrace
}

# counters_of TRACE NAME...: the named counters of its last COUNTERS record, joined by "/".
counters_of() {
	local trace=$1
	shift
	"$dump" --json "$trace" 2>/dev/null | python3 -c '
import json, sys
c = {}
for line in sys.stdin:
    if "\"counters\"" in line:
        r = json.loads(line)
        if r.get("type") == "counters" and isinstance(r.get("counters"), dict):
            c = r["counters"]
print("/".join(str(c.get(k, 0)) for k in sys.argv[1:]))' "$@"
}

# nodes_per_kernel TRACE: "graph_hash_nodes/graph_kernel_nodes_hashed" of its last COUNTERS record.
nodes_per_kernel() {
	counters_of "$1" graph_hash_nodes graph_kernel_nodes_hashed
}

# merged NAME: a CUDA C setting traced with KTRACE_HASH_MERGE=0 and =1 (merged checksum
# nodes in ktrace's copies of its graphs, docs/hashing.md "Hashing inside graphs"):
#   graphs-NAME-merged  the program's OUTPUT the same, ktrace-diff finds the two traces
#                       identical (every digest equal), and the merged copies hold
#                       fewer checksum nodes (counters graph_hash_nodes /
#                       graph_kernel_nodes_hashed, in the detail; with the regions
#                       merged checksum nodes read once, hash_pre_shared)
merged() {
	local name=$1 o=$T/merge-$1 m rc tag=graphs-$1-merged n0 n1 shared cmd=()
	mapfile -t cmd < <(setting_cmd "$name")
	[ -x "${cmd[0]}" ] || { say "$tag" SKIP "${cmd[0]} not built (make gpu)"; return; }
	rm -f "$o"-*.ktrace
	for m in 0 1; do
		KTRACE_OUTPUT="$o-$m.ktrace" KTRACE_HASH=1 KTRACE_HASH_MERGE=$m LD_PRELOAD="$lib" \
			bounded "$(setting_timeout "$name")" "${cmd[@]}" >"$o.$m.out" 2>"$o.$m.err" </dev/null
		rc=$?
		[ $rc = 125 ] && { say "$tag" SKIP "time budget (KT_GRAPHS_BUDGET_S=$budget)"; return; }
		cp "$o.$m.out" "$o.$m.err" "$L/" 2>/dev/null
		[ $rc = 0 ] || { say "$tag" FAIL "KTRACE_HASH_MERGE=$m: exit $rc: $(tail -n 2 "$o.$m.err" | tr '\n' ' ' | cut -c1-200)"; return; }
	done
	n0=$(nodes_per_kernel "$o-0.ktrace")
	n1=$(nodes_per_kernel "$o-1.ktrace")
	shared=$(counters_of "$o-1.ktrace" hash_pre_shared)
	"$B/ktrace-diff" "$o-0.ktrace" "$o-1.ktrace" >"$L/$name.merged.diff.txt" 2>&1
	rc=$?
	if [ "$(grep '^OUTPUT' "$o.0.out")" != "$(grep '^OUTPUT' "$o.1.out")" ]; then
		say "$tag" FAIL "the program's OUTPUT differs with KTRACE_HASH_MERGE=1"
	elif [ $rc != 0 ] || ! grep -q "result: identical" "$L/$name.merged.diff.txt"; then
		say "$tag" FAIL "ktrace-diff of the unmerged and merged traces (exit $rc): $(grep -m1 'result:' "$L/$name.merged.diff.txt" | cut -c1-200)"
	elif [ "${n1%/*}" -ge "${n0%/*}" ] || [ "${n0#*/}" = 0 ]; then
		say "$tag" FAIL "checksum nodes / hashed kernel nodes: $n0 unmerged, $n1 merged (fewer expected)"
	else
		say "$tag" PASS "same OUTPUT, ktrace-diff identical; checksum nodes / hashed kernel nodes $n0 unmerged, $n1 merged; regions read once $shared"
	fi
	[ "${KT_GRAPHS_KEEP:-0}" = 1 ] || rm -f "$o"-*.ktrace
}

job_c() {
	cover capture --whole-run
	cover capture_to_graph --whole-run
	cover explicit --whole-run --params
	cover conditional --whole-run --stated-limit 'kt_ge_loop_(body|cond)'
	merged capture
	merged explicit
	local s
	for s in capture explicit; do
		verdict "$s" det
		verdict "$s" plant
	done
	memcheck
}

job_py_det() { # NAME: coverage, then the deterministic variant's check on warm caches
	local opts="--no-warmup"
	cover "$1" || [ -f "$T/$1.warm.done" ] || opts=""
	[ "$1" = torch_ro ] && opts="$opts $(ro_allocator_opts)"
	[ "$1" = jax_step ] && opts="" # the warm-up fills the JAX compilation cache ktrace check sets
	# shellcheck disable=SC2086 # words of options
	verdict "$1" det $opts
}

job_py_plant() {
	local opts
	case $1 in
	torch_ro)
		ro_allocator
		opts=""
		[ -f "$T/ro-compiled.done" ] && opts="--no-warmup"
		# shellcheck disable=SC2086 # words of options
		verdict torch_ro plant $opts
		ro_fallback
		;;
	jax_step) verdict jax_step plant ;; # the warm-up fills the JAX compilation cache ktrace check sets
	*) verdict "$1" plant --no-warmup ;; # nothing to warm: eager PyTorch
	esac
}

job_refstep_warm() {
	[ "${KT_GRAPHS_WARM_REFSTEP:-1}" = 1 ] || return
	bounded 300 python3 "$W/ref_step.py" --graphs --steps 2 --warmup 3 \
		>"$T/refstep-warm.out" 2>"$T/refstep-warm.err" </dev/null &&
		touch "$T/refstep-warm.done"
	echo "ref_step --graphs compiled: $(tail -n 1 "$T/refstep-warm.out" "$T/refstep-warm.err" | tr '\n' ' ' | cut -c1-200)"
}

t_start=$(date +%s.%N)
echo "budget ${budget} s; jobs: CUDA C, and per Python setting one for the deterministic and one for the planted variant"
job_c >"$T/job-c.log" 2>&1 &
for s in torch_graph torch_ro jax_step; do
	job_py_det "$s" >"$T/job-$s-det.log" 2>&1 &
	job_py_plant "$s" >"$T/job-$s-plant.log" 2>&1 &
done
job_refstep_warm >"$T/job-refstep.log" 2>&1 &
wait
for f in "$T"/job-*.log; do
	echo "---- ${f##*/}"
	cat "$f"
	cp "$f" "$L/"
done
echo "BENCH|graphs-tracing-wall|$(elapsed "$t_start")|s|every setting's coverage and checks, parallel jobs"
exit 0
