#!/bin/sh
# test/run_unit.sh: run each CPU test program given on the command line; fail if any fails.
# Tests find fixtures relative to the repository root (the working directory).
fail=0
for t in "$@"; do
	echo "== $t"
	if ! "$t"; then
		echo "FAILED: $t"
		fail=1
	fi
done
[ $fail -eq 0 ] && echo "all CPU tests passed"
exit $fail
