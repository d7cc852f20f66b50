#!/usr/bin/env bash
# test/gpu/92-dist-3-overhead.sh: part "overhead" of the distributed job's GPU acceptance
# (test/gpu/dist_run.sh says what it checks; it needs 2 or 4 GPUs and skips otherwise).
KT_DIST_PART=overhead exec bash "$(dirname "$0")/dist_run.sh"
