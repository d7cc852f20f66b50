#!/usr/bin/env bash
# test/gpu/50-reliability-transparency.sh: ktrace changes no result
# (docs/reliability.md, guarantee 8):
# PyTorch: ref_step.py eager and --compile, and workloads/torch_eager.py
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
rel_ready torch || exit 0

check refstep-eager 300 "$W/ref_step.py" --steps 10 --warmup 2
check refstep-compile 400 "$W/ref_step.py" --steps 10 --warmup 2 --compile
check torch-eager 200 "$W/torch_eager.py"
rm -f "$T"/*.ktrace
