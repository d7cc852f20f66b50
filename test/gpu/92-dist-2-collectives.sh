#!/usr/bin/env bash
# test/gpu/92-dist-2-collectives.sh: part "collectives" of the distributed job's GPU acceptance
# (test/gpu/dist_run.sh says what it checks; it needs 2 or 4 GPUs and skips otherwise).
KT_DIST_PART=collectives exec bash "$(dirname "$0")/dist_run.sh"
