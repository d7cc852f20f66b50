# test/python/check_lib.sh: the pass/fail bookkeeping the wheel tests share (sourced).
# Needs $T, a scratch folder; `ok NAME`, `bad NAME` (with $T/log's first lines), and
# `t NAME COMMAND...`, which passes when the command exits 0 (its output in $T/log);
# `summary NAME` prints the counts and returns non-zero when a check failed.
pass=0
failed=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; [ -s "$T/log" ] && sed 's/^/     /' "$T/log" | head -30; }
t() { name=$1; shift; if "$@" >"$T/log" 2>&1; then ok "$name"; else bad "$name"; fi; }
summary() { echo "$1: $pass passed, $failed failed"; [ "$failed" -eq 0 ]; }
