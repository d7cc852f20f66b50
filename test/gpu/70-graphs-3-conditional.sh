#!/usr/bin/env bash
# test/gpu/70-graphs-3-conditional.sh: the kernels inside a WHILE conditional
# node traced, hashed per iteration and diffed (build/gpu/graph_conditional:
# the loop body holds a deterministic step, a tally kernel whose int
# parameter equals the condition handle's value (the program checks it
# counted the runs as without ktrace), the sums per bin, a record of the
# sums and the loop condition set on the GPU; 12 iterations, 10 graph
# launches).
#
#   graphs-cond-coverage      per kernel name, LAUNCH records == the program's
#                             own counts (graph_check.py coverage --whole-run)
#   graphs-cond-hashed        those records come from graph launches and carry
#                             digests (graph_check.py)
#   graphs-cond-copies        one MEMSET record per memset node run: the
#                             top's once per graph launch, the body's once
#                             per iteration (graph_check.py)
#   graphs-cond-transparency  the output is bitwise the same with and without
#                             ktrace (graph_check.py)
#   graphs-cond-iterations    every body kernel has, per graph launch, records
#                             of iterations 0 .. ITERS-1 of ITERS, none dropped,
#                             each pre-hash of kt_gc_step equal to the
#                             post-hash of the previous iteration's
#   graphs-cond-ring          --iters 100 under KTRACE_GRAPH_ITERS=16: per
#                             graph launch and body kernel, iterations 0..7 and
#                             92..99 recorded, 84 dropped in each record
#   graphs-cond-verdict-plant `ktrace check` names kt_g_atomic_sum (float
#                             atomics in the body), inputs identical, with its
#                             iteration in the report, and confirms it by
#                             replaying that iteration of the body's node; exit 1
#   graphs-cond-verdict-top   --plant-top (kt_g_atomic_sum at the top level
#                             of the graph, before the WHILE node; the body
#                             deterministic): named, inputs identical, not in
#                             a body, confirmed by replaying that node from
#                             its graph launch; exit 1
#   graphs-cond-verdict-det   the deterministic variant: exit 0
# Logs: $KT_LOGS/graphs/.
set -u
cd "$(dirname "$0")/../.." || exit 1
. test/gpu/graphs_lib.sh
prog=$B/gpu/graph_conditional
graphs_ready graphs-cond "$lib" "$dump" "$kt" "$prog" || exit 0
o=$T/cond

# coverage, hashing, transparency: two runs without ktrace, one traced
timeout 120 "$prog" >"$o.p1.out" 2>"$o.p1.err" </dev/null || { result graphs-cond-run FAIL "run without ktrace: $(tail -n 2 "$o.p1.err" | tr '\n' ' ')"; exit 0; }
timeout 120 "$prog" >"$o.p2.out" 2>"$o.p2.err" </dev/null
rm -f "$o"-*.ktrace
KTRACE_OUTPUT="$o-%p.ktrace" KTRACE_HASH=1 LD_PRELOAD="$lib" timeout 180 "$prog" >"$o.kt.out" 2>"$o.kt.err" </dev/null
rc=$?
trace=$(ls "$o"-*.ktrace 2>/dev/null | head -n 1)
cp "$o".*.out "$o".*.err "$L/" 2>/dev/null
if [ $rc != 0 ] || [ -z "$trace" ]; then
	result graphs-cond-run FAIL "traced run exited $rc (trace ${trace:-missing}): $(tail -n 3 "$o.kt.err" | tr '\n' ' ' | cut -c1-300)"
	exit 0
fi
"$dump" --json "$trace" >"$o.jsonl" 2>"$o.dump.err"
python3 "$W/graph_check.py" coverage --name cond --traced "$o.kt.out" --plain "$o.p1.out" --plain2 "$o.p2.out" \
	--json "$o.jsonl" --whole-run >"$L/cond.coverage.txt" 2>&1
grep '^RESULT|' "$L/cond.coverage.txt" || result graphs-cond-coverage FAIL "graph_check.py: $(tail -n 2 "$L/cond.coverage.txt" | tr '\n' ' ')"

