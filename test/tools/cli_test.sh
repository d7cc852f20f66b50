#!/bin/sh
# test/tools/cli_test.sh: the command line as a new user meets it (run by build/tools_cli_test).
#
# Every tool is run as a program, from a scratch folder, on traces written by
# build/ktgen and on the example traces of examples/traces: help texts, --version,
# option and error rules, what each count says, the order of ktrace-dump's
# records, what `ktrace run` says when no trace came out, the man pages.
# Each case prints "ok   NAME" or "FAIL NAME: why".
#
#   sh test/tools/cli_test.sh                 all cases (BUILD=build by default)
#   sh test/tools/cli_test.sh NAME...         only the cases named
set -u
ROOT=$(pwd)
B=$ROOT/${BUILD:-build}
T=$(mktemp -d "${TMPDIR:-/tmp}/ktrace-clitest.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
# scratch of the commands run here (the traces ktrace check keeps) goes into T too
export TMPDIR="$T"
fail=0
ncase=0
only="$*"

cd "$T" || exit 1
# Sanitized builds (make check-asan): libktrace.so, the fake drivers and the test programs
# carry ASan, and are preloaded or loaded into programs that do not come with it.
export ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=0:handle_segv=0:handle_abort=0:allow_user_segv_handler=1"
sanitized=0
if command -v ldd >/dev/null 2>&1 && ldd "$B/ktrace" 2>/dev/null | grep -q libasan; then sanitized=1; fi
# What ktrace run preloads into programs that are not ours (a shell, /bin/true): the
# real library, or in a sanitized build the front-end tests' stand-in (no ASan in it).
plain_lib=$B/libktrace.so
if [ $sanitized = 1 ] && [ -f "$B/diff_fakelib.so" ]; then plain_lib=$B/diff_fakelib.so; fi
"$B/ktgen" basic.ktrace || exit 1
"$B/ktgen" --scenario threads threads.ktrace || exit 1

# run OUT_FILE ERR_FILE CMD...: the exit status in $rc
run() {
	o=$1
	e=$2
	shift 2
	"$@" >"$o" 2>"$e"
	rc=$?
}

bad() {
	echo "FAIL $name: $*"
	ok=0
}

# expect_rc WANT: the last run's status
expect_rc() {
	[ "$rc" = "$1" ] || bad "exit status $rc, expected $1 ($(head -c 300 err))"
}

# has FILE TEXT: FILE contains the fixed string TEXT
has() {
	grep -qF -- "$2" "$1" || bad "$1 lacks '$2': $(head -c 400 "$1")"
}

hasnt() {
	if grep -qF -- "$2" "$1"; then bad "$1 has '$2'"; fi
}

# case NAME: run case_NAME (unless other cases were named)
case_() {
	name=$1
	if [ -n "$only" ] && ! echo " $only " | grep -qF " $name "; then
		return
	fi
	ncase=$((ncase + 1))
	ok=1
	"case_$name"
	if [ $ok = 1 ]; then echo "ok   $name"; else fail=1; fi
}

TOOLS="ktrace-dump ktrace-diff ktrace-inspect ktrace-hash ktrace-export ktrace"

# ---- help and version ------------------------------------------------------------------

# Every tool and subcommand prints its version, and its help fits 80 columns.
case_version_everywhere() {
	for t in $TOOLS; do
		run out err "$B/$t" --version
		expect_rc 0
		has out "0.1.0"
	done
}

help_texts() {
	for t in ktrace-dump ktrace-diff ktrace-inspect ktrace-hash ktrace-export; do
		echo "$B/$t --help"
	done
	for s in "" run check; do
		echo "$B/ktrace $s --help"
	done
}

# Help lines fit 80 columns; within one help text every option's description
# starts at the same column.
case_help_layout() {
	help_texts | while read -r cmd; do
		# shellcheck disable=SC2086
		$cmd >help.txt 2>&1 || echo "$cmd: exit $?" >>help.bad
		awk -v c="$cmd" 'length($0) > 80 { printf "%s: line %d has %d columns\n", c, NR, length($0) }' \
			help.txt >>help.bad
		# "  -x, --opt ARG   text" or "  --opt ARG   text": where the text starts
		awk -v c="$cmd" '/^  -/ { if (match($0, /^  -[^ ]*( [A-Z:.]+)?(, --[^ ]+( [A-Z:.]+)?)?  +/)) {
				col = RLENGTH; if (want && col != want) printf "%s: option text at column %d, not %d: %s\n", c, col, want, $0
				if (!want) want = col } }' help.txt >>help.bad
	done
	# ktrace's own help: the commands' descriptions start where the options' do
	"$B/ktrace" --help >help.txt 2>&1
	awk '/^  [a-z-]/ { if (match($0, /^  [^ ]+( [^ ]+)*  +/)) cols[RLENGTH] = cols[RLENGTH] " " NR }
		END { n = 0; for (c in cols) n++; if (n > 1) for (c in cols) printf "ktrace --help: text at column %d on lines%s\n", c, cols[c] }' \
		help.txt >>help.bad
	if [ -s help.bad ]; then bad "$(cat help.bad)"; fi
	rm -f help.bad
}

# `ktrace help CMD` is `ktrace CMD --help`.
case_help_command() {
	for s in run check dump diff inspect hash export; do
		run out err "$B/ktrace" help "$s"
		expect_rc 0
		"$B/ktrace" "$s" --help >want 2>&1
		cmp -s out want || bad "ktrace help $s differs from ktrace $s --help"
	done
	run out err "$B/ktrace" help nosuch
	expect_rc 2
	has err "ktrace: unknown command 'nosuch'"
}

# The check options are listed once each, the tracing and report options in
# sections of their own; the note about --json follows --json.
case_check_help_sections() {
	run out err "$B/ktrace" check --help
	expect_rc 0
	[ "$(grep -c -- '--quiet' out)" = 1 ] || bad "--quiet listed $(grep -c -- '--quiet' out) times"
	has out "tracing options:"
	has out "report options:"
	json_line=$(grep -n -- '--json' out | head -1 | cut -d: -f1)
	note_line=$(grep -n "stdout is JSON only" out | head -1 | cut -d: -f1)
	if [ -z "$json_line" ] || [ -z "$note_line" ] || [ "$note_line" -lt "$json_line" ]; then
		bad "the --json note (line $note_line) comes before --json (line $json_line)"
	fi
}

# Each man page has OPTIONS and EXAMPLES, and names every long option its tool's help lists.
case_man_pages() {
	for t in $TOOLS; do
		m=$ROOT/docs/man/$t.1
		grep -q '^\.SH OPTIONS' "$m" || bad "$t.1 has no OPTIONS section"
		grep -q '^\.SH EXAMPLES' "$m" || bad "$t.1 has no EXAMPLES section"
		if [ "$t" = ktrace ]; then helps="ktrace --help|ktrace run --help|ktrace check --help"; else helps="$t --help"; fi
		echo "$helps" | tr '|' '\n' | while read -r h; do
			# shellcheck disable=SC2086
			$B/$h 2>&1 | grep -oE -- '--[a-z][a-z-]+' | sort -u | while read -r opt; do
				esc=$(echo "$opt" | sed 's/-/\\\\-/g')
				grep -qE -- "$esc([^a-z-]|$)" "$m" || echo "$t.1 does not describe $opt"
			done
		done >>man.bad
	done
	if [ -s man.bad ]; then bad "$(cat man.bad)"; fi
	rm -f man.bad
	# and format without a warning at the widths man uses (MANWIDTH 60 to 120: the line
	# length is two less), when groff is there
	if command -v groff >/dev/null 2>&1; then
		for ll in 58 68 78 88 98 118; do
			for t in $TOOLS; do
				groff -Tutf8 -man -ww -z -rLL=${ll}n "$ROOT/docs/man/$t.1" 2>&1 | sed "s/^/$t.1, line length ${ll}n: /"
			done
		done >groff.out
		if [ -s groff.out ]; then bad "$(head -5 groff.out)"; fi
	fi
}

