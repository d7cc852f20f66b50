#!/bin/sh
# test/gpu/bundle.sh: copy what the GPU suite needs from a build folder into a
# small folder to carry to the GPU machine (the whole build/ holds the CPU
# tests too and is larger than what travels).
#
#   sh test/gpu/bundle.sh BUILD DEST      e.g. sh test/gpu/bundle.sh build .gpu/build
# then on the GPU machine: KT_BUILD=$PWD/.gpu/build bash test/gpu/run.sh
set -eu
src=$1
dst=$2
[ -f "$src/libktrace.so" ] || { echo "bundle: $src/libktrace.so missing (make gpu BUILD=$src)" >&2; exit 1; }
rm -rf "$dst"
mkdir -p "$dst"
for f in libktrace.so ktrace ktrace-dump ktrace-diff ktrace-export ktrace-inspect ktrace-hash launch_overhead hash_bandwidth; do
	[ -e "$src/$f" ] && cp -p "$src/$f" "$dst/"
done
for d in gpu examples cubins hashkern ablate ktrace-pyhook; do
	[ -d "$src/$d" ] && cp -rp "$src/$d" "$dst/"
done
# The wheel (make wheel) for the wheel area (80-wheel.sh), when it was built.
for w in "${WHEEL_OUT:-dist}"/ktrace-*.whl; do
	[ -f "$w" ] && mkdir -p "$dst/wheel" && cp -p "$w" "$dst/wheel/"
done
[ -d "$dst/wheel" ] || echo "bundle: warning: no wheel in ${WHEEL_OUT:-dist}/ (make wheel; the wheel area will skip)" >&2
# The programs the areas run from gpu/ (graphs: 70-graphs-*.sh): say which are missing.
for p in intercept_runtime intercept_driver hash_digest graph_capture graph_explicit gputime_spin nvtx_threads; do
	[ -x "$dst/gpu/$p" ] || echo "bundle: warning: gpu/$p missing (make gpu BUILD=$src)" >&2
done
du -sh "$dst"