# iterations KTRACE_OUT JSONL ITERS FIRST LAST DROPPED: the iteration references of every body kernel
check_iterations() {
	python3 - "$@" <<'EOF'
import collections, json, sys
out, jsonl, iters, first, last, dropped = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
launches = int([l.split()[1] for l in open(out) if l.startswith("LAUNCHES ")][0])
want = list(range(first)) + list(range(iters - last, iters))
seen = collections.defaultdict(list)   # (kernel, graph launch) -> iterations
chain = collections.defaultdict(dict)  # graph launch -> iteration -> (pre, post) of kt_gc_step's x
bad = []
for line in open(jsonl):
    r = json.loads(line)
    if r.get("type") != "launch" or "graph_iter" not in r.get("launch_flags", []):
        continue
    it = r.get("iteration") or {}
    seen[(r["kernel"], r["graph"]["launch"])].append(it.get("iteration"))
    if it.get("iterations") != iters or it.get("dropped") != dropped:
        bad.append(f"{r['kernel']}: iterations {it.get('iterations')} dropped {it.get('dropped')}")
    if r["kernel"] == "kt_gc_step":
        regs = [g for g in r.get("regions", []) if g.get("pre_hash") and g.get("post_hash")]
        if not regs:
            bad.append(f"kt_gc_step iteration {it.get('iteration')}: no digests")
        else:
            chain[r["graph"]["launch"]][it.get("iteration")] = (regs[0]["pre_hash"], regs[0]["post_hash"])
kernels = {k for k, _ in seen}
if not kernels:
    print("FAIL no record with an iteration reference"); sys.exit()
for k in sorted(kernels):
    for gl in range(launches):
        if sorted(seen.get((k, gl), [])) != want:
            bad.append(f"{k} graph launch {gl}: iterations {sorted(seen.get((k, gl), []))[:20]}")
for gl, its in chain.items():
    for i in its:
        if i + 1 in its and its[i][1] != its[i + 1][0]:
            bad.append(f"graph launch {gl}: kt_gc_step post-hash of iteration {i} != pre-hash of {i + 1}")
if bad:
    print("FAIL " + "; ".join(bad[:5]))
else:
    print(f"PASS {len(kernels)} body kernels x {launches} graph launches: iterations {want[:3]}..{want[-1]} of {iters}, {dropped} dropped, digests chained")
EOF
}
iters=$(awk '/^ITERS /{print $2}' "$o.kt.out")
r=$(check_iterations "$o.kt.out" "$o.jsonl" "$iters" "$iters" 0 0 2>&1 | tail -n 1)
result graphs-cond-iterations "${r%% *}" "${r#* }"

# the ring: 100 iterations, 16 kept
rm -f "$o"-*.ktrace
KTRACE_OUTPUT="$o-%p.ktrace" KTRACE_HASH=1 KTRACE_GRAPH_ITERS=16 LD_PRELOAD="$lib" timeout 180 "$prog" --iters 100 --launches 2 \
	>"$o.ring.out" 2>"$o.ring.err" </dev/null
trace=$(ls "$o"-*.ktrace 2>/dev/null | head -n 1)
if [ -n "$trace" ] && "$dump" --json "$trace" >"$o.ring.jsonl" 2>/dev/null; then
	r=$(check_iterations "$o.ring.out" "$o.ring.jsonl" 100 8 8 84 2>&1 | tail -n 1)
	result graphs-cond-ring "${r%% *}" "${r#* }"
else
	result graphs-cond-ring FAIL "traced run with KTRACE_GRAPH_ITERS=16: no trace ($(tail -n 2 "$o.ring.err" | tr '\n' ' '))"
fi
[ "${KT_GRAPHS_KEEP:-0}" = 1 ] || rm -f "$o"-*.ktrace "$o".jsonl "$o".ring.jsonl

# ktrace check on the planted and the deterministic variant
for v in plant top det; do
	d=$T/check-cond-$v
	rm -rf "$d"
	opt=()
	mode=det
	req=()
	[ $v = plant ] && { opt=(--plant); mode=nondet; req=(--require-body-replay); }
	[ $v = top ] && { opt=(--plant-top); mode=nondet; req=(--require-top-replay); }
	timeout -k 10 300 "$kt" check --json --runs 3 --dir "$d" -- "$prog" "${opt[@]}" >"$d.json" 2>"$d.log" </dev/null
	rc=$?
	cp "$d.json" "$d.log" "$L/" 2>/dev/null
	out=$(python3 "$W/graph_check.py" verdict "$mode" "$d.json" "$rc" "$d.log" kt_g_atomic_sum \
		--trace-dir "$d" --dump "$dump" --require-graph "${req[@]}" 2>&1 | tail -n 1)
	if [ $v = plant ] && [ "${out%% *}" = PASS ] &&
		! python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
divs=[x for c in (d.get("comparisons") or [d]) for x in (c.get("divergences") or [])]
it=(divs or [{}])[0].get("iteration")
sys.exit(0 if isinstance(it, dict) and it.get("iteration") is not None else 1)' "$d.json"; then
		out="FAIL the first divergence carries no iteration: ${out#* }"
	fi
	case "$out" in
	PASS* | FAIL* | SKIP*) result "graphs-cond-verdict-$v" "${out%% *}" "${out#* }" ;;
	*) result "graphs-cond-verdict-$v" FAIL "graph_check.py: $out" ;;
	esac
	[ "${KT_GRAPHS_KEEP:-0}" = 1 ] || rm -rf "$d"
done
exit 0