# ---- operands and option syntax ------------------------------------------------------------

# "-" is standard input for every tool that reads files; one standard input is not two files.
case_stdin_operand() {
	run out err "$B/ktrace-dump" - <basic.ktrace
	expect_rc 0
	has out "header seq 0"
	run out err "$B/ktrace-hash" - <basic.ktrace
	expect_rc 0
	run want err "$B/ktrace-hash" basic.ktrace
	[ "$(cut -c1-16 out)" = "$(cut -c1-16 want)" ] || bad "ktrace-hash - and the file differ"
	if [ -f "$B/test/capture/kernels.cubin" ]; then
		cubin=$B/test/capture/kernels.cubin
		run want err "$B/ktrace-inspect" "$cubin"
		run out err "$B/ktrace-inspect" - <"$cubin"
		expect_rc 0
		sed 1d want >want.body
		sed 1d out >out.body
		cmp -s want.body out.body || bad "ktrace-inspect - differs from the file: $(diff want.body out.body | head -5)"
		has out "== -:"
	fi
	run out err "$B/ktrace-diff" - - <basic.ktrace
	expect_rc 2
	has err "ktrace-diff: '-' given twice: standard input is one trace"
}

# Short options take their value attached (-oFILE), long ones after '=';
# every tool accepts a unique prefix of a long option.
case_option_forms() {
	run out err "$B/ktrace-dump" --js --rang=0:1 basic.ktrace
	expect_rc 0
	has out '"type":"launch"'
	run out err "$B/ktrace-diff" --js basic.ktrace basic.ktrace
	expect_rc 0
	run out err "$B/ktrace-hash" --vers
	expect_rc 0
	run out err "$B/ktrace-inspect" --vers
	expect_rc 0
	run out err "$B/ktrace" check --vers
	expect_rc 0
	run out err "$B/ktrace" run --vers
	expect_rc 0
	run out err "$B/ktrace-export" --vers
	expect_rc 0
	run out err "$B/ktrace-export" -q -oshort.json basic.ktrace
	expect_rc 0
	[ -s short.json ] || bad "ktrace-export -oFILE wrote no FILE"
	run out err env KTRACE_LIB=/nonexistent/libktrace.so "$B/ktrace" run -ox.ktrace -- true
	expect_rc 2
	has err "KTRACE_LIB=/nonexistent/libktrace.so"
	# options after the files, as in the other readers
	run out err "$B/ktrace-hash" basic.ktrace --version
	expect_rc 0
	has out "ktrace-hash 0.1.0"
}

# ---- errors ---------------------------------------------------------------------------------

# One mistake, one line: every tool and subcommand says the same of an unknown option
# (no usage dump, no getopt wording), prints nothing on stdout and exits 2.
case_bad_option_everywhere() {
	for t in $TOOLS "ktrace run" "ktrace check"; do
		# shellcheck disable=SC2086
		run out err $B/$t --bogus basic.ktrace
		expect_rc 2
		if [ -s out ]; then bad "$t --bogus wrote to stdout: $(head -c 200 out)"; fi
		want="$t: unknown option '--bogus' (try --help)"
		[ "$(cat err)" = "$want" ] || bad "$t --bogus: '$(head -c 300 err)', expected '$want'"
	done
	# a missing operand: one line naming the tool, exit status 2, no usage
	for c in ktrace-dump "ktrace-diff basic.ktrace" ktrace-inspect ktrace-export "ktrace run" "ktrace check"; do
		# shellcheck disable=SC2086
		run out err $B/$c
		expect_rc 2
		t=$(echo "$c" | sed 's/ basic.ktrace//')
		if [ -s out ] || [ "$(wc -l <err)" != 1 ] || ! grep -q "^$t: " err; then
			bad "$c: stdout '$(head -c 100 out)', stderr '$(head -c 300 err)'"
		fi
	done
}

# Output that cannot be written is an error in every tool and output mode: one line naming
# standard output (or the report file), exit status 2 (a full disk: /dev/full).
case_write_errors() {
	[ -w /dev/full ] || return 0
	ex1=$ROOT/examples/traces/atomic_sum-run1.ktrace
	ex2=$ROOT/examples/traces/atomic_sum-run2.ktrace
	for c in "ktrace-dump $ex1" "ktrace-dump --json $ex1" "ktrace-dump --summary $ex1" \
		"ktrace-dump --summary --json $ex1" "ktrace-dump --group stream $ex1" "ktrace-dump --range 3 $ex1" \
		"ktrace-dump --help" "ktrace-diff $ex1 $ex2" "ktrace-diff --json $ex1 $ex1" \
		"ktrace-diff --json --all $ex1 $ex2" "ktrace-diff --github $ex1 $ex2" "ktrace-diff --version" \
		"ktrace-inspect --version" "ktrace-hash $ex1" "ktrace-export -q -o - $ex1" "ktrace dump $ex1"; do
		t=${c%% *}
		if [ "$t" = ktrace ]; then t=ktrace-dump; fi
		# shellcheck disable=SC2086
		$B/$c >/dev/full 2>err
		rc=$?
		[ "$rc" = 2 ] || bad "$c >/dev/full: exit status $rc, expected 2"
		[ "$(cat err)" = "$t: stdout: write error: No space left on device" ] ||
			bad "$c >/dev/full: stderr '$(head -c 300 err)'"
	done
	for o in --junit --markdown --perfetto; do
		run out err "$B/ktrace-diff" $o /dev/full "$ex1" "$ex2"
		expect_rc 2
		[ "$(cat err)" = "ktrace-diff: /dev/full: write error: No space left on device" ] ||
			bad "ktrace-diff $o /dev/full: stderr '$(head -c 300 err)'"
	done
}

# A file that cannot be opened is "<tool>: <file>: cannot open: <why>" in every tool.
case_cannot_open() {
	for t in ktrace-dump ktrace-export ktrace-inspect ktrace-hash; do
		run out err "$B/$t" nosuch.file
		expect_rc 2
		[ "$(cat err)" = "$t: nosuch.file: cannot open: No such file or directory" ] || bad "$t: '$(cat err)'"
	done
	run out err "$B/ktrace-diff" nosuch.file basic.ktrace
	expect_rc 2
	[ "$(cat err)" = "ktrace-diff: nosuch.file: cannot open: No such file or directory" ] ||
		bad "ktrace-diff: '$(cat err)'"
}

# A truncated trace is an error like any other: no "warning:" with exit status 2.
case_truncated_is_error() {
	head -c 300 basic.ktrace >cut.ktrace
	run out err "$B/ktrace-dump" cut.ktrace
	expect_rc 2
	hasnt err "warning"
	has err "ktrace-dump: cut.ktrace: truncated:"
	[ "$(wc -l <err)" = 1 ] || bad "$(wc -l <err) lines on stderr"
}

