#!/usr/bin/env bash
# test/gpu/10-interpose-intercept.sh: proof of interception on a real GPU.
#
# For build/gpu/intercept_runtime (CUDA C through cudart: <<<>>>,
# cudaLaunchKernelEx with cluster dims, a cooperative launch) and
# build/gpu/intercept_driver (driver API: kernelParams, extra, cuLaunchKernelEx,
# cooperative, dlsym on the libcuda handle, cuGetProcAddress flags 0 and
# per-thread, the resolver returned for "cuGetProcAddress"):
#   - run without and with LD_PRELOAD=build/libktrace.so (KTRACE_HASH=0):
#     stdout (the program's bitwise output hash and counts) identical;
#   - launch records == the launches the program reports, per-thread and
#     `extra` launches flagged, every launch has the real kernel name (one the
#     program launched), exactly one start-up line;
#   - the same with KTRACE_HASH=1 (outputs identical, counts equal);
#   - BENCH: host time per launch added by ktrace in metadata mode
#     (100k empty-kernel launches through the driver API, median of 5).
# Prints RESULT|...|PASS|FAIL|SKIP|detail and BENCH|... lines (test/gpu/run.sh).
set -u
B=${KT_BUILD:-$PWD/build}
T=${KT_TMP:-$(mktemp -d)}
L=${KT_LOGS:-$T}
lib=$B/libktrace.so
dump=$B/ktrace-dump

result() { echo "RESULT|$1|$2|$3"; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	result interpose-intercept SKIP "no GPU"
	exit 0
fi
for f in "$lib" "$dump"; do
	if [ ! -f "$f" ]; then
		result interpose-intercept SKIP "$f not built (make gpu)"
		exit 0
	fi
done
if ! command -v python3 >/dev/null 2>&1; then
	result interpose-intercept SKIP "python3 missing"
	exit 0
fi

# check_trace NAME PLAIN_STDOUT TRACED_STDOUT TRACED_STDERR TRACE: prints "OK detail" or "BAD detail".
check_trace() {
	"$dump" --json "$5" >"$T/$1.json" 2>"$T/$1.dump.err"
	local rc=$?
	python3 - "$2" "$3" "$4" "$T/$1.json" "$rc" "$T/$1.dump.err" <<'EOF'
import json, sys
plain, traced, err, js, rc, dump_err = sys.argv[1:7]
p = open(plain).read()
t = open(traced).read()
bad = []
if p != t:
    bad.append("stdout differs with ktrace")
kv = {}
names = set()
for line in p.splitlines():
    k, _, v = line.partition(" ")
    if k == "NAME":
        names.add(v)
    else:
        kv[k] = v
want = int(kv.get("KERNELS", "-1"))
want_ptsz = int(kv.get("PTSZ", "0"))
want_extra = int(kv.get("EXTRA", "0"))
starts = open(err).read().count("tracing to ")
if starts != 1:
    bad.append("%d start-up lines" % starts)
if rc != "0":
    bad.append("ktrace-dump exit %s: %s" % (rc, open(dump_err).read().strip()[:200]))
launches = ptsz = extra = failed = 0
unnamed = set()
have_end = False
for line in open(js):
    try:
        r = json.loads(line)
    except ValueError:
        bad.append("bad JSON line")
        break
    if r.get("type") == "end":
        have_end = True
    if r.get("type") != "launch":
        continue
    launches += 1
    fl = r.get("launch_flags", [])
    ptsz += "ptsz" in fl
    extra += "extra" in fl
    failed += r.get("result", 0) != 0
    # the program prints the symbols it launched; "kernel" is the printed (demangled) name
    if r.get("kernel") not in names and r.get("mangled") not in names:
        unnamed.add(str(r.get("kernel")))
if launches != want:
    bad.append("launch records %d, program launched %d" % (launches, want))
if ptsz != want_ptsz:
    bad.append("per-thread launches %d, want %d" % (ptsz, want_ptsz))
if extra != want_extra:
    bad.append("extra launches %d, want %d" % (extra, want_extra))
if failed:
    bad.append("%d launches failed" % failed)
if unnamed:
    bad.append("names not launched by the program: " + ",".join(sorted(unnamed))[:200])
if not have_end:
    bad.append("no END record")
if bad:
    print("BAD " + "; ".join(bad))
else:
    print("OK %d launches (%d per-thread, %d extra), %d kernels named, outputs identical" %
          (launches, ptsz, extra, len(names)))
EOF
}

run_prog() { # NAME EXE
	local name=$1 exe=$2 mode out
	if [ ! -x "$exe" ]; then
		result "interpose-$name" SKIP "$exe not built (make gpu)"
		return
	fi
	if ! timeout 90 "$exe" >"$T/$name.plain" 2>"$T/$name.plain.err"; then
		result "interpose-$name" FAIL "runs without ktrace failed: $(tail -n 1 "$T/$name.plain.err")"
		return
	fi
	for mode in 0 1; do
		local tag=$name
		[ $mode = 1 ] && tag=$name-hash
		rm -f "$T/$tag.ktrace"
		if ! KTRACE_OUTPUT="$T/$tag.ktrace" KTRACE_HASH=$mode KTRACE_DEBUG=1 LD_PRELOAD="$lib" timeout 90 \
			"$exe" >"$T/$tag.out" 2>"$T/$tag.err"; then
			cp "$T/$tag.err" "$L/$tag.stderr" 2>/dev/null
			result "interpose-$tag" FAIL "run under ktrace failed: $(grep -v '^ktrace\[' "$T/$tag.err" | tail -n 1)"
			continue
		fi
		out=$(check_trace "$tag" "$T/$name.plain" "$T/$tag.out" "$T/$tag.err" "$T/$tag.ktrace")
		# Resolver answers for wrapped base names that did not map to a
		# wrapper (KTRACE_DEBUG): calls through them would be untraced.
		grep 'no function ktrace wraps' "$T/$tag.err" >"$L/$tag.unmapped" 2>/dev/null
		nu=$(wc -l <"$L/$tag.unmapped")
		[ "$nu" -gt 0 ] && out="$out; $nu unmapped resolver answers ($(head -n 3 "$L/$tag.unmapped" | sed 's/.*cuGetProcAddress(\([^,]*\).*/\1/' | tr '\n' ' '))"
		cp "$T/$tag.err" "$L/$tag.stderr" 2>/dev/null
		case "$out" in
		OK*) result "interpose-$tag" PASS "${out#OK }" ;;
		*)
			cp "$T/$tag.err" "$L/$tag.stderr" 2>/dev/null
			head -c 2000000 "$T/$tag.json" >"$L/$tag.json" 2>/dev/null
			result "interpose-$tag" FAIL "${out#BAD }"
			;;
		esac
	done
}

