#!/usr/bin/env bash
# test/gpu/41-e2e-unverified-2-frameworks.sh: no unverified launch on PyTorch with
# cuDNN and cuBLAS, Triton's own launcher, JAX and CuPy (test/gpu/unverified_run.sh).
#   RESULT unverified-torch-eager, unverified-triton, unverified-jax, unverified-cupy
exec bash "$(dirname "$0")/unverified_run.sh" unverified-torch-eager unverified-triton unverified-jax unverified-cupy
