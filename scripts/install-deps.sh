#!/bin/sh
# scripts/install-deps.sh [--aarch64]: install the Debian/Ubuntu packages ktrace builds and
# tests with.  The CUDA toolkit (nvcc, cuda.h) is expected at $CUDA_HOME (default
# /usr/local/cuda).  --aarch64 also: the cross compiler, the arm64 libraries and qemu-user
# that make wheel-aarch64 and make check-wheel-aarch64 use (Debian's multiarch: arm64 is
# added to dpkg's architectures).
set -eu
PKGS="build-essential pkg-config libelf-dev libzstd-dev liblz4-dev libcmocka-dev libdw-dev python3 python3-jsonschema python3-numpy python3-venv groff-base time"
AARCH64_PKGS="gcc-aarch64-linux-gnu libelf-dev:arm64 libzstd-dev:arm64 liblz4-dev:arm64 libdw-dev:arm64 libstdc++6:arm64 qemu-user"
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
case "${1:-}" in
--aarch64)
	$SUDO dpkg --add-architecture arm64
	PKGS="$PKGS $AARCH64_PKGS"
	;;
"") ;;
*)
	echo "install-deps: unknown option $1 (--aarch64 or none)" >&2
	exit 2
	;;
esac
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $PKGS >/dev/null
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -x "$CUDA_HOME/bin/nvcc" ] || [ ! -f "$CUDA_HOME/include/cuda.h" ]; then
	echo "install-deps: no CUDA toolkit at $CUDA_HOME (set CUDA_HOME): make will build the tools that" \
		"read traces, not libktrace.so (it needs cuda.h and nvcc), and make test needs both" >&2
fi
echo "install-deps: done ($PKGS)"
