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
# interpose/ in layers: driver/, model/, the peers (registry/, capture/, ...), the lifecycle on top
put interpose/tracer.h '/* interpose/tracer.h */'
put interpose/lifecycle.h '#include "interpose/driver/symbols.h"'
put interpose/init.c '#include "interpose/driver/driver_real.h"' '#include "include/ktrace.h"' \
	'#include "interpose/lifecycle.h"' '#include "interpose/registry/registry.h"' '#include "interpose/model/config.h"'
put interpose/driver/symbols.h '/* interpose/driver/symbols.h */'
put interpose/driver/driver_real.h '#include <cuda.h>' '#include "interpose/driver/symbols.h"'
put interpose/driver/wrap.h '#include "interpose/driver/driver_real.h"'
put interpose/model/config.h '/* interpose/model/config.h */'
put interpose/model/services.h '#include "interpose/driver/driver_real.h"' '#include "interpose/model/config.h"'
put interpose/registry/registry.h '#include "interpose/model/services.h"'
put interpose/registry/registry.c '#include "interpose/driver/driver_real.h"' \
	'#include "meta/kernel_meta.h"' '#include "interpose/registry/registry.h"'
put interpose/poller/poller.h '/* interpose/poller/poller.h */'
put interpose/hash/hash_pipeline.h '#include "interpose/model/services.h"'
put interpose/pystack/pystack.h '#include "interpose/model/config.h"'
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
# interpose/: an include upward from each layer, a peer's include of another peer, a subfolder
# without a rule, and two peers including each other (also a cycle of folders)
put interpose/driver/wrap_module.c '#include "interpose/driver/wrap.h"' '#include "interpose/model/config.h"'
put interpose/model/config.c '#include "interpose/model/config.h"' '#include "interpose/poller/poller.h"'
put interpose/capture/launch_capture.c '#include "interpose/model/services.h"' \
	'#include "interpose/registry/registry.h"' '#include "interpose/driver/wrap.h"'
put interpose/nvtx/nvtx_inject.c '#include "interpose/model/config.h"' '#include "interpose/lifecycle.h"'
put interpose/newpart/newpart.c '#include "common/log.h"'
put interpose/hash/hash_pipeline.c '#include "interpose/hash/hash_pipeline.h"' '#include "interpose/pystack/pystack.h"'
put interpose/pystack/pystack.c '#include "interpose/hash/hash_pipeline.h"'
put graph/graph.c '#include "common/log.h"'
put common/glob.c 'static const char *pattern = "*/*.py"; /* a string is no comment */' \
	'#include "format/ktrace_format.h"'
cat > "$TMP/expected" <<'EOF'
common/glob.c:2: "format/ktrace_format.h": common/ may include only common/
format/trace_reader.c:2: "common/log.h": format/ may include only format/
format/trace_reader.c:3: <lz4.h> (liblz4): format/ may use only libc, libzstd
graph/graph.c:1: no layout rule for this folder (add it to docs/architecture.md and scripts/check-layout.py)
hashkern/ktrace_digest.c:1: "meta/kernel_meta.h": hashkern/ may include only hashkern/, common/
interpose/capture/launch_capture.c:2: "interpose/registry/registry.h": interpose/capture/ may not include interpose/registry/: peers never include each other (what one asks of another goes through interpose/model/services.h)
interpose/capture/launch_capture.c:3: "interpose/driver/wrap.h": interpose/capture/ may include only interpose/capture/, interpose/model/, interpose/driver/driver_real.h, interpose/driver/hooks.h, interpose/driver/symbols.h, common/, format/, hashkern/
interpose/driver/wrap_module.c:2: "interpose/model/config.h": interpose/driver/ (the driver, layer 1) may not include interpose/model/ (the model, layer 2, above it)
interpose/hash/hash_pipeline.c:2: "interpose/pystack/pystack.h": interpose/hash/ may not include interpose/pystack/: peers never include each other (what one asks of another goes through interpose/model/services.h)
interpose/model/config.c:2: "interpose/poller/poller.h": interpose/model/ (the model, layer 2) may not include interpose/poller/ (a peer, layer 3, above it)
interpose/newpart/newpart.c:1: no layout rule for this folder (add it to docs/architecture.md and scripts/check-layout.py)
interpose/nvtx/nvtx_inject.c:2: "interpose/lifecycle.h": interpose/nvtx/ (a peer, layer 3) may not include interpose/ (the lifecycle, layer 4, above it)
interpose/pystack/pystack.c:1: "interpose/hash/hash_pipeline.h": interpose/pystack/ may not include interpose/hash/: peers never include each other (what one asks of another goes through interpose/model/services.h)
meta/fatbin.c:1: "kernel_meta.h" is not rooted at the repository root (write "meta/kernel_meta.h")
meta/fatbin.c:2: "meta/missing.h" names no file of the tree
meta/fatbin.c:3: <cuda.h> (CUDA): meta/ may use only libc, libelf, liblz4, libzstd, libdw
meta/fatbin.c:4: "format/trace_writer.c": meta/ may include only meta/, format/ktrace_format.h, common/
tools/export/export_main.c:1: "tools/diff/diff.h": tools/export/ may include only tools/export/, tools/model/, tools/cli/cli_options.h, format/, meta/, hashkern/, common/
tools/inspect/inspect.c:2: "interpose/tracer.h": tools/inspect/ may include only tools/inspect/, tools/model/, tools/cli/cli_options.h, format/, meta/, hashkern/, common/
tools/model/trace_model.c:2: "tools/cli/cli_options.h": tools/model/ may include only tools/model/, format/, meta/, hashkern/, common/
interpose/driver/wrap_module.c:2: "interpose/model/config.h": a cycle of folders (interpose/driver/ -> interpose/model/ -> interpose/driver/)
interpose/hash/hash_pipeline.c:2: "interpose/pystack/pystack.h": a cycle of folders (interpose/hash/ -> interpose/pystack/ -> interpose/hash/)
interpose/pystack/pystack.c:1: "interpose/hash/hash_pipeline.h": a cycle of folders (interpose/pystack/ -> interpose/hash/ -> interpose/pystack/)
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