# Filters that select nothing say so on stderr (the exit status stays 0: the file was read).
case_empty_selection() {
	run out err "$B/ktrace-dump" --kernel nomatch basic.ktrace
	expect_rc 0
	has err "ktrace-dump: basic.ktrace: no launch of a kernel matching 'nomatch'"
	run out err "$B/ktrace-dump" --range 1000:2000 basic.ktrace
	expect_rc 0
	[ "$(cat err)" = "ktrace-dump: basic.ktrace: no launch, copy or memset has an op number from 1000 to 1999 (--range 1000:2000): the trace has ops 0 to 9" ] ||
		bad "--range 1000:2000: $(cat err)"
	run out err "$B/ktrace-dump" --range 1000 basic.ktrace
	has err "ktrace-dump: basic.ktrace: no launch, copy or memset is op 1000 (--range 1000): the trace has ops 0 to 9"
	run out err "$B/ktrace-dump" --range 1000: basic.ktrace
	has err "no launch, copy or memset has an op number from 1000 on (--range 1000:)"
	run out err "$B/ktrace-dump" --kernel vecAdd --range 1000 basic.ktrace
	has err "ktrace-dump: basic.ktrace: no launch of a kernel matching 'vecAdd' in --range 1000"
	run out err "$B/ktrace-dump" --range 2:2 basic.ktrace
	expect_rc 2
	has err "ktrace-dump: --range '2:2': A must be less than B"
	run out err "$B/ktrace-dump" --range 4:3 basic.ktrace
	expect_rc 2
	has err "ktrace-dump: --range '4:3': A must be less than B"
}

# A filter that selects no launch, copy or memset prints no ORDER record either (text and
# JSON); one that selects some keeps the ORDER records about them: their streams, the
# events those streams record or wait for, the synchronisations of their contexts.
case_filter_orders() {
	ex1=$ROOT/examples/traces/atomic_sum-run1.ktrace
	"$B/ktgen" --scenario order-filter of.ktrace
	for f in "$ex1" of.ktrace; do
		for a in "--kernel nosuch" "--nvtx ." "--range 1000" "--kernel nosuch --range 0:2"; do
			for json in "" --json; do
				# shellcheck disable=SC2086
				run out err "$B/ktrace-dump" $json $a "$f"
				expect_rc 0
				if [ -s out ]; then bad "ktrace-dump $json $a $(basename "$f") printed: $(head -c 200 out)"; fi
				[ "$(wc -l <err)" = 1 ] || bad "ktrace-dump $json $a $(basename "$f"): stderr '$(cat err)'"
			done
		done
	done
	# of.ktrace has ops 0 to 3, and ORDER records made before op 4
	run out err "$B/ktrace-dump" --range 4 of.ktrace
	if [ -s out ]; then bad "--range 4 (no op 4) printed: $(head -c 200 out)"; fi
	# the example's launches of atomic_sum ran in the context cuCtxSynchronize waited for
	run out err "$B/ktrace-dump" --kernel atomic_sum "$ex1"
	has out "ctx_sync before op 65"
	# --range alone: the stream creations and the calls made from op 2 to op 3, around the
	# launch, in seq order
	run out err "$B/ktrace-dump" --range 2 of.ktrace
	[ "$(seqs out | tr '\n' ' ')" = "4 5 6 11 12 13 14 15 " ] || bad "--range 2: seqs $(seqs out | tr '\n' ' ')"
	# --kernel: kern_c's stream 0x5002, its event 0xe2, its context; not kern_a's stream 0x5001
	run out err "$B/ktrace-dump" --kernel kern_c of.ktrace
	[ "$(seqs out | tr '\n' ' ')" = "3 13 6 11 12 14 17 " ] || bad "--kernel kern_c: seqs $(seqs out | tr '\n' ' ')"
}

# A comparison that compared nothing is an error in every report: a trace cut at 300 bytes
# (--partial) against the whole one.
case_nothing_compared() {
	head -c 300 basic.ktrace >cut3.ktrace
	run out err "$B/ktrace-diff" --partial --github --junit nc.xml --markdown nc.md cut3.ktrace basic.ktrace
	expect_rc 2
	has out "result: NOTHING COMPARED: A has no launch to compare"
	has out "::error title=ktrace determinism check::nothing compared"
	hasnt out "::notice"
	hasnt out "no divergence"
	has err "ktrace-diff: nothing compared: cut3.ktrace has no launch to compare with basic.ktrace"
	has nc.xml '<error type="nothing_compared"'
	has nc.md "NOTHING COMPARED (an error)"
	run out err "$B/ktrace-diff" --partial --json cut3.ktrace basic.ktrace
	expect_rc 2
	has out '"result": "nothing_compared"'
	has out '"exit_code": 2'
	hasnt out '"identical"'
}

# ---- ktrace-dump's order -------------------------------------------------------------------

