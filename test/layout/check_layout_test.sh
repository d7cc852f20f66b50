#!/bin/sh
# test/layout/check_layout_test.sh: scripts/check-layout.py really fails on
# includes that break the rules of docs/architecture.md, and passes on a tree
# that keeps them.  Builds small trees under a temporary folder and compares
# the checker's exit status and lines with the expected ones.
#
#   sh test/layout/check_layout_test.sh [path/to/check-layout.py]
CHECK=${1:-scripts/check-layout.py}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ktrace-layout.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0

# put PATH LINE...: write a file of the tree under $TMP/tree
put() {
	f="$TMP/tree/$1"
	shift
	mkdir -p "$(dirname "$f")"
	printf '%s\n' "$@" > "$f"
}

# expect NAME STATUS: the checker's status on $TMP/tree is STATUS and its
# output lines are exactly those of $TMP/expected
expect() {
	python3 "$CHECK" --root "$TMP/tree" > "$TMP/out" 2> "$TMP/err"
	status=$?
	if [ "$status" -ne "$2" ]; then
		echo "FAIL: $1: exit status $status, want $2"
		cat "$TMP/out" "$TMP/err"
		failed=$((failed + 1))
	elif [ "$2" -ne 0 ] && ! diff -u "$TMP/expected" "$TMP/out"; then
		echo "FAIL: $1: other lines than expected"
		failed=$((failed + 1))
	else
		echo "ok: $1"
		passed=$((passed + 1))
	fi
}

# A tree that keeps every rule.
put common/log.h '/* common/log.h */'
put format/ktrace_format.h '#include <stdint.h>' '#include <zstd.h>'
put format/trace_writer.c '#include "format/ktrace_format.h"'
put meta/kernel_meta.h '#include "format/ktrace_format.h"'
put meta/cubin.c '#include "meta/kernel_meta.h"' '#include <gelf.h>' '#include "common/log.h"'
put hashkern/kt64v1.h '#include <stdint.h>'
put hashkern/hashkern.cu '#include "hashkern/kt64v1.h"'
put include/ktrace.h '/* include/ktrace.h */'
put tools/model/trace_model.h '#include "format/ktrace_format.h"'
put tools/cli/cli_options.h '/* tools/cli/cli_options.h */'
put tools/cli/ktrace_check.c '#include "tools/cli/cli_options.h"' '#include "tools/model/trace_model.h"'
put tools/dump/dump.c '#include "format/ktrace_format.h"' '#include "meta/kernel_meta.h"' \
	'#include "tools/model/trace_model.h"' '#include "tools/cli/cli_options.h"'
put tools/diff/diff.h '#include "tools/model/trace_model.h"'
put interpose/tracer.h '/* interpose/tracer.h */'
put interpose/init.c '#include "interpose/driver/driver_real.h"' '#include "include/ktrace.h"'
put interpose/driver/driver_real.h '#include <cuda.h>'
put interpose/registry/registry.c '#include "interpose/driver/driver_real.h"' \
	'#include "meta/kernel_meta.h"'
put test/unit/any_test.c '#include "interpose/registry/registry.c"' '#include <cmocka.h>'
put test/fixtures/input.c '#include "no/such/file.h"'
put examples/example.cu '#include <cuda_runtime.h>'
put common/log.c '#include "common/log.h"' '/* #include "not/a/file.h" */' '// #include "nor/this.h"'
expect "a tree within the rules passes" 0

# The same tree with one broken rule of each kind.
put format/trace_reader.c '#include "format/ktrace_format.h"' '#include "common/log.h"' \
	'#include <lz4.h>'
put meta/fatbin.c '#include "kernel_meta.h"' '#include "meta/missing.h"' '#include <cuda.h>' \
	'#include "format/trace_writer.c"'
put hashkern/ktrace_digest.c '#include "meta/kernel_meta.h"'
put tools/inspect/inspect.c '/* a comment: #include "interpose/tracer.h" is not an include */' \
	'#include "interpose/tracer.h"'
# a command's folder including another's; model/ and cli/ including each other
put tools/export/export_main.c '#include "tools/diff/diff.h"'
put tools/model/trace_model.c '#include "tools/model/trace_model.h"' '#include "tools/cli/cli_options.h"'
put interpose/driver/wrap_module.c '#include "interpose/registry/registry.c"'
put graph/graph.c '#include "common/log.h"'
put common/glob.c 'static const char *pattern = "*/*.py"; /* a string is no comment */' \
	'#include "format/ktrace_format.h"'
put interpose/config.h '/* interpose/config.h */'
put interpose/capture/launch_capture.c '#include "interpose/registry/registry.c"' \
	'#include "interpose/config.h"' '#include "interpose/driver/driver_real.h"'
cat > "$TMP/expected" <<'EOF'
common/glob.c:2: "format/ktrace_format.h": common/ may include only common/
format/trace_reader.c:2: "common/log.h": format/ may include only format/
format/trace_reader.c:3: <lz4.h> (liblz4): format/ may use only libc, libzstd
graph/graph.c:1: no layout rule for this folder (add it to docs/architecture.md and scripts/check-layout.py)
hashkern/ktrace_digest.c:1: "meta/kernel_meta.h": hashkern/ may include only hashkern/, common/
interpose/capture/launch_capture.c:2: "interpose/config.h": interpose/capture/ may include only interpose/model/, interpose/registry/, interpose/capture/, interpose/hash/, interpose/replay/, interpose/graph/, interpose/nvtx/, interpose/pystack/, interpose/driver/driver_real.h, interpose/driver/hooks.h, interpose/driver/symbols.h, interpose/tracer.h, common/, format/, hashkern/
interpose/driver/wrap_module.c:1: "interpose/registry/registry.c": interpose/driver/ may include only interpose/driver/, common/, format/
meta/fatbin.c:1: "kernel_meta.h" is not rooted at the repository root (write "meta/kernel_meta.h")
meta/fatbin.c:2: "meta/missing.h" names no file of the tree
meta/fatbin.c:3: <cuda.h> (CUDA): meta/ may use only libc, libelf, liblz4, libzstd, libdw
meta/fatbin.c:4: "format/trace_writer.c": meta/ may include only meta/, format/ktrace_format.h, common/
tools/export/export_main.c:1: "tools/diff/diff.h": tools/export/ may include only tools/export/, tools/model/, tools/cli/cli_options.h, format/, meta/, hashkern/, common/
tools/inspect/inspect.c:2: "interpose/tracer.h": tools/inspect/ may include only tools/inspect/, tools/model/, tools/cli/cli_options.h, format/, meta/, hashkern/, common/
tools/model/trace_model.c:2: "tools/cli/cli_options.h": tools/model/ may include only tools/model/, format/, meta/, hashkern/, common/
tools/cli/ktrace_check.c:2: "tools/model/trace_model.h": a cycle of folders (tools/cli/ -> tools/model/ -> tools/cli/)
tools/model/trace_model.c:2: "tools/cli/cli_options.h": a cycle of folders (tools/model/ -> tools/cli/ -> tools/model/)
EOF
expect "each broken rule is reported on its own line" 1

# A usage error is a failure, not a clean tree.
if python3 "$CHECK" --no-such-option > /dev/null 2>&1; then
	echo "FAIL: an unknown option is accepted"
	failed=$((failed + 1))
else
	echo "ok: an unknown option fails"
	passed=$((passed + 1))
fi

echo "check_layout_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