run_prog runtime "$B/gpu/intercept_runtime"
run_prog driver "$B/gpu/intercept_driver"

# Host time added per launch in metadata mode (KTRACE_HASH=0).  Launch cost
# varies by a few hundred ns from process to process, so plain, wrappers-only
# (tracing switched off by a bad setting) and traced runs are interleaved,
# 3 rounds, and the medians compared.
drv=$B/gpu/intercept_driver
bench_ns() { timeout 60 env "$@" "$drv" bench 100000 2>/dev/null | awk '/^NS_PER_LAUNCH/{print $2}'; }
median() { printf '%s\n' "$@" | grep -v '^$' | sort -g | awk '{v[NR]=$1} END{if (NR) print v[int((NR+1)/2)]}'; }
if [ -x "$drv" ]; then
	P=() O=() R=()
	for round in 1 2 3; do
		P+=("$(bench_ns KT_NONE=1)")
		O+=("$(bench_ns KTRACE_HASH=invalid LD_PRELOAD="$lib")")
		rm -f "$T/bench.ktrace"
		R+=("$(bench_ns KTRACE_OUTPUT="$T/bench.ktrace" KTRACE_HASH=0 KTRACE_QUIET=1 LD_PRELOAD="$lib")")
	done
	plain=$(median "${P[@]}") off=$(median "${O[@]}") traced=$(median "${R[@]}")
	if [ -n "$plain" ] && [ -n "$off" ]; then
		d=$(awk -v a="$off" -v b="$plain" 'BEGIN{printf "%.1f", a-b}')
		echo "BENCH|interpose-wrapper-passthrough|$d|ns|tracing off (wrappers only), median of 3 interleaved rounds: plain ${P[*]} ns, with libktrace.so ${O[*]} ns"
	fi
	if [ -n "$plain" ] && [ -n "$traced" ]; then
		delta=$(awk -v a="$traced" -v b="$plain" 'BEGIN{printf "%.1f", a-b}')
		echo "BENCH|interpose-launch-overhead-metadata|$delta|ns|host time per cuLaunchKernel (100k empty launches in batches of 256, median of 5), median of 3 interleaved rounds: plain ${P[*]} ns, traced ${R[*]} ns"
		if awk -v d="$delta" 'BEGIN{exit !(d <= 500)}'; then
			result interpose-launch-overhead PASS "$delta ns added per launch (target <= 500)"
		else
			result interpose-launch-overhead FAIL "$delta ns added per launch (target <= 500)"
		fi
	else
		result interpose-launch-overhead FAIL "benchmark did not run (plain '$plain', traced '$traced')"
	fi
fi