# seqs of the records printed, one per line (text or JSON)
seqs() {
	sed -nE 's/^[a-z_]+( [0-9]+| op [0-9]+| exec [0-9]+ revision [0-9]+)? seq ([0-9]+)[ :].*/\2/p
		s/^\{"type":"[a-z_]+","seq":([0-9]+),.*/\1/p' "$1"
}

increasing() {
	seqs "$1" | awk 'NR > 1 && $1 <= last { bad = 1 } { last = $1 } END { exit bad }'
}

# Records come out in seq order, text and JSON, whatever order threads wrote them in,
# GRAPH records among them.
case_dump_seq_order() {
	"$B/ktgen" --scenario graph-threads graph-threads.ktrace
	for f in threads.ktrace graph-threads.ktrace basic.ktrace "$ROOT/examples/traces/atomic_sum-run1.ktrace"; do
		run out err "$B/ktrace-dump" "$f"
		expect_rc 0
		increasing out || bad "text of $f not in seq order: $(seqs out | tr '\n' ' ')"
		run out err "$B/ktrace-dump" --json "$f"
		expect_rc 0
		increasing out || bad "JSON of $f not in seq order: $(seqs out | tr '\n' ' ')"
	done
	# every record of graph-threads.ktrace, its GRAPH records written after later launches too
	for json in "" --json; do
		# shellcheck disable=SC2086
		run out err "$B/ktrace-dump" $json graph-threads.ktrace
		[ "$(seqs out | tr '\n' ' ')" = "0 1 2 3 4 5 6 7 8 9 10 11 " ] ||
			bad "graph-threads.ktrace ${json:-text}: seqs $(seqs out | tr '\n' ' ')"
	done
	# a launch before its kernel's record still has the kernel's name
	run out err "$B/ktrace-dump" threads.ktrace
	grep -qE "^launch( op)? 3 seq 6 t=\+0.000004000 kernel 2 triton_poi_fused_add_0$" out ||
		bad "launch 3, before its kernel's record, without the kernel's name"
	# grouping on request: each stream's operations together, in seq order
	run out err "$B/ktrace-dump" --group stream threads.ktrace
	expect_rc 0
	[ "$(grep -c '^== stream' out)" = 2 ] || bad "--group stream: $(grep -c '^== stream' out) stream headings"
	sed -n '/^== stream 0x5000/,/^==/p' out | sed -nE 's/^(launch|memcpy|memset)( op)? ([0-9]+).*/\1 \3/p' >s1
	[ "$(tr '\n' ',' <s1)" = "launch 0,memcpy 1,launch 3," ] || bad "--group stream, stream 0x5000: $(tr '\n' ',' <s1)"
	run out err "$B/ktrace-dump" --group kernel threads.ktrace
	expect_rc 0
	[ "$(grep -c '^== kernel' out)" = 2 ] || bad "--group kernel: $(grep -c '^== kernel' out) kernel headings"
	run out err "$B/ktrace-dump" --group bogus threads.ktrace
	expect_rc 2
	has err "ktrace-dump: --group 'bogus': expected 'stream' or 'kernel'"
}

# ---- what each number counts ------------------------------------------------------------------

# Launches, copies and memsets share one numbering, and every line says so
# ("op"); the end record's count is of that numbering; the summary's bytes
# hashed are the counters' (every digest, before and after); no "1 launches".
case_counts_agree() {
	ex=$ROOT/examples/traces/atomic_sum-run1.ktrace
	run out err "$B/ktrace-dump" "$ex"
	expect_rc 0
	grep -qE '^launch op [0-9]+ seq ' out || bad "launch lines do not say 'op'"
	if grep -qE '^launch [0-9]+ seq ' out; then bad "a launch line without 'op'"; fi
	grep -qE '^end seq [0-9]+: .*, [0-9]+ ops \(launches, copies, memsets\)$' out ||
		bad "end line: $(grep '^end' out)"
	run out err "$B/ktrace-dump" --summary "$ex"
	expect_rc 0
	summary_bytes=$(sed -nE 's/^summary of .*, ([0-9]+) bytes hashed.*/\1/p' out)
	counter_bytes=$(sed -nE 's/.* hash_bytes=([0-9]+).*/\1/p' out)
	[ -n "$summary_bytes" ] && [ "$summary_bytes" = "$counter_bytes" ] ||
		bad "summary says $summary_bytes bytes hashed, the counters $counter_bytes"
	col=$(awk '/^ +[0-9]+ +[0-9]+ +[0-9]+  /{ s += $2 } END { print s }' out)
	[ "$col" = "$summary_bytes" ] || bad "the per-kernel column adds up to $col, not $summary_bytes"
	run out err "$B/ktrace-dump" --summary --range 0:1 basic.ktrace
	expect_rc 0
	has out " records, 1 launch of 1 kernel, "
	# a COUNTERS record lists the counters that are not zero: an empty one says so
	"$B/ktgen" --scenario order ord.ktrace
	run out err "$B/ktrace-dump" ord.ktrace
	grep -qE '^counters seq [0-9]+: all zero$' out || bad "empty COUNTERS record: $(grep '^counters' out)"
	run out err "$B/ktrace-dump" --summary ord.ktrace
	has out "  counters: all zero"
	head -c 300 basic.ktrace >cut1.ktrace
	run out err "$B/ktrace-dump" cut1.ktrace
	if grep -qE '(^|[^0-9])1 (launches|records|kernels|complete records)' out err; then
		bad "a plural after 1: $(grep -hE '(^|[^0-9])1 (launches|records|kernels)' out err)"
	fi
	# ktrace-diff's reports, one launch each way, and nothing compared
	"$B/ktgen" --scenario many --launches 1 one.ktrace
	for pair in "one.ktrace one.ktrace" "--partial cut1.ktrace basic.ktrace" "basic.ktrace basic.ktrace"; do
		# shellcheck disable=SC2086
		"$B/ktrace-diff" --github --junit d.xml --markdown d.md $pair >out 2>err
		if grep -hE '(^|[^0-9.])1 (launches|records|kernels|hash results|compared launches)|of the [01] launch' \
			out err d.xml d.md; then
			bad "ktrace-diff $pair: a plural after 1 or 'none of the 0'"
		fi
		rm -f d.xml d.md
	done
}

# The format version is in the header line (text and JSON) and the summary;
# the summary always has its tracing-cost line, saying why when there is no number.
case_format_version() {
	run out err "$B/ktrace-dump" basic.ktrace
	grep -qE '^header seq 0: .* format 1\.[0-9]+ digest kt64v1$' out || bad "header line: $(head -1 out)"
	run out err "$B/ktrace-dump" --json basic.ktrace
	head -1 out | grep -qE '"format":"1\.[0-9]+"' || bad "JSON header: $(head -c 200 out)"
	"$B/ktgen" --major 1 v10.ktrace
	run out err "$B/ktrace-dump" --summary v10.ktrace
	has out "summary of v10.ktrace (format 1.0):"
	has out "ktrace host time per traced launch: not recorded (format 1.0; self-timing came with 1.1)"
	run out err "$B/ktrace-dump" --summary basic.ktrace
	has out "ktrace host time per traced launch: not measured (no launch was sampled)"
	# the docs say how launches are sampled for it as the library does: by a hash, not every 16th
	if grep -rnE 'every 16th launch' "$ROOT/README.md" "$ROOT/docs" "$ROOT/docs/man"; then
		bad "the docs say every 16th launch is timed"
	fi
}

# ---- the example -----------------------------------------------------------------------------

# The shipped example traces are of the current format, carry the parameter
# names (DWARF, the example is built with -G) and a tracing cost, and diverge
# in atomic_sum; generated names say "generated", never a source they did not come from.
case_example() {
	ex1=$ROOT/examples/traces/atomic_sum-run1.ktrace
	ex2=$ROOT/examples/traces/atomic_sum-run2.ktrace
	run out err "$B/ktrace-dump" basic.ktrace
	current=$(sed -nE 's/^header .* format ([0-9.]+) .*/\1/p' out)
	run out err "$B/ktrace-dump" "$ex1"
	grep -q " format $current digest" out ||
		bad "the example traces are not of the current format $current (make example-traces records them again)"
	grep -qE '^  arg 1 sums \(float\*\) = ' out || bad "atomic_sum's argument 1 is not named sums"
	run out err "$B/ktrace-dump" --json "$ex1"
	srcs=$(grep '"type":"kernel"' out | grep -oE '"name_source":"[a-z_]+"' | sort -u | tr '\n' ' ')
	[ "$srcs" = '"name_source":"dwarf" ' ] || bad "example kernels' name sources: $srcs"
	run out err "$B/ktrace-dump" --summary "$ex1"
	grep -qE '^  ktrace host time per traced launch: [0-9]+ ns \(mean of [0-9]+ sampled launch' out ||
		bad "the example trace has no tracing cost: $(grep 'host time' out)"
	run out err "$B/ktrace-diff" "$ex1" "$ex2"
	expect_rc 1
	has out "first divergence: atomic_sum(float const*, float*, int)"
	if [ -f "$B/examples/atomic_sum.fatbin" ]; then
		run out err "$B/ktrace-inspect" --summary "$B/examples/atomic_sum.fatbin"
		expect_rc 0
		grep -qE 'names: dwarf [0-9]+;' out || bad "the example's fatbin: $(cat out)"
	fi
	if [ -f "$B/cubins/kernels_sm90.cubin" ]; then
		run out err "$B/ktrace-inspect" "$B/cubins/kernels_sm90.cubin"
		hasnt out "demangled  "
		has out "  arg0                 generated       int*"
	fi
}

# ---- ktrace run --------------------------------------------------------------------------------

# ktrace run exits as its command did, says when no trace came out, and a
# command that cannot be run is exit status 127 (not found) or 126, as in a shell.
case_run_outcomes() {
	export KTRACE_LIB="$plain_lib"
	# (a driver on the library path: the test driver)
	run out err env LD_LIBRARY_PATH="$B/fakecuda" "$B/ktrace" run -- /bin/true
	expect_rc 0
	has err "ktrace run: no trace was written: '/bin/true' did not use the CUDA driver"
	run out err "$B/ktrace" run -- /nonexistent/program
	expect_rc 127
	[ "$(cat err)" = "ktrace run: cannot run '/nonexistent/program': No such file or directory" ] ||
		bad "stderr: $(cat err)"
	printf '#!/bin/sh\n' >noexec.sh
	chmod 0644 noexec.sh
	run out err "$B/ktrace" run -- ./noexec.sh
	expect_rc 126
	run out err "$B/ktrace" run -- sh -c 'exit 5'
	expect_rc 5
	run out err sh -c "\"$B/ktrace\" run -- sh -c 'kill -TERM \$\$'"
	expect_rc 143
	unset KTRACE_LIB
	if [ -x "$B/capture_results_app" ] && [ -f "$B/fakecuda-real/libcuda.so.1" ]; then
		mkdir -p sub
		# a relative -o is where ktrace run started, whatever directory the command works in
		run out err env LD_LIBRARY_PATH="$B/fakecuda-real" "$B/ktrace" run --quiet -o cr.ktrace -- \
			sh -c "cd sub && exec \"$B/capture_results_app\""
		expect_rc 0
		hasnt err "no trace was written"
		[ -s cr.ktrace ] || bad "no cr.ktrace where ktrace run started"
	fi
}

# ktrace run -o FILE over an existing FILE: refused before the command starts (the library
# would run it untraced), one line naming the setting, the file and --overwrite; with
# --overwrite (or KTRACE_OVERWRITE=1) the command runs and its trace replaces the file.  Only
# a pattern that names one file is checked (%% is a percent sign; %p, %r... name others).
# A symbolic link or a directory is refused whatever --overwrite says.
case_run_output_exists() {
	export KTRACE_LIB="$plain_lib"
	echo old >exists.ktrace
	rm -f ran
	run out err "$B/ktrace" run -o exists.ktrace -- sh -c 'echo >ran'
	expect_rc 2
	[ "$(cat err)" = "ktrace run: -o exists.ktrace: the file exists (--overwrite replaces it)" ] ||
		bad "stderr: $(cat err)"
	[ -e ran ] && bad "the command ran"
	[ "$(cat exists.ktrace)" = old ] || bad "exists.ktrace changed"
	run out err env KTRACE_OUTPUT=exists.ktrace "$B/ktrace" run -- sh -c 'echo >ran'
	expect_rc 2
	[ "$(cat err)" = "ktrace run: KTRACE_OUTPUT=exists.ktrace: the file exists (--overwrite replaces it)" ] ||
		bad "stderr: $(cat err)"
	echo old >'pc%.ktrace'
	run out err "$B/ktrace" run -o 'pc%%.ktrace' -- sh -c 'echo >ran'
	expect_rc 2
	has err "ktrace run: -o pc%.ktrace: the file exists"
	[ -e ran ] && bad "the command ran"
	ln -sf exists.ktrace link.ktrace
	run out err "$B/ktrace" run --overwrite -o link.ktrace -- sh -c 'echo >ran'
	expect_rc 2
	[ "$(cat err)" = "ktrace run: -o link.ktrace: is a symbolic link; ktrace never writes a trace through one" ] ||
		bad "stderr: $(cat err)"
	mkdir -p adir
	run out err "$B/ktrace" run --overwrite -o adir -- sh -c 'echo >ran'
	expect_rc 2
	has err "ktrace run: -o adir: is a directory, not a trace file"
	[ -e ran ] && bad "the command ran"
	# a pattern with %p names a file of the command's pid: not checked, the command runs
	run out err "$B/ktrace" run -o 'exists.ktrace%p' -- sh -c 'echo >ran'
	expect_rc 0
	[ -e ran ] || bad "the command did not run with -o exists.ktrace%p"
	rm -f ran
	run out err env KTRACE_OVERWRITE=1 "$B/ktrace" run -o exists.ktrace -- sh -c 'echo >ran'
	expect_rc 0
	[ -e ran ] || bad "the command did not run with KTRACE_OVERWRITE=1"
	unset KTRACE_LIB
	if [ -x "$B/capture_results_app" ] && [ -f "$B/fakecuda-real/libcuda.so.1" ]; then
		run out err env LD_LIBRARY_PATH="$B/fakecuda-real" "$B/ktrace" run --quiet --overwrite -o exists.ktrace -- \
			"$B/capture_results_app"
		expect_rc 0
		"$B/ktrace-dump" --summary exists.ktrace >sum 2>&1 || bad "exists.ktrace is no trace: $(head -c 300 sum)"
	fi
}

# A rank of a job: a JOB record right after the HEADER says which, from its launcher's
# variables (docs/format.md "JOB"); a process no launcher started has none.
case_job_record() {
	[ -x "$B/capture_results_app" ] && [ -f "$B/fakecuda-real/libcuda.so.1" ] || return 0
	clean="env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u LOCAL_WORLD_SIZE -u GROUP_RANK -u TORCHELASTIC_RUN_ID
		-u MASTER_ADDR -u MASTER_PORT -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u SLURM_PROCID -u SLURM_NTASKS
		-u SLURM_LOCALID -u SLURM_NODEID -u SLURM_JOB_ID LD_LIBRARY_PATH=$B/fakecuda-real"
	# shellcheck disable=SC2086
	run out err $clean RANK=3 WORLD_SIZE=4 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 GROUP_RANK=1 TORCHELASTIC_RUN_ID=run7 \
		MASTER_ADDR=node0 MASTER_PORT=29500 "$B/ktrace" run --quiet -o job.ktrace -- "$B/capture_results_app"
	expect_rc 0
	run out err "$B/ktrace-dump" --json job.ktrace
	grep '"type":"job"' out >job.json
	has job.json '"type":"job","seq":1,'
	has job.json '"rank":3,"world_size":4,"local_rank":1,"local_world_size":2,"node_rank":1,"launcher":"torchrun","job_id":"run7","coordinator":"node0:29500"}'
	run out err "$B/ktrace-dump" job.ktrace
	has out "job seq 1: rank 3 world_size 4 local_rank 1 local_world_size 2 node_rank 1 launcher torchrun job_id run7 coordinator node0:29500"
	# Slurm: what it does not set reads -1
	# shellcheck disable=SC2086
	run out err $clean SLURM_PROCID=5 SLURM_NTASKS=8 SLURM_JOB_ID=42 "$B/ktrace" run --quiet --overwrite -o job.ktrace -- \
		"$B/capture_results_app"
	run out err "$B/ktrace-dump" --json job.ktrace
	has out '"rank":5,"world_size":8,"local_rank":-1,"local_world_size":-1,"node_rank":-1,"launcher":"slurm","job_id":"42","coordinator":""}'
	# no launcher: no JOB record
	# shellcheck disable=SC2086
	run out err $clean "$B/ktrace" run --quiet --overwrite -o job.ktrace -- "$B/capture_results_app"
	run out err "$B/ktrace-dump" --json job.ktrace
	hasnt out '"type":"job"'
}

# Without a CUDA driver (no libcuda.so.1 on the library path, as on this CI machine: the
# test driver is not on LD_LIBRARY_PATH here), ktrace run says that no libcuda.so.1 was
# found, and ktrace check says so once, runs the program no more (no second warm-up under
# the program's own allocator) and exits 2, every report saying what failed.
case_no_driver() {
	if env -u LD_LIBRARY_PATH python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
		echo "skip $name: this machine has a CUDA driver"
		return
	fi
	nodrv="no libcuda.so.1 was found: the NVIDIA CUDA driver is not installed, or not on the library path"
	export KTRACE_LIB="$plain_lib"
	run out err env -u LD_LIBRARY_PATH "$B/ktrace" run -- /bin/true
	expect_rc 0
	[ "$(cat err)" = "ktrace run: no trace was written: $nodrv (LD_LIBRARY_PATH, ldconfig); ktrace traces the \
program's calls into it" ] || bad "stderr: $(cat err)"
	rm -f j.xml m.md
	run out err env -u LD_LIBRARY_PATH "$B/ktrace" check --json --junit j.xml --markdown m.md --github -- \
		"$B/capture_results_app"
	expect_rc 2
	[ "$(grep -c "^ktrace check: $nodrv" err)" = 1 ] || bad "the missing driver not said once: $(cat err)"
	[ "$(grep -cF "ktrace check: warm-up run (untraced, so that the traced runs find warm caches): " err)" = 1 ] ||
		bad "the warm-up ran again: $(cat err)"
	hasnt err "allocator"
	schema_check check --document out
	python3 - out j.xml m.md err "$nodrv" <<'PY' >py.out 2>&1 || bad "reports: $(cat py.out)"
import json, sys, xml.etree.ElementTree as ET
out, junit, md, err, nodrv = sys.argv[1:]
j = json.load(open(out))
assert j["exit_code"] == 2 and j["comparisons"] == [] and j["runs"] == 2, j
lines = j["error"].split("\n")
assert lines[0].startswith("warm-up run (untraced") and "failed (exit status 127)" in lines[0], lines
assert lines[-1].startswith(nodrv) and len(lines) == 2, lines
root = ET.parse(junit).getroot()
assert root.get("errors") == "1" and root.get("tests") == "1", root.attrib
cases = root.findall("./testsuite/testcase")
assert len(cases) == 1 and cases[0].get("name").endswith("capture_results_app"), cases
e = cases[0].find("error")
assert e is not None and e.get("type") == "check_failed" and e.get("message").startswith(nodrv), e
assert e.text.split("\n") == lines, e.text
text = open(md).read()
assert text.startswith("### ktrace determinism check: ERROR (exit status 2, nothing compared)"), text
assert "\n".join(lines) in text, text
gh = [l for l in open(err) if l.startswith("::")]
assert gh == ["::error title=ktrace check failed (exit status 2)::" + "%0A".join(lines) + "\n"], gh
PY
	# the program runs but leaves no trace: said the same way, once
	run out err env -u LD_LIBRARY_PATH "$B/ktrace" check --keep-allocator -- /bin/true
	expect_rc 2
	[ "$(grep -c "$nodrv" err)" = 1 ] || bad "stderr: $(cat err)"
	has err "ktrace check: run 1 left no trace: $nodrv"
	unset KTRACE_LIB
}

# A check that fails for any reason before comparing (here the program fails in every
# run) still writes each report it was asked for, with the error; and text mode prints
# nothing on stdout.
case_check_error_reports() {
	export KTRACE_LIB="$plain_lib"
	rm -f j.xml m.md
	run out err env LD_LIBRARY_PATH="$B/fakecuda" "$B/ktrace" check --no-warmup --keep-allocator --json \
		--junit j.xml --markdown m.md -- sh -c 'exit 3'
	expect_rc 2
	has err "ktrace check: run 1 of 2 failed (exit status 3): sh -c exit 3"
	schema_check check --document out
	has out '"error": "run 1 of 2 failed (exit status 3): sh -c exit 3"'
	has j.xml '<error type="check_failed" message="run 1 of 2 failed (exit status 3): sh -c exit 3">'
	has m.md "run 1 of 2 failed (exit status 3): sh -c exit 3"
	# the schema holds an error report to its form: exit status 2, no comparisons
	sed 's/"exit_code": 2/"exit_code": 1/' out >bad1.json
	sed 's/"comparisons": \[\]/"comparisons": [{}]/' out >bad2.json
	for f in bad1.json bad2.json; do
		if python3 "$ROOT/test/tools/json_check.py" "$ROOT/docs/json/ktrace.schema.json" check --document $f \
			>/dev/null 2>&1; then
			bad "the schema takes $f: $(cat $f)"
		fi
	done
	run out err env LD_LIBRARY_PATH="$B/fakecuda" "$B/ktrace" check --no-warmup --keep-allocator -- sh -c 'exit 3'
	expect_rc 2
	[ -s out ] && bad "stdout: $(head -c 300 out)"
	unset KTRACE_LIB
}

# ktrace check removes its temporary directory, whatever is in it, when the runs agree
# (the traces, and what the command left there: JAX's compilation cache) and when a run
# fails: TMPDIR is as empty afterwards as before.
case_check_cleans_up() {
	if [ ! -x "$B/diff_fakeprog" ] || [ ! -f "$B/diff_fakelib.so" ]; then
		echo "skip $name: no $B/diff_fakeprog"
		return
	fi
	rm -rf own
	mkdir own
	for mode in same exit3; do
		rm -f cnt
		run out err env TMPDIR="$T/own" LD_LIBRARY_PATH="$B/fakecuda" KTRACE_LIB="$B/diff_fakelib.so" \
			DIFF_FAKE_MODE=$mode DIFF_FAKE_COUNTER="$T/cnt" "$B/ktrace" check --quiet -- \
			sh -c 'mkdir -p "$JAX_COMPILATION_CACHE_DIR/x" && echo >"$JAX_COMPILATION_CACHE_DIR/x/entry" && exec "$0"' \
			"$B/diff_fakeprog"
		[ $mode = same ] && expect_rc 0
		[ $mode = exit3 ] && expect_rc 2
		[ -z "$(ls -A own)" ] || bad "$mode: left in TMPDIR: $(cd own && find . | head -5)"
	done
}

# The Python side: --torch-ops and --python-stack put ktrace's start-up hook first on
# PYTHONPATH with the variables it and the library read; a bad --python-stack value is one
# line and exit 2; check refuses --python-stack with the reason; --no-nvtx is KTRACE_NVTX=0.
case_python_side() {
	export KTRACE_LIB="$plain_lib"
	run out err env PYTHONPATH=/elsewhere "$B/ktrace" run --quiet --torch-ops --python-stack 'fw_seq=3,kernel=a,b' \
		--no-nvtx -- env
	expect_rc 0
	hook=$(dirname "$plain_lib")/ktrace-pyhook
	has out "PYTHONPATH=$hook:/elsewhere"
	has out "KTRACE_TORCH_OPS=1"
	has out "KTRACE_PYSTACK=fw_seq=3,kernel=a,b"
	has out "KTRACE_NVTX=0"
	[ -f "$hook/sitecustomize.py" ] || bad "no $hook/sitecustomize.py"
	run out err "$B/ktrace" run --quiet -- env
	hasnt out "KTRACE_TORCH_OPS"
	hasnt out "ktrace-pyhook"
	run out err "$B/ktrace" run --python-stack 'bogus=1' -- /bin/true
	expect_rc 2
	has err "--python-stack 'bogus=1': unknown field 'bogus=1'"
	run out err "$B/ktrace" check --python-stack launch=1 -- /bin/true
	expect_rc 2
	has err "--python-stack is a \`ktrace run\` option"
	unset KTRACE_LIB
}

# The example names itself in its messages.
case_example_names_itself() {
	if grep -n "e2e_atomic" "$ROOT/examples/atomic_sum.cu"; then bad "examples/atomic_sum.cu calls itself e2e_atomic"; fi
	# (not linked with ASan: it cannot load a sanitized fake driver)
	if [ -x "$B/examples/atomic_sum_driver" ] && [ $sanitized = 0 ]; then
		run out err env LD_LIBRARY_PATH="$B/fakecuda" "$B/examples/atomic_sum_driver"
		expect_rc 2
		has err "usage: atomic_sum_driver FATBIN"
	fi
}

# ---- building and installing ------------------------------------------------------------------

# make with the environment of a plain shell (not the make running this test)
mk() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u WERROR make --no-print-directory -C "$ROOT" "$@"
}

