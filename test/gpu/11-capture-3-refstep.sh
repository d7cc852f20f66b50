#!/usr/bin/env bash
# test/gpu/11-capture-3-refstep.sh: ktrace's overhead on the reference
# training step (test/gpu/workloads/ref_step.py, a copy of
# ../shared/bench/ref_step.py): eager and --compile, without and with
# LD_PRELOAD=build/libktrace.so in metadata mode (KTRACE_HASH=0).
#   BENCH  capture-refstep-<mode>-overhead  (traced / plain - 1) in %, median ms/step
#   RESULT capture-refstep-<mode>           checksum identical, overhead <= 3 %
set -u
cd "$(dirname "$0")/../.."
B=${KT_BUILD:-$PWD/build}
T=${KT_TMP:-$(mktemp -d)}/refstep
mkdir -p "$T"
REF=${KT_REF_STEP:-$PWD/test/gpu/workloads/ref_step.py}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "RESULT|capture-refstep|SKIP|no GPU"
	exit 0
fi
[ -f "$B/libktrace.so" ] || { echo "RESULT|capture-refstep|SKIP|libktrace.so not built"; exit 0; }
export TORCHINDUCTOR_CACHE_DIR=$T/inductor-cache TRITON_CACHE_DIR=$T/triton-cache

ms() { sed -n 's/.*ms_per_step=\([0-9.]*\).*/\1/p' "$1"; }
sum() { sed -n 's/.*checksum=\([0-9a-f]*\).*/\1/p' "$1"; }

# Extra configurations to compare in eager mode (experiments):
# KT_REFSTEP_EXTRA="name=path/libktrace.so[,VAR=VALUE] ..."
extra=${KT_REFSTEP_EXTRA:-}

for mode in eager compile; do
	flag=
	[ $mode = compile ] && flag=--compile
	# eager: plain, traced (and extras) interleaved, 3 rounds; compile: one
	# round (the plain run also fills the compiler caches; compilation
	# happens in the warm-up steps, outside the timing).
	reps=3
	[ $mode = compile ] && reps=1
	for r in $(seq $reps); do
		timeout 150 python3 "$REF" $flag --steps 30 >"$T/$mode.plain.$r" 2>"$T/$mode.plain.err.$r"
		KTRACE_OUTPUT="$T/$mode-%p.ktrace" KTRACE_HASH=0 KTRACE_QUIET=1 LD_PRELOAD="$B/libktrace.so" \
			timeout 150 python3 "$REF" $flag --steps 30 >"$T/$mode.traced.$r" 2>"$T/$mode.traced.err.$r"
		[ $mode = eager ] || continue
		for e in $extra; do
			xl=${e#*=}
			xv=KTRACE_QUIET=1
			case "$xl" in *,*) xv=${xl#*,}; xl=${xl%%,*} ;; esac
			env KTRACE_OUTPUT="$T/x-%p.ktrace" KTRACE_HASH=0 KTRACE_QUIET=1 "$xv" LD_PRELOAD="$xl" \
				timeout 150 python3 "$REF" $flag --steps 30 >"$T/$mode.x-${e%%=*}.$r" 2>/dev/null
		done
		rm -f "$T"/x-*.ktrace
	done
	p=$(for f in "$T/$mode".plain.[0-9]; do ms "$f"; done | sort -n | head -n 1)
	t=$(for f in "$T/$mode".traced.[0-9]; do ms "$f"; done | sort -n | head -n 1)
	echo "$mode ms/step plain: $(for f in "$T/$mode".plain.[0-9]; do ms "$f"; done | tr '\n' ' ') traced: $(for f in "$T/$mode".traced.[0-9]; do ms "$f"; done | tr '\n' ' ')"
	cp=$(sum "$T/$mode.plain.1")
	ct=$(sum "$T/$mode.traced.1")
	if [ -z "$p" ] || [ -z "$t" ]; then
		echo "RESULT|capture-refstep-$mode|FAIL|no timing: $(tail -n 2 "$T/$mode".*err* 2>/dev/null | tr '\n' ' ' | cut -c1-300)"
		continue
	fi
	o=$(awk -v p="$p" -v t="$t" 'BEGIN{printf "%.2f", (t / p - 1) * 100}')
	echo "BENCH|capture-refstep-$mode-overhead|$o|%|plain $p ms/step, ktrace $t ms/step (best of $reps runs, 30 steps, KTRACE_HASH=0)"
	for e in $extra; do
		[ $mode = eager ] || continue
		x=$(for f in "$T/$mode.x-${e%%=*}".[0-9]; do ms "$f"; done | sort -n | head -n 1)
		[ -n "$x" ] && echo "BENCH|capture-refstep-$mode-overhead-${e%%=*}|$(awk -v p="$p" -v t="$x" 'BEGIN{printf "%.2f", (t / p - 1) * 100}')|%|plain $p ms/step, ${e%%=*} $x ms/step"
	done
	tr=$(ls "$T"/$mode-*.ktrace 2>/dev/null | head -n 1)
	[ -n "$tr" ] && [ -x "$B/ktrace-dump" ] && "$B/ktrace-dump" --summary "$tr" 2>&1 | grep -m 3 "summary\|counters" | cut -c1-300
	ok=$(awk -v o="$o" 'BEGIN{print (o <= 3.0) ? 1 : 0}')
	if [ "$cp" != "$ct" ]; then
		echo "RESULT|capture-refstep-$mode|FAIL|checksum $ct with ktrace != $cp without"
	elif [ "$ok" = 1 ]; then
		echo "RESULT|capture-refstep-$mode|PASS|overhead $o % <= 3 %, checksum $ct identical"
	else
		echo "RESULT|capture-refstep-$mode|FAIL|overhead $o % > 3 % (plain $p ms, ktrace $t ms), checksum identical"
	fi
	rm -f "$T"/*.ktrace
done
