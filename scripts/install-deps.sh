#!/bin/sh
# scripts/install-deps.sh: install the Debian/Ubuntu packages ktrace builds and tests with.
# The CUDA toolkit (nvcc, cuda.h) is expected at $CUDA_HOME (default /usr/local/cuda).
set -eu
PKGS="build-essential pkg-config libelf-dev libzstd-dev liblz4-dev libcmocka-dev libdw-dev python3 python3-jsonschema python3-venv"
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $PKGS >/dev/null
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -x "$CUDA_HOME/bin/nvcc" ] || [ ! -f "$CUDA_HOME/include/cuda.h" ]; then
	echo "install-deps: no CUDA toolkit at $CUDA_HOME (set CUDA_HOME): make will build the tools that" \
		"read traces, not libktrace.so (it needs cuda.h and nvcc), and make test needs both" >&2
fi
echo "install-deps: done ($PKGS)"