# make install puts the library, the header, the tools, man pages and docs under
# DESTDIR/PREFIX; make uninstall removes exactly those.
case_install_uninstall() {
	# -o all: install what the suite built, never rebuild it here (other flags, other paths)
	mk BUILD="${BUILD:-build}" -o all DESTDIR="$T/stage" PREFIX=/opt/kt install >mk.out 2>&1 ||
		bad "make install: $(tail -3 mk.out)"
	for f in lib/libktrace.so include/ktrace.h bin/ktrace bin/ktrace-dump share/man/man1/ktrace.1 \
		share/doc/ktrace/README.md; do
		[ -f "$T/stage/opt/kt/$f" ] || bad "make install did not install $f"
	done
	mk BUILD="${BUILD:-build}" DESTDIR="$T/stage" PREFIX=/opt/kt uninstall >mk.out 2>&1 ||
		bad "make uninstall: $(tail -3 mk.out)"
	left=$(find "$T/stage" -type f | head -5)
	[ -z "$left" ] || bad "make uninstall left: $left"
	# the README says how, under one heading of each name
	grep -q 'make uninstall' "$ROOT/README.md" || bad "README.md does not say make uninstall"
	dup=$(grep '^#' "$ROOT/README.md" | sort | uniq -d)
	[ -z "$dup" ] || bad "README.md has headings twice: $dup"
}

