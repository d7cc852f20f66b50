#!/usr/bin/env bash
# test/gpu/11-capture-3a-refstep-eager.sh: ktrace's overhead on the reference step,
# eager, in metadata mode, and the cost of GPU times at the default rate
# (test/gpu/refstep_overhead.sh says how).
#   RESULT capture-refstep-eager, capture-refstep-eager-gputimes
KT_REFSTEP_MODES=${KT_REFSTEP_MODES:-eager} exec bash "$(dirname "$0")/refstep_overhead.sh"
