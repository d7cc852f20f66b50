#!/usr/bin/env bash
# test/gpu/41-e2e-unverified-1-refstep.sh: no unverified launch on the reference
# step, eager and under torch.compile (test/gpu/unverified_run.sh says how).
#   RESULT unverified-refstep-eager, unverified-refstep-compile
exec bash "$(dirname "$0")/unverified_run.sh" unverified-refstep-eager unverified-refstep-compile