# Without a CUDA toolkit make builds the tools that read traces and says what it skipped;
# warnings are errors only with WERROR=1 (CI, make dev).
case_build_settings() {
	mk -n CUDA_HOME=/nonexistent BUILD="$T/nocuda" all >mk.out 2>&1 || bad "make -n without CUDA: $(tail -3 mk.out)"
	has mk.out "skipped libktrace.so"
	has mk.out "$T/nocuda/ktrace-dump"
	if grep -qE "^/nonexistent/bin/nvcc|-shared -o $T/nocuda/libktrace.so" mk.out; then
		bad "without CUDA make still runs nvcc or links libktrace.so"
	fi
	# and really: the readers build without cuda.h (libktcore.a and ktrace-dump) and read a trace
	mk CUDA_HOME=/nonexistent BUILD="$T/nocuda" "$T/nocuda/ktrace-dump" >mk.out 2>&1 ||
		bad "ktrace-dump without CUDA: $(grep -m3 -E 'error|cuda.h' mk.out)"
	if [ -x "$T/nocuda/ktrace-dump" ]; then
		"$T/nocuda/ktrace-dump" --summary basic.ktrace >/dev/null 2>&1 || bad "ktrace-dump built without CUDA fails"
	fi
	rm -rf "$T/nocuda"
	mk -n BUILD="$T/w" all >mk.out 2>&1
	if grep -q -- "-Werror" mk.out; then bad "a plain make builds with -Werror"; fi
	mk -n WERROR=1 BUILD="$T/w" all >mk.out 2>&1
	has mk.out "-Werror"
	grep -q 'WERROR=1' "$ROOT/.ci/run" || bad ".ci/run does not build with WERROR=1"
}

