#!/usr/bin/env bash
# test/gpu/11-capture-3b-refstep-compile.sh: ktrace's overhead on the reference step,
# compile, in metadata mode, and the cost of GPU times at the default rate
# (test/gpu/refstep_overhead.sh says how).
#   RESULT capture-refstep-compile, capture-refstep-compile-gputimes
KT_REFSTEP_MODES=${KT_REFSTEP_MODES:-compile} exec bash "$(dirname "$0")/refstep_overhead.sh"
