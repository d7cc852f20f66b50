#!/bin/sh
# test/run_unit.sh: run each CPU test program given on the command line; fail if any fails.
# Tests find fixtures relative to the repository root (the working directory).
#
# Scratch files: the tests run with TMPDIR set to a fresh folder (made under the caller's
# TMPDIR, else /tmp), and every test removes what it made there before it exits
# (test/scratch.h), the traces `ktrace check` keeps included.  Anything left in that folder
# afterwards is listed and fails the run, as does a test source that makes its scratch
# files under a fixed /tmp instead of TMPDIR.
fail=0

# Scratch made under a literal /tmp in the sources of the tests `make test` runs.
fixed_tmp=$(grep -rnE '"/tmp/[^"]*XXXXXX|mktemp [^|;]*/tmp/|fopen\("/tmp/|>[ ]*/tmp/' \
	test/*.h test/run_unit.sh test/unit test/reliability test/tools test/python test/fuzz test/layout \
	test/fakecuda test/fakenccl test/nccl 2>/dev/null | grep -v '^test/run_unit.sh:')
if [ -n "$fixed_tmp" ]; then
	echo "FAILED: scratch files under a fixed /tmp, not \$TMPDIR (test/scratch.h):"
	echo "$fixed_tmp"
	fail=1
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/ktrace-tests.XXXXXX") ||
	{ echo "test/run_unit.sh: cannot make a scratch folder in ${TMPDIR:-/tmp}"; exit 1; }
TMPDIR=$scratch
export TMPDIR
for t in "$@"; do
	echo "== $t"
	if ! "$t"; then
		echo "FAILED: $t"
		fail=1
	fi
done
left=$(cd "$scratch" && find . -mindepth 1 -maxdepth 2 | sort | head -n 40)
if [ -n "$left" ]; then
	echo "FAILED: the tests left files in their TMPDIR ($scratch), removed now:"
	echo "$left"
	fail=1
fi
rm -rf "$scratch"
[ $fail -eq 0 ] && echo "all CPU tests passed"
exit $fail