# The CI recipe works on a stock Ubuntu 24.04 runner: no placeholder to fill in, Python
# packages into a virtual environment, and it is YAML.
case_ci_recipe() {
	awk '/^```yaml/{y=1; next} /^```/{y=0} y' "$ROOT/docs/ci.md" >recipe.yml
	[ -s recipe.yml ] || bad "docs/ci.md has no YAML recipe"
	if grep -nE 'ORG/|<your|YOUR_' recipe.yml; then bad "the recipe has a placeholder"; fi
	if grep -n 'pip install' recipe.yml | grep -v 'venv/bin/pip'; then bad "pip install outside a virtual environment"; fi
	if python3 -c 'import yaml' 2>/dev/null; then
		python3 -c 'import sys, yaml; yaml.safe_load(open(sys.argv[1]))' recipe.yml 2>yaml.err ||
			bad "the recipe is not YAML: $(cat yaml.err)"
	fi
}

# ---- JSON ----------------------------------------------------------------------------------------

# Every JSON output is what docs/json/ktrace.schema.json says (docs/json.md): ktrace-dump's
# records and summaries, ktrace-diff's comparison and a job's (the golden reports too), ktrace check's
# report for two and three runs and with replays, ktrace-inspect's files and summaries.
schema_check() {
	python3 "$ROOT/test/tools/json_check.py" "$ROOT/docs/json/ktrace.schema.json" "$@" >schema.out 2>&1 ||
		bad "$(head -c 1500 schema.out)"
}

