#!/usr/bin/env bash
# test/gpu/60-verdict-suite.sh: ktrace check's verdict against ground truth.
#
# On the programs of test/gpu/workloads/verdict_programs.py (small PyTorch,
# Triton, torch.compile, JAX and CuPy programs: non-deterministic ones with a
# known culprit kernel, and deterministic controls; `--list` lists them):
#   1. ground truth from bare runs: each program 3 times in one process
#      (`--truth`, fresh inputs from a fixed seed each time; all in-process
#      programs share one process), or once in each of 3 processes
#      (`--truth-procs`) for programs whose outputs may depend on the process
#      (XLA autotunes per process); outputs bitwise identical or not
#   2. `ktrace check --json --runs 2` on each program, KT_VERDICT_JOBS at once,
#      each under a timeout, classified by verdict_report.py: right kernel,
#      wrong kernel, false divergence, missed divergence, correct pass, error
#   3. RESULT|verdict-<program>|PASS|FAIL|SKIP|..., the confusion table, and
#        verdict-no-false-divergence  no deterministic program diverged
#        verdict-right-kernel         >= 95% of the non-deterministic programs
#                                     (expected misses aside) name the culprit
#      and BENCH lines: each program's ktrace check wall time.
# docs/verdicts.md explains the table and the misses no design could avoid.
# Logs, JSON reports and the tables (verdict/table.md) go to $KT_LOGS/verdict.
#
# Settings (environment):
#   KT_VERDICT_ONLY=REGEX     only the programs whose name matches (awk ERE)
#   KT_VERDICT_JOBS=N         ktrace checks at once (default 6)
#   KT_VERDICT_RUNS=N         ktrace check --runs (default 2)
#   KT_VERDICT_TIMEOUT=S      timeout of each check (default: the program's, 60 or 90 s)
#   KT_VERDICT_BUDGET_S=S     start no check that could end later than S s after
#                             the start (default KT_SCRIPT_TIMEOUT - 30: run.sh's limit)
#   KT_VERDICT_SKIP_TRUTH=1   reuse the ground truth of an earlier run (the
#                             truth-*.txt in KT_VERDICT_TRUTH_FROM, default
#                             $KT_LOGS/verdict); computed when there is none
#   KT_VERDICT_WARMUP=1       keep ktrace check's untraced warm-up run (by default
#                             --no-warmup when the ground truth ran in this call:
#                             it warmed the same compile caches first; JAX programs
#                             always warm up: their cache is ktrace check's own)
#   KT_VERDICT_CHECK_ARGS=..  more ktrace check options (e.g. --max-replays 1)
#   KT_VERDICT_KEEP=1         keep the traces (in $KT_TMP/verdict)
#   KT_VERDICT_DEBUGMODE=1    PyTorch DebugMode's verdict on the PyTorch programs too
#   KT_VERDICT_HASH_VERIFY=1  the checks' traced runs with KTRACE_HASH_VERIFY=1: every
#                             carried pre-digest and skipped read-only post-hash
#                             measured too (docs/hashing.md); RESULT
#                             verdict-carry-verify requires no mismatch in any trace
set -u
B=${KT_BUILD:-$PWD/build}
R=${KT_ROOT:-$PWD}
T=${KT_TMP:-$(mktemp -d)}
L=${KT_LOGS:-$T}
k=$B/ktrace
progs=$R/test/gpu/workloads/verdict_programs.py
report=$R/test/gpu/workloads/verdict_report.py
V=$L/verdict
TV=$T/verdict
jobs_max=${KT_VERDICT_JOBS:-6}
runs=${KT_VERDICT_RUNS:-2}
budget=${KT_VERDICT_BUDGET_S:-$((${KT_SCRIPT_TIMEOUT:-400} - 30))}
t_start=$(date +%s)
deadline=$((t_start + budget))

result() { echo "RESULT|$1|$2|$3"; }
skip_all() {
	result verdict-suite SKIP "$1"
	exit 0
}
seconds_left() { echo $((deadline - $(date +%s))); }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	skip_all "no GPU"
fi
for f in "$k" "$B/libktrace.so"; do
	[ -f "$f" ] || skip_all "$f not built (make)"
done
command -v python3 >/dev/null 2>&1 || skip_all "python3 missing"
export PYTHONHASHSEED=0

# ---- the programs, and an earlier ground truth to reuse ------------------------------------------
saved=$T/verdict-truth-saved
rm -rf "$saved" "$TV"
mkdir -p "$saved" "$TV"
if [ "${KT_VERDICT_SKIP_TRUTH:-0}" = 1 ]; then
	cp "${KT_VERDICT_TRUTH_FROM:-$V}"/truth-*.txt "$saved"/ 2>/dev/null
