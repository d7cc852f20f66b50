#!/bin/sh
# test/python/wheel_test.sh: the wheel as a user gets it (make check-wheel, after make wheel).
#
# Checks the file itself (RECORD digests, the platform tag against the newest glibc
# symbol version its ELF files need, the shared libraries they resolve: bundled or
# on every system), then installs it into a fresh venv with pip, offline, and runs
# the console commands, ktrace.load(), pause/resume/mark without the library, and
# `ktrace run` (which must preload the wheel's own libktrace.so) on a Python program
# that calls ktrace.mark() under the fake CUDA driver; finally pip uninstall leaves
# nothing behind.
#
#   BUILD=build WHEEL_OUT=dist VERSION=0.1.0 sh test/python/wheel_test.sh
set -u
ROOT=$(pwd)
B=$ROOT/${BUILD:-build}
OUT=$ROOT/${WHEEL_OUT:-dist}
VERSION=${VERSION:-0.1.0}
T=$(mktemp -d "${TMPDIR:-/tmp}/ktrace-wheel.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$ROOT/test/python/check_lib.sh"

set -- "$OUT"/ktrace-"$VERSION"-py3-none-manylinux_*_x86_64.whl
[ $# -eq 1 ] && [ -f "$1" ] || { echo "wheel_test: no single wheel in $OUT (make wheel)"; exit 1; }
WHL=$1
echo "wheel: $(basename "$WHL") ($(wc -c <"$WHL") bytes)"

# ---- the file -------------------------------------------------------------
t "RECORD lists every file with its sha256 and size" python3 "$ROOT/test/python/check_wheel.py" record "$WHL"
mkdir -p "$T/x" && (cd "$T/x" && python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall()' "$WHL")
# zipfile does not restore modes: take them from the archive
python3 -c '
import os, sys, zipfile
for i in zipfile.ZipFile(sys.argv[1]).infolist():
    os.chmod(os.path.join(sys.argv[2], i.filename), (i.external_attr >> 16) & 0o777)' "$WHL" "$T/x"
t "platform tag = newest GLIBC_ version needed (objdump -T)" python3 "$ROOT/test/python/check_wheel.py" tag "$WHL" "$T/x"
t "libraries: bundled (RUNPATH \$ORIGIN) or on every system (ldd)" python3 "$ROOT/test/python/check_wheel.py" ldd "$T/x"
t "the checksum kernel's fatbin is inside libktrace.so" sh -c \
	"nm '$T/x/ktrace/lib/libktrace.so' | grep -q ' ktrace_hashkern_fatbin$'"

# ---- install into a fresh venv, offline -----------------------------------------
t "python3 -m venv" python3 -m venv "$T/venv"
V=$T/venv/bin
t "pip install --no-index the wheel" "$V/pip" install --no-index --no-cache-dir --disable-pip-version-check "$WHL"
cd "$T" || exit 1
t "ktrace --version" sh -c "'$V/ktrace' --version | grep -qx 'ktrace $VERSION'"
t "ktrace-dump on the example traces" "$V/ktrace-dump" --summary "$ROOT/examples/traces/atomic_sum-run1.ktrace"
t "ktrace dump (front end) --json" sh -c "'$V/ktrace' dump --json '$ROOT/examples/traces/atomic_sum-run2.ktrace' | grep -q '\"type\":\"launch\"'"
"$V/ktrace-diff" "$ROOT/examples/traces/atomic_sum-run1.ktrace" "$ROOT/examples/traces/atomic_sum-run2.ktrace" >"$T/log" 2>&1
[ $? -eq 1 ] && ok "ktrace-diff finds the example's divergence (exit 1)" || bad "ktrace-diff on the examples"
t "ktrace export --perfetto" "$V/ktrace" export --perfetto "$ROOT/examples/traces/atomic_sum-run1.ktrace" -o "$T/a.json"
t "ktrace-inspect, ktrace-hash run" sh -c "'$V/ktrace-inspect' --help >/dev/null && '$V/ktrace-hash' '$WHL' >/dev/null"
t "man pages installed" test -f "$T/venv/share/man/man1/ktrace.1" -a -f "$T/venv/share/man/man1/ktrace-export.1"
t "import ktrace; ktrace.load(); pause/resume/mark untraced" "$V/python" -c "
import ktrace, os
assert ktrace.__file__.startswith('$T/venv/'), ktrace.__file__
t = ktrace.load('$ROOT/examples/traces/atomic_sum-run1.ktrace')
assert len(t.launches) == 48 and t.launches[0].args, t  # 16 iterations of 3 kernels (scripts/example-traces.sh)
assert not ktrace.active()
ktrace.pause(); ktrace.mark('untraced'); ktrace.resume()
with ktrace.paused(): pass
print(t)"

# ---- ktrace run with the wheel's library ---------------------------------------
cat >"$T/prog.py" <<'PYEOF'
import ctypes, os, ktrace
print("LD_PRELOAD=" + os.environ.get("LD_PRELOAD", ""))
assert ctypes.CDLL("libcuda.so.1").cuInit(0) == 0
ctypes.CDLL(None).cuCtxSynchronize()  # any call ktrace wraps starts tracing
assert ktrace.active()
ktrace.mark("from the wheel")
PYEOF
t "ktrace run -- python (fake driver)" env LD_LIBRARY_PATH="$B/fakecuda" "$V/ktrace" run --quiet -o "$T/run.ktrace" -- "$V/python" "$T/prog.py"
cp "$T/log" "$T/run.log"
t "ktrace run preloaded the wheel's libktrace.so" grep -q "LD_PRELOAD=$T/venv/lib/python.*/site-packages/ktrace/lib/libktrace.so" "$T/run.log"
t "ktrace.mark() reached the trace" "$V/python" -c "
import ktrace
assert [m.text for m in ktrace.load('$T/run.ktrace').marks] == ['from the wheel']"

# ---- uninstall ---------------------------------------------------------------
t "pip uninstall" "$V/pip" uninstall -y --disable-pip-version-check ktrace
t "nothing left behind" sh -c "! ls '$V'/ktrace* '$T'/venv/lib/python*/site-packages/ktrace '$T/venv/share/man/man1/ktrace.1' 2>/dev/null | grep -q ."

summary wheel_test