case_json_schemas() {
	ex1=$ROOT/examples/traces/atomic_sum-run1.ktrace
	ex2=$ROOT/examples/traces/atomic_sum-run2.ktrace
	"$B/ktgen" --scenario order order.ktrace
	"$B/ktgen" --scenario graph graph.ktrace
	"$B/ktgen" --scenario ranges ranges.ktrace
	"$B/ktgen" --scenario gputimes gputimes.ktrace
	for f in basic.ktrace threads.ktrace order.ktrace graph.ktrace ranges.ktrace gputimes.ktrace "$ex1"; do
		"$B/ktrace-dump" --json "$f"
		"$B/ktrace-dump" --json --range 0:1 "$f"
	done >dump.jsonl 2>/dev/null
	head -c 300 basic.ktrace >cut2.ktrace
	"$B/ktrace-dump" --json cut2.ktrace >>dump.jsonl 2>/dev/null
	schema_check dump_record --lines dump.jsonl
	"$B/ktrace-dump" --summary --json basic.ktrace threads.ktrace "$ex1" >summary.jsonl
	has summary.jsonl '"summary":"read_only"'
	schema_check dump_summary --lines summary.jsonl
	"$B/ktrace-diff" --json "$ex1" "$ex2" >diff1.json
	"$B/ktrace-diff" --json --all basic.ktrace basic.ktrace >diff2.json
	"$B/ktrace-diff" --json --partial cut2.ktrace basic.ktrace >diff3.json 2>/dev/null
	"$B/ktrace-diff" --json graph.ktrace graph.ktrace >diff4.json 2>/dev/null
	has diff4.json '"graphs": {'
	schema_check diff --document diff1.json diff2.json diff3.json diff4.json "$ROOT"/test/golden/diff/*.json
	# two runs of a job: a verdict, findings, runs that cannot be compared
	for s in job-two-comms job-missing-rank job-world-size; do
		"$B/ktgen" --job $s $s && (cd $s && "$B/ktrace-diff" --json a b) >$s.json 2>/dev/null
	done
	schema_check job_diff --document job-two-comms.json job-missing-rank.json job-world-size.json \
		"$ROOT"/test/golden/job/*.json
	# ktrace check: the fake traced program (two and three runs), and the real library replaying
	export ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=0:handle_segv=0:handle_abort=0:allow_user_segv_handler=1"
	if [ -x "$B/diff_fakeprog" ] && [ -f "$B/diff_fakelib.so" ]; then
		for runs in 2 3; do
			rm -f counter
			KTRACE_LIB="$B/diff_fakelib.so" DIFF_FAKE_MODE=nondet DIFF_FAKE_COUNTER="$T/counter" \
				"$B/ktrace" check --quiet --json --runs $runs -- "$B/diff_fakeprog" >check$runs.json 2>/dev/null
		done
		schema_check check --document check2.json check3.json
	fi
	if [ -x "$B/job_fakeprog" ] && [ -f "$B/diff_fakelib.so" ]; then
		rm -f counter
		KTRACE_LIB="$B/diff_fakelib.so" JOB_FAKE_MODE=nondet JOB_FAKE_COUNTER="$T/counter" \
			"$B/ktrace" check --quiet --json --runs 3 -- "$B/job_fakeprog" >check_job.json 2>/dev/null
		has check_job.json '"jobs": ['
		schema_check check --document check_job.json
	fi
	if [ -x "$B/replay_app" ] && [ -f "$B/fakecuda-real/libcuda.so.1" ]; then
		rm -f rc
		REPLAY_APP_COUNTER="$T/rc" LD_LIBRARY_PATH="$B/fakecuda-real" "$B/ktrace" check --quiet --json \
			--replays 3 --no-warmup -- "$B/replay_app" nondet >check_replay.json 2>/dev/null
		rm -f rc
		REPLAY_APP_COUNTER="$T/rc" FAKECUDA_NONDET_FIXED=1 LD_LIBRARY_PATH="$B/fakecuda-real" "$B/ktrace" check \
			--quiet --json --no-warmup -- "$B/replay_app" hidden >check_hidden.json 2>/dev/null
		has check_replay.json '"outcome": "confirmed"'
		has check_hidden.json '"explanations": ['
		schema_check check --document check_replay.json check_hidden.json
	fi
	if [ -f "$B/cubins/kernels_sm90.cubin" ]; then
		"$B/ktrace-inspect" --json "$B/cubins/kernels_sm90.cubin" "$B/cubins/kernels_sm90_G.cubin" >inspect.json
		"$B/ktrace-inspect" --summary --json "$B/cubins/kernels_sm90.cubin" >inspect.jsonl
		"$B/ktrace-inspect" --summary --json "$B/cubins/kernels_sm90.cubin" "$B/cubins/kernels_multi.fatbin" \
			>inspect-totals.jsonl
		has inspect-totals.jsonl '"total": "files"'
		schema_check inspect --document inspect.json
		schema_check inspect_summary --lines inspect.jsonl inspect-totals.jsonl
	fi
	# the schema is strict: a field it does not document fails
	sed 's/"op_seq"/"launch_seq"/' dump.jsonl >renamed.jsonl
	if python3 "$ROOT/test/tools/json_check.py" "$ROOT/docs/json/ktrace.schema.json" dump_record --lines renamed.jsonl \
		>/dev/null 2>&1; then
		bad "a record with an undocumented field passes the schema"
	fi
}

# The same thing has the same name and form in every tool's JSON: streams and addresses
# as "0x..." strings, operation numbers as op_seq, flags as lists of names, the file
# always named; ktrace check's JSON is one object whatever the number of runs; a file
# ktrace-inspect cannot read is an error, not an empty result.
case_json_conventions() {
	ex1=$ROOT/examples/traces/atomic_sum-run1.ktrace
	ex2=$ROOT/examples/traces/atomic_sum-run2.ktrace
	run out err "$B/ktrace-diff" --json "$ex1" "$ex2"
	has out '"stream_a": "0x0"'
	has out '"op_seq_a": 3'
	hasnt out '"seq_a"'
	run out err "$B/ktrace-dump" --json "$ex1"
	grep '"type":"launch"' out | head -1 | grep -q '"op_seq":1,' || bad "dump's first launch has no op_seq 1"
	grep '"type":"memcpy"' out | head -1 | grep -qE '"copy_flags":\[("[a-z_0-9]+",?)*\]' || bad "copy_flags not a list"
	if grep -qv '"file":"' out; then bad "a dump line without file"; fi
	if [ -f check2.json ]; then
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert isinstance(d, dict) and len(d["comparisons"]) == 1' \
			check2.json || bad "check --runs 2 JSON is not one object with one comparison"
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert isinstance(d, dict) and len(d["comparisons"]) == 2' \
			check3.json || bad "check --runs 3 JSON is not one object with two comparisons"
	fi
	run out err "$B/ktrace-inspect" --json /bin/ls
	expect_rc 2
	has err "ktrace-inspect: /bin/ls: "
	# a kernel is named alike wherever it is referred to: the divergence ktrace-diff reports
	# and the launch ktrace-dump prints have the same kernel and mangled
	"$B/ktrace-diff" --json "$ex1" "$ex2" >div.json
	"$B/ktrace-dump" --json "$ex1" >ex1.jsonl
	"$B/ktrace-dump" --json --summary "$ex1" >ex1.summary.jsonl
	python3 - div.json ex1.jsonl ex1.summary.jsonl >conv.out 2>&1 <<'PYEOF' || bad "$(head -c 600 conv.out)"
import json, sys
d = json.load(open(sys.argv[1]))["divergences"][0]
recs = [json.loads(l) for l in open(sys.argv[2])]
launch = [r for r in recs if r["type"] == "launch" and r["op_seq"] == d["op_seq_a"]][0]
assert (launch["kernel"], launch["mangled"]) == (d["kernel"], d["mangled"]), (launch["kernel"], launch["mangled"], d)
assert d["kernel"] == "atomic_sum(float const*, float*, int)" and d["mangled"] == "_Z10atomic_sumPKfPfi", d
rows = [json.loads(l) for l in open(sys.argv[3])]
assert any(r.get("kernel") == d["kernel"] and r.get("mangled") == d["mangled"] for r in rows), rows[:3]
PYEOF
	# flags are lists of names in every record, ORDER and GRAPH records included
	"$B/ktgen" --scenario order order.ktrace
	"$B/ktgen" --scenario graph graph.ktrace
	for f in order.ktrace graph.ktrace basic.ktrace; do
		"$B/ktrace-dump" --json "$f"
	done >flags.jsonl
	python3 - flags.jsonl >flags.out 2>&1 <<'PYEOF' || bad "$(head -c 600 flags.out)"
import json, sys
def walk(v, where):
    if isinstance(v, dict):
        for k, x in v.items():
            if k.endswith("flags"):
                assert isinstance(x, list) and all(isinstance(n, str) for n in x), "%s.%s = %r" % (where, k, x)
            walk(x, where + "." + k)
    elif isinstance(v, list):
        for x in v:
            walk(x, where)
for line in open(sys.argv[1]):
    r = json.loads(line)
    walk(r, r["type"])
PYEOF
	grep -q '"stream_flags":\["non_blocking"\]' flags.jsonl || bad "no ORDER record with stream_flags [\"non_blocking\"]"
}

case_ version_everywhere
case_ help_layout
case_ help_command
case_ check_help_sections
case_ man_pages
case_ stdin_operand
case_ option_forms
case_ bad_option_everywhere
case_ write_errors
case_ cannot_open
case_ truncated_is_error
case_ nothing_compared
case_ empty_selection
case_ filter_orders
case_ dump_seq_order
case_ counts_agree
case_ format_version
case_ example
case_ run_outcomes
case_ run_output_exists
case_ job_record
case_ no_driver
case_ check_error_reports
case_ check_cleans_up
case_ python_side
case_ example_names_itself
case_ install_uninstall
case_ build_settings
case_ ci_recipe
case_ json_schemas
case_ json_conventions

echo "$ncase cases"
if [ $fail != 0 ]; then
	echo "command-line tests FAILED"
	exit 1
fi
exit 0