fi
rm -rf "$V"
mkdir -p "$V"
python3 "$progs" --list >"$V/list-all.tsv" 2>"$V/list.log" ||
	skip_all "verdict_programs.py --list failed: $(tail -n 1 "$V/list.log")"
awk -F'\t' -v re="${KT_VERDICT_ONLY:-}" 're == "" || $1 ~ re' "$V/list-all.tsv" >"$V/list.tsv"
[ -s "$V/list.tsv" ] || skip_all "no program matches KT_VERDICT_ONLY=${KT_VERDICT_ONLY:-}"
echo "programs: $(wc -l <"$V/list.tsv") ($(awk -F'\t' '$2 == "nondet"' "$V/list.tsv" | wc -l) non-deterministic)"

# ---- 1. ground truth (in the background: the checks that need no warm cache start meanwhile) ------
inproc_pid=
truth_ran=0
if ls "$saved"/truth-*.txt >/dev/null 2>&1; then
	cp "$saved"/truth-*.txt "$V"/
	echo "ground truth: reused $(cd "$saved" && echo truth-*.txt)"
else
	truth_ran=1
	inproc=$(awk -F'\t' '$5 == "inproc" && $9 == "yes" {print $1}' "$V/list.tsv")
	if [ -n "$inproc" ]; then
		to=$(seconds_left)
		[ "$to" -gt 300 ] && to=300
		[ "$to" -lt 30 ] && to=30
		(
			s=$(date +%s)
			# shellcheck disable=SC2086 # one word per program name
			timeout -k 10 "$to" python3 "$progs" --truth $inproc >"$V/truth-inproc.txt" 2>"$V/truth-inproc.log" </dev/null
			echo $(($(date +%s) - s)) >"$V/truth-inproc.wall"
		) &
		inproc_pid=$!
	fi
	# one word per group; a for loop (not a pipe) so that the final wait waits for them
	# shellcheck disable=SC2013
	for g in $(awk -F'\t' '$5 == "procs" && $9 == "yes" {print $4}' "$V/list.tsv" | sort -u); do
		names=$(awk -F'\t' -v g="$g" '$5 == "procs" && $9 == "yes" && $4 == g {print $1}' "$V/list.tsv")
		(
			for i in 1 2 3; do
				# shellcheck disable=SC2086
				timeout -k 10 90 python3 "$progs" --truth-procs $names >"$V/truth-procs-$g.$i.out" \
					2>>"$V/truth-procs-$g.log" </dev/null
			done
			python3 "$report" truth-merge "$V/truth-procs-$g".1.out "$V/truth-procs-$g".2.out \
				"$V/truth-procs-$g".3.out >"$V/truth-$g.txt"
		) &
	done
fi

if [ "${KT_VERDICT_DEBUGMODE:-0}" = 1 ]; then
	dm_names=$(awk -F'\t' '$7 ~ /(^|,)debugmode(,|$)/ && $9 == "yes" {print $1}' "$V/list.tsv")
	to=$(seconds_left)
	[ "$to" -gt 300 ] && to=300
	if [ -n "$dm_names" ] && [ "$to" -gt 30 ]; then
		# shellcheck disable=SC2086
		timeout -k 10 "$to" python3 "$progs" --debugmode $dm_names >"$V/debugmode.txt" 2>"$V/debugmode.log" </dev/null &
	fi
fi

# ---- 2. ktrace check on each program ------------------------------------------------------------
warm_args=()
if [ "${KT_VERDICT_WARMUP:-0}" != 1 ] && [ "$truth_ran" = 1 ] && "$k" check --help 2>&1 | grep -q -- '--no-warmup'; then
	warm_args=(--no-warmup)
	echo "ktrace check --no-warmup: the ground truth ran first and warmed the compile caches"
fi
read -r -a extra_args <<<"${KT_VERDICT_CHECK_ARGS:-}"
setup="ktrace check --runs $runs${warm_args[*]:+ ${warm_args[*]}}${KT_VERDICT_CHECK_ARGS:+ $KT_VERDICT_CHECK_ARGS}, $jobs_max at once"
echo "setup: $setup; budget ${budget} s"

