#!/bin/sh
# test/python/wheel_aarch64_test.sh: the aarch64 wheel, run under qemu-user on an x86-64
# host (make check-wheel-aarch64, after make wheel-aarch64).
#
# The wheel is unpacked and run against a root that holds only what every aarch64 glibc
# system has (build-wheel.py's PORTABLE libraries: libc, libm, libgcc_s, libz, liblzma,
# libbz2...) and libstdc++ (on every machine that runs CUDA programs; ktrace only looks it
# up, to demangle), so a library it forgot to bundle fails here.  Its tools must print what the
# host's build prints for the example traces (ktrace-dump text and JSON, ktrace-diff, ktrace-
# export) and for a cubin (ktrace-inspect, through its bundled libelf).  Its libktrace.so,
# preloaded into the bundled example's driver-API program (built for aarch64, with the
# real-memory test driver for a GPU), must trace a run that the host's ktrace-diff finds
# identical to the same run traced on the host, and a run with another atomic order whose
# divergence it names.  Not tested: a GPU (none is here), pip on aarch64.
#
#   BUILD=build AARCH64_TEST=build-wheel-aarch64/test WHEEL_OUT=dist VERSION=0.1.0 \
#       sh test/python/wheel_aarch64_test.sh
set -u
ROOT=$(pwd)
B=$ROOT/${BUILD:-build}
A=$ROOT/${AARCH64_TEST:-build-wheel-aarch64/test}
OUT=$ROOT/${WHEEL_OUT:-dist}
VERSION=${VERSION:-0.1.0}
T=$(mktemp -d "${TMPDIR:-/tmp}/ktrace-wheel-aarch64.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$ROOT/test/python/check_lib.sh"

command -v qemu-aarch64 >/dev/null || { echo "wheel_aarch64_test: no qemu-aarch64 (apt-get install qemu-user)"; exit 1; }
set -- "$OUT"/ktrace-"$VERSION"-py3-none-manylinux_*_aarch64.whl
[ $# -eq 1 ] && [ -f "$1" ] || { echo "wheel_aarch64_test: no single aarch64 wheel in $OUT (make wheel-aarch64)"; exit 1; }
WHL=$1
W=$T/wheel/ktrace
# unpacked as pip installs it: each file with the mode the wheel gives it
python3 -c 'import os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for i in z.infolist():
    os.chmod(z.extract(i, sys.argv[2]), (i.external_attr >> 16) & 0o777)' "$WHL" "$T/wheel"

# A root with the aarch64 libraries every system has, and nothing else.
mkdir -p "$T/root/lib/aarch64-linux-gnu"
ln -s /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 "$T/root/lib/ld-linux-aarch64.so.1"
for lib in libc.so.6 libm.so.6 libdl.so.2 librt.so.1 libpthread.so.0 libgcc_s.so.1 libz.so.1 liblzma.so.5 \
	libbz2.so.1.0 libstdc++.so.6; do
	for d in /usr/aarch64-linux-gnu/lib /usr/lib/aarch64-linux-gnu /lib/aarch64-linux-gnu; do
		if [ -e "$d/$lib" ]; then ln -s "$d/$lib" "$T/root/lib/aarch64-linux-gnu/$lib"; break; fi
	done
done
export QEMU_LD_PREFIX=$T/root
arm() { qemu-aarch64 "$@"; }

# every ELF file in the wheel is aarch64
elves_arm() {
	for f in "$W"/bin/* "$W"/lib/*.so*; do
		readelf -h "$f" | grep -q "AArch64" || { echo "$f: not aarch64"; return 1; }
	done
}
t "every ELF file is aarch64" elves_arm

# same_output NAME ARGS...: the wheel's tool and the host's print the same and exit alike
same_output() {
	tool=$1
	shift
	arm "$W/bin/$tool" "$@" >"$T/arm.out" 2>"$T/arm.err"
	ra=$?
	"$B/$tool" "$@" >"$T/host.out" 2>"$T/host.err"
	rh=$?
	[ "$ra" = "$rh" ] || { echo "exit $ra, the host's $rh"; cat "$T/arm.err"; return 1; }
	cmp "$T/arm.out" "$T/host.out" || { diff "$T/arm.out" "$T/host.out" | head -20; return 1; }
}
R1=$ROOT/examples/traces/atomic_sum-run1.ktrace
R2=$ROOT/examples/traces/atomic_sum-run2.ktrace
t "ktrace-dump as on the host" same_output ktrace-dump "$R1"
t "ktrace-dump --json as on the host" same_output ktrace-dump --json "$R2"
t "ktrace-diff as on the host (exit 1, the divergence)" same_output ktrace-diff "$R1" "$R2"
t "ktrace-export as on the host" same_output ktrace-export -o - "$R1"
t "ktrace-inspect (bundled libelf) as on the host" same_output ktrace-inspect --no-env-caches \
	"$ROOT/test/fuzz/corpus/meta/s90.cubin"
t "ktrace-hash as on the host" same_output ktrace-hash "$ROOT/README.md"

# libktrace.so in an aarch64 program: run k of the example with atomic order k
trace_arm() {
	FAKECUDA_NONDET_SEED=$1 KTRACE_OUTPUT=$T/arm$1.ktrace KTRACE_QUIET=1 qemu-aarch64 \
		-E LD_PRELOAD="$W/lib/libktrace.so" -E LD_LIBRARY_PATH="$A/fakecuda-real" \
		"$A/atomic_sum_driver" "$B/examples/atomic_sum.fatbin" --iters 16
}
trace_host() {
	LD_LIBRARY_PATH=$B/fakecuda-real FAKECUDA_NONDET_SEED=1 "$B/ktrace" run --quiet -o "$T/host1.ktrace" -- \
		"$B/examples/atomic_sum_driver" "$B/examples/atomic_sum.fatbin" --iters 16
}
t "libktrace.so traces an aarch64 program" trace_arm 1
t "the same program traced on the host" trace_host
t "an aarch64 trace and the host's of the same run: identical" "$B/ktrace-diff" "$T/host1.ktrace" "$T/arm1.ktrace"
diverges() {
	trace_arm 2 || return 1
	"$B/ktrace-diff" "$T/arm1.ktrace" "$T/arm2.ktrace"
	rc=$?
	[ "$rc" = 1 ] || { echo "ktrace-diff exit $rc, want 1"; return 1; }
}
t "two aarch64 runs with other atomic orders: the divergence found" diverges
grep -q "atomic_sum" "$T/log" && ok "the divergence names the atomic kernel" || bad "the divergence names the atomic kernel"

summary wheel_aarch64_test
