# test/gpu/reliability_lib.sh: shared part of the 50-reliability-transparency*.sh
# scripts (sourced, not run by run.sh): setup, and check NAME TIMEOUT SCRIPT
# ARGS... which runs a program twice without ktrace and once under
# LD_PRELOAD=libktrace.so with hashing on and compares the printed results.
B=${KT_BUILD:-$PWD/build}
T=${KT_TMP:-$(mktemp -d)}/transparency
L=${KT_LOGS:-$T}/transparency
W=$PWD/test/gpu/workloads
mkdir -p "$T" "$L"
lib=$B/libktrace.so
dump=$B/ktrace-dump

result() { echo "RESULT|transparency-$1|$2|$3"; }

# rel_ready GROUP: 0 when a GPU and the build are there, else prints SKIP.
rel_ready() {
	if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
		result "$1" SKIP "no GPU"
		return 1
	fi
	for f in "$lib" "$dump"; do
		[ -f "$f" ] || { result "$1" SKIP "$f not built (make gpu)"; return 1; }
	done
	return 0
}
export TRITON_CACHE_DIR=$T/triton-cache TORCHINDUCTOR_CACHE_DIR=$T/inductor-cache
export PYTHONDONTWRITEBYTECODE=1 CUBLAS_WORKSPACE_CONFIG=:4096:8

# The result line of a run's stdout: ref_step's checksum or a workload's OUTPUT.
digest() {
	grep -o 'checksum=[0-9a-f]*' "$1" | tail -n 1
	awk '$1=="OUTPUT"{print $2}' "$1" | tail -n 1
}

# check NAME TIMEOUT SCRIPT ARGS...
check() {
	local name=$1 to=$2
	shift 2
	local rc1 rc2 rc3 d1 d2 d3 trace
	timeout "$to" python3 "$@" >"$T/$name.p1.out" 2>"$T/$name.p1.err"
	rc1=$?
	if grep -q "ModuleNotFoundError\|ImportError" "$T/$name.p1.err"; then
		result "$name" SKIP "$(grep -m1 "ModuleNotFoundError\|ImportError" "$T/$name.p1.err" | cut -c1-160)"
		return
	fi
	timeout "$to" python3 "$@" >"$T/$name.p2.out" 2>"$T/$name.p2.err"
	rc2=$?
	rm -f "$T/$name"-*.ktrace
	KTRACE_OUTPUT="$T/$name-%p.ktrace" KTRACE_HASH=1 LD_PRELOAD="$lib" \
		timeout "$to" python3 "$@" >"$T/$name.kt.out" 2>"$T/$name.kt.err"
	rc3=$?
	cp "$T/$name".*.out "$T/$name.kt.err" "$L/" 2>/dev/null
	d1=$(digest "$T/$name.p1.out")
	d2=$(digest "$T/$name.p2.out")
	d3=$(digest "$T/$name.kt.out")
	echo "$name: plain $rc1 $d1 | plain $rc2 $d2 | traced $rc3 $d3"
	if [ $rc1 != 0 ] || [ $rc2 != 0 ] || [ -z "$d1" ]; then
		result "$name" FAIL "run without ktrace failed (exit $rc1/$rc2): $(tail -n 2 "$T/$name.p1.err" | tr '\n' ' ' | cut -c1-200)"
		return
	fi
	if [ "$d1" != "$d2" ]; then
		result "$name" SKIP "not deterministic without ktrace ($d1 vs $d2): nothing to compare"
		return
	fi
	if [ $rc3 != 0 ]; then
		result "$name" FAIL "traced run exited $rc3: $(tail -n 3 "$T/$name.kt.err" | tr '\n' ' ' | cut -c1-300)"
		return
	fi
	if [ "$d3" != "$d1" ]; then
		result "$name" FAIL "result differs under ktrace (hashing on): $d3 vs $d1"
		return
	fi
	local starts
	starts=$(grep -c "tracing to .*(hashing on)" "$T/$name.kt.err")
	trace=$(ls "$T/$name"-*.ktrace 2>/dev/null | head -n 1)
	if grep -q "hashing is off" "$T/$name.kt.err"; then
		result "$name" FAIL "hashing turned itself off: $(grep -m1 'hashing is off' "$T/$name.kt.err" | cut -c1-200)"
		return
	fi
	if [ "$starts" -lt 1 ] || [ -z "$trace" ]; then
		result "$name" FAIL "no 'tracing to ... (hashing on)' line or no trace: $(head -c 300 "$T/$name.kt.err")"
		return
	fi
	if ! "$dump" --summary "$trace" >"$L/$name.summary.txt" 2>"$T/$name.dump.err"; then
		result "$name" FAIL "ktrace-dump: $(head -c 200 "$T/$name.dump.err")"
		return
	fi
	local launches
	launches=$(grep -m1 -o '[0-9]* launches' "$L/$name.summary.txt" | head -n 1)
	result "$name" PASS "bitwise identical with hashing on ($d1); trace: ${launches:-see summary}; $(grep -c . "$T/$name.kt.err") stderr line(s)"
	rm -f "$T/$name"-*.ktrace
}

