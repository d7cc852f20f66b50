#!/usr/bin/env bash
# test/gpu/50-reliability-transparency-fw.sh: ktrace changes no result
# (docs/reliability.md, guarantee 8):
# the Triton, JAX and CuPy workloads of test/gpu/workloads/
#
# Bitwise transparency with hashing ON (KTRACE_HASH=1, the default): each
# program runs twice without ktrace and once under LD_PRELOAD=libktrace.so;
# its printed result (ref_step.py "checksum=...", the workloads' "OUTPUT
# <sha256>") must be identical in all three.  If the two plain runs differ the
# program is not deterministic by itself: SKIP (nothing to compare).  A
# framework that is not installed gives SKIP.  The traced run must also exit
# 0, print a start-up line with "hashing on" and leave a trace ktrace-dump
# reads (--summary kept in the logs).  Shared code: test/gpu/reliability_lib.sh.
# Prints RESULT|transparency-<name>|PASS|FAIL|SKIP|detail lines.
set -u
cd "$(dirname "$0")/../.."
. test/gpu/reliability_lib.sh
rel_ready frameworks || exit 0

check triton 200 "$W/triton_raw.py"
check jax 200 "$W/jax_jit.py"
check cupy 200 "$W/cupy_raw.py"
rm -f "$T"/*.ktrace
