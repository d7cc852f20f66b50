#!/bin/sh
# test/fuzz/tools_seeds.sh BUILD DIR: seeds for build/fuzz/fuzz_tools in DIR: each
# generator scenario's record stream ('Z'), and pairs of them ('P': the u32
# length of A's records, A's records, B's), made with BUILD/ktgen and zstd(1); and a
# rank of ktgen --job job-nondet, alone and with its run B.
set -eu
build=$1 dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$dir"
records() { # scenario -> its record stream on stdout
	"$build/ktgen" --scenario "$1" "$tmp/$1.ktrace" >/dev/null
	tail -c +17 "$tmp/$1.ktrace" | zstd -dcq
}
u32le() { # n -> 4 bytes
	for shift in 0 8 16 24; do
		printf "\\$(printf %o $((($1 >> shift) & 255)))"
	done
}
for s in basic order order-filter graph graph-threads ranges gputimes threads; do
	{ printf Z; records "$s"; } >"$dir/z-$s"
done
for pair in basic:basic graph:graph-threads order:order-filter ranges:basic gputimes:graph threads:basic; do
	a=${pair%%:*} b=${pair#*:}
	records "$a" >"$tmp/a" && records "$b" >"$tmp/b"
	{ printf P; u32le "$(wc -c <"$tmp/a")"; cat "$tmp/a" "$tmp/b"; } >"$dir/p-$a-$b"
done
# a rank of a job in each run (COLL, COMM and JOB records, collective buffers as regions)
"$build/ktgen" --job job-nondet "$tmp/job" >/dev/null
tail -c +17 "$tmp"/job/a/r1-*.ktrace | zstd -dcq >"$tmp/a"
tail -c +17 "$tmp"/job/b/r1-*.ktrace | zstd -dcq >"$tmp/b"
{ printf Z; cat "$tmp/a"; } >"$dir/z-job-rank"
{ printf P; u32le "$(wc -c <"$tmp/a")"; cat "$tmp/a" "$tmp/b"; } >"$dir/p-job-rank"