# Carried pre-digests that differ from the measured ones, and read-only inputs
# whose measured post-digest differs from the pre-digest, over the traces in DIR
# (KTRACE_HASH_VERIFY=1's counters), and the traces read: "MISMATCHES TRACES".
carry_mismatches() {
	local n=0 t=0 f m c j
	while IFS= read -r f; do
		j=$("$B/ktrace-dump" --json "$f" 2>/dev/null)
		for c in hash_carry_mismatches hash_readonly_mismatches; do
			m=$(grep -o "\"$c\":[0-9]*" <<<"$j" | tail -1)
			m=${m##*:}
			n=$((n + ${m:-0}))
		done
		t=$((t + 1))
	done < <(find "$1" -name '*.ktrace' 2>/dev/null)
	echo "$n $t"
}
[ "${KT_VERDICT_HASH_VERIFY:-0}" = 1 ] && export KTRACE_HASH_VERIFY=1

check_one() { # NAME TIMEOUT KIND
	local name=$1 to=$2 d=$V/$1 t0 t1 rc warm=("${warm_args[@]+"${warm_args[@]}"}")
	# JAX keeps no compilation cache of its own: ktrace check's warm-up fills the one it
	# gives JAX, so that both traced runs load the same autotuned kernels
	[ "$3" = jax ] && warm=()
	t0=$(date +%s.%N)
	timeout -k 10 "$to" "$k" check --json --runs "$runs" ${warm[@]+"${warm[@]}"} \
		${extra_args[@]+"${extra_args[@]}"} --dir "$TV/$name" -- python3 "$progs" "$name" \
		>"$d/json" 2>"$d/log" </dev/null
	rc=$?
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }' >"$d/wall"
	[ "${KT_VERDICT_HASH_VERIFY:-0}" = 1 ] && carry_mismatches "$TV/$name" >"$d/carry_mismatches"
	[ "${KT_VERDICT_KEEP:-0}" = 1 ] || rm -rf "${TV:?}/$name"
	echo "$rc" >"$d/rc"
	echo "verdict: $name: ktrace check exit $rc in $(cat "$d/wall") s"
}

launched=()
running_checks() {
	local n=0 x
	for x in ${launched[@]+"${launched[@]}"}; do
		[ -f "$V/$x/rc" ] || n=$((n + 1))
	done
	echo "$n"
}

# Programs whose compile caches (Triton, Inductor, CuPy) the in-process truth warms go last.
warm_kinds='^(triton|compile|cupy)$'
{
	awk -F'\t' -v w="$warm_kinds" '$3 !~ w' "$V/list.tsv"
	awk -F'\t' -v w="$warm_kinds" '$3 ~ w' "$V/list.tsv"
} >"$V/queue.tsv"
while IFS=$'\t' read -r name _ kind _ _ _ _ ptimeout avail _; do
	d=$V/$name
	mkdir -p "$d"
	case $avail in
	yes) ;;
	*)
		echo "framework unavailable ($avail)" >"$d/skipped"
		continue
		;;
	esac
	to=${KT_VERDICT_TIMEOUT:-$ptimeout}
	if [ -n "$inproc_pid" ] && [[ $kind =~ $warm_kinds ]]; then
		wait "$inproc_pid" 2>/dev/null
		inproc_pid=
	fi
	while [ "$(running_checks)" -ge "$jobs_max" ]; do sleep 1; done
	if [ "$(seconds_left)" -lt $((to + 10)) ]; then
		echo "time budget: not started (KT_VERDICT_BUDGET_S=$budget)" >"$d/skipped"
		continue
	fi
	check_one "$name" "$to" "$kind" &
	launched+=("$name")
done <"$V/queue.tsv"
wait

# ---- 3. the verdicts ----------------------------------------------------------------------------
rargs=(report --list "$V/list.tsv" --results "$V" --markdown "$V/table.md" --setup "$setup")
for f in "$V"/truth-*.txt; do
	[ -f "$f" ] && rargs+=(--truth "$f")
done
[ -f "$V/debugmode.txt" ] && rargs+=(--debugmode "$V/debugmode.txt")
python3 "$report" "${rargs[@]}" || result verdict-suite FAIL "verdict_report.py failed (see the log)"
[ -f "$V/truth-inproc.wall" ] &&
	echo "BENCH|verdict-truth-wall|$(cat "$V/truth-inproc.wall")|s|ground truth, the in-process programs (3 runs each, one process)"
echo "BENCH|verdict-suite-wall|$(($(date +%s) - t_start))|s|ground truth and every check ($setup)"
if [ "${KT_VERDICT_HASH_VERIFY:-0}" = 1 ]; then
	bad=0 traces=0
	for f in "$V"/*/carry_mismatches; do
		[ -f "$f" ] || continue
		read -r m t <"$f"
		bad=$((bad + m)) traces=$((traces + t))
		[ "$m" = 0 ] || echo "carry-verify: $(basename "$(dirname "$f")"): $m carried or read-only digests differ"
	done
	if [ "$traces" = 0 ]; then
		result verdict-carry-verify SKIP "no trace read (ktrace-dump missing?)"
	elif [ "$bad" = 0 ]; then
		result verdict-carry-verify PASS "no carried pre-digest or read-only post-digest differs from the measured one in $traces traces"
	else
		result verdict-carry-verify FAIL "$bad carried pre-digests or read-only post-digests differ from the measured ones in $traces traces"
	fi
fi
echo "tables: $V/table.md"
exit 0
