#!/usr/bin/env bash
# test/gpu/70-graphs-4-jax-while.sh: JAX loops run as WHILE conditional nodes
# of XLA's command buffers, traced, hashed per iteration and diffed.
#
# With default XLA flags (JAX 0.11.2) lax.fori_loop and lax.scan run from the
# host: one command buffer updated and launched again per iteration, no
# conditional node (the verdict suite's jax_fori_scatter_add,
# jax_scan_scatter_add and jax_fori_det exercise that path).  XLA records a
# while loop into its command buffer as a WHILE conditional node only when
# the WHILE and CONDITIONAL commands are enabled
# (xla/service/gpu/transforms/command_buffer_conversion_pass.cc: a while
# loop is a command when WHILE is enabled and its body and condition are
# commands; the flag takes "+TYPE" to add to the default list,
# xla/debug_options_flags.cc).  This area runs those three programs
# (test/gpu/workloads/verdict_programs.py; 8 iterations each, the
# fori_loop bound traced) under
#   XLA_FLAGS=--xla_gpu_enable_command_buffer=+WHILE,+CONDITIONAL
# (and, when XLA makes no conditional node with it, again with
# --xla_gpu_graph_min_graph_size=1 added; the flags used are printed), with
# --xla_gpu_autotune_level=0 in every run (the autotuner chooses by timing).
#
#   graphs-jaxwhile-FLAGS         which XLA_FLAGS made XLA emit WHILE nodes
#   graphs-jaxwhile-truth-P       two runs without ktrace: outputs differ
#                                 (jax_fori_scatter_add, jax_scan_scatter_add)
#                                 or are identical (jax_fori_det)
#   graphs-jaxwhile-body-P        the traced run (hashing on) has a WHILE
#                                 node (SKIP when XLA kept the loop on the
#                                 host: JAX 0.11.2 does so for this scan,
#                                 H100, 2026-12-07); every kernel node of its body has,
#                                 per graph launch, one hashed record per
#                                 iteration 0 .. 7 of 8 (the program's trip
#                                 count), none dropped; the scatter programs'
#                                 scatter kernel is one of them
#   graphs-jaxwhile-transparency  jax_fori_det's output with ktrace (hashing
#                                 on) is bitwise the bare runs'
#   graphs-jaxwhile-verdict-P     `ktrace check`: the scatter programs exit
#                                 1, the first divergence a /scatter/ kernel
#                                 with its iteration in the body, inputs
#                                 identical, confirmed by replaying that
#                                 iteration of the body's node (a loop XLA
#                                 kept on the host: the kernel's launch, no
#                                 iteration); jax_fori_det exits 0
# Logs: $KT_LOGS/graphs/jaxwhile.*.  Budget: about 5 minutes on an H100.
set -u
cd "$(dirname "$0")/../.." || exit 1
. test/gpu/graphs_lib.sh
vp=$W/verdict_programs.py
graphs_ready graphs-jaxwhile "$lib" "$dump" "$kt" "$vp" || exit 0
o=$T/jaxwhile
progs="jax_fori_scatter_add jax_scan_scatter_add jax_fori_det"
ITERS=8

# run_prog FLAGS NAME OUT [env...]: the program once (OUTPUT line in OUT).
run_prog() {
	local flags=$1 name=$2 out=$3
	shift 3
	env XLA_FLAGS="$flags" "$@" timeout 300 python3 "$vp" "$name" >"$out" 2>"$out.err" </dev/null
}
output_of() { awk -F'\t' '/^OUTPUT\t/{print $3}' "$1" | head -n 1; }

# while_check JSONL NAME: the body kernels' records of every WHILE node (see above).
while_check() {
	python3 - "$1" "$2" "$ITERS" <<'EOF'
import collections, json, re, sys
jsonl, name, iters = sys.argv[1], sys.argv[2], int(sys.argv[3])
whiles = collections.defaultdict(set)     # exec -> WHILE node indexes
body_kernels = collections.defaultdict(set)  # (exec, cond node) -> kernel node indexes
seen = collections.defaultdict(list)      # (exec, launch, node) -> iterations
names = {}
bad = []
for line in open(jsonl):
    r = json.loads(line)
    if r.get("type") == "graph":
        for n in r.get("nodes", []):
            if n.get("kind") == "conditional" and n.get("cond_type") == "while":
                whiles[r["exec_id"]].add(n["index"])
    elif r.get("type") == "launch" and "graph_iter" in r.get("launch_flags", []):
        g, it = r["graph"], r.get("iteration") or {}
        key = (g["exec_id"], g["launch"], g["node"])
        seen[key].append(it.get("iteration"))
        names[(g["exec_id"], g["node"])] = r.get("kernel") or r.get("mangled") or "?"
        body_kernels[(g["exec_id"], it.get("cond_node"))].add(g["node"])
        if it.get("iterations") != iters or it.get("dropped"):
            bad.append(f"{names[(g['exec_id'], g['node'])][:40]}: iterations {it.get('iterations')} dropped {it.get('dropped')}")
        if "hashed" not in r.get("launch_flags", []):
            bad.append(f"{names[(g['exec_id'], g['node'])][:40]} iteration {it.get('iteration')}: not hashed")
if not whiles:
    print("SKIP no WHILE conditional node in the GRAPH records: XLA kept this loop on the host under these "
          "flags (its iterations are graph launches, as with default flags)"); sys.exit()
if not seen:
    print(f"FAIL {sum(map(len, whiles.values()))} WHILE node(s), but no record with an iteration reference"); sys.exit()
for key, its in seen.items():
    if sorted(its) != list(range(iters)):
        bad.append(f"{names[(key[0], key[2])][:40]} graph launch {key[1]}: iterations {sorted(its)[:12]}")
kernels = sorted(set(names.values()))
if "scatter" in name and not any(re.search("scatter", k) for k in kernels):
    bad.append("no scatter kernel among the body kernels: " + ", ".join(k[:40] for k in kernels[:6]))
if bad:
    print("FAIL " + "; ".join(bad[:5]))
else:
    launches = len({(k[0], k[1]) for k in seen})
    print(f"PASS {sum(map(len, whiles.values()))} WHILE node(s); {len(kernels)} body kernels x {launches} graph "
          f"launch(es), iterations 0..{iters - 1} of {iters} each, hashed: " + ", ".join(k[:40] for k in kernels[:4]))
EOF
}

# verdict_check MODE JSON RC: ktrace check's report (see above).
verdict_check() {
	python3 - "$@" <<'EOF'
import json, re, sys
mode, path, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    doc = json.load(open(path))
except (OSError, ValueError) as e:
    print(f"FAIL no JSON report (exit {rc}): {e}"); sys.exit()
if isinstance(doc, dict) and isinstance(doc.get("comparisons"), list):
    comps = doc["comparisons"]
else:
    comps = doc if isinstance(doc, list) else [doc]
divs = [(c.get("divergences") or [None])[0] for c in comps if isinstance(c, dict)]
divs = [d for d in divs if d]
if mode == "det":
    print("PASS exit 0, no divergence" if rc == 0 and not divs else
          f"FAIL exit {rc}: " + "; ".join(f"{(d.get('kernel') or '?')[:60]} ({d.get('classification')})" for d in divs[:2]))
    sys.exit()
if not divs:
    print(f"{'SKIP' if rc == 0 else 'FAIL'} exit {rc}, no divergence (the atomics may have added in one order)"); sys.exit()
d = divs[0]
k = d.get("kernel") or d.get("mangled") or ""
it = d.get("iteration") or {}
desc = f"{k[:60]} iteration {it.get('iteration')} of {it.get('iterations')} ({d.get('classification')})"
host_loop = mode == "nondet-host"  # no WHILE node: no iteration reference to ask for
conf = [e for c in comps if isinstance(c, dict) for e in ((c.get("confirmation") or {}).get("replayed") or [])
        if isinstance(e, dict)]
hit = next((e for e in conf if e.get("outcome") == "confirmed" and (host_loop or e.get("iteration") is not None)
            and re.search("scatter", (e.get("kernel") or "") + (e.get("mangled") or ""))), None)
said = "; ".join(f"{(e.get('kernel') or '?')[:40]}: {e.get('summary', e.get('outcome', '?'))[:120]}" for e in conf[:2])
if rc != 1 or not re.search("scatter", k) or (it.get("iteration") is None and not host_loop) or \
        d.get("classification") != "kernel_nondeterministic":
    print(f"FAIL exit {rc}: {desc}")
elif not hit:
    print(f"FAIL exit {rc}: {desc}; not confirmed by replay at its iteration: {said or 'no replay'}")
else:
    at = f"iteration {hit['iteration']}" if hit.get("iteration") is not None else "its launch (a host loop)"
    print(f"PASS exit 1: {desc}; confirmed by replay at {at}")
EOF
}

# which flags make XLA emit WHILE nodes: a metadata run of jax_fori_det.
# XLA's autotuner picks among kernels by their measured times, so two
# processes may run different kernels and get different bits (jax_fori_det
# gave two outputs across bare processes on an H100, 2026-12-07, and one with
# the autotuner off): every run here has it off, so that the programs'
# ground truth is their own.
pin="--xla_gpu_autotune_level=0"
flags=""
for f in "--xla_gpu_enable_command_buffer=+WHILE,+CONDITIONAL $pin" \
	"--xla_gpu_enable_command_buffer=+WHILE,+CONDITIONAL --xla_gpu_graph_min_graph_size=1 $pin"; do
	rm -f "$o"-probe-*.ktrace
	run_prog "$f" jax_fori_det "$o.probe.out" KTRACE_OUTPUT="$o-probe-%p.ktrace" KTRACE_HASH=0 LD_PRELOAD="$lib"
	if grep -q "^UNAVAILABLE\|ModuleNotFoundError" "$o.probe.out" "$o.probe.out.err" 2>/dev/null; then
		result graphs-jaxwhile SKIP "$(missing_framework "$o.probe.out" "$o.probe.out.err")"
		exit 0
	fi
	trace=$(ls "$o"-probe-*.ktrace 2>/dev/null | head -n 1)
	if [ -n "$trace" ] && "$dump" --json "$trace" 2>/dev/null | grep '"type":"graph"' | grep -q '"cond_type":"while"'; then
		flags=$f
		break
	fi
done
cp "$o".probe.out* "$L/" 2>/dev/null
if [ -z "$flags" ]; then
	result graphs-jaxwhile-FLAGS FAIL "XLA made no WHILE conditional node under either flag set (see $L/jaxwhile.probe.out.err)"
	exit 0
fi
result graphs-jaxwhile-FLAGS PASS "XLA_FLAGS='$flags'"

for p in $progs; do
	hostloop=0
	# ground truth: two runs without ktrace
	run_prog "$flags" "$p" "$o.$p.bare1"
	run_prog "$flags" "$p" "$o.$p.bare2"
	a=$(output_of "$o.$p.bare1")
	b=$(output_of "$o.$p.bare2")
	cp "$o.$p".bare* "$L/" 2>/dev/null
	if [ -z "$a" ] || [ -z "$b" ]; then
		result "graphs-jaxwhile-truth-$p" FAIL "a run without ktrace failed: $(tail -n 2 "$o.$p.bare1.err" | tr '\n' ' ' | cut -c1-200)"
		continue
	fi
	if [ "$p" = jax_fori_det ] && [ "$a" = "$b" ]; then
		result "graphs-jaxwhile-truth-$p" PASS "outputs identical: ${a:0:12}"
	elif [ "$p" = jax_fori_det ]; then
		result "graphs-jaxwhile-truth-$p" FAIL "outputs differ without ktrace: ${a:0:12} ${b:0:12}"
	elif [ "$a" != "$b" ]; then
		result "graphs-jaxwhile-truth-$p" PASS "outputs differ: ${a:0:12} ${b:0:12}"
	else
		result "graphs-jaxwhile-truth-$p" SKIP "outputs identical in two runs (the atomics added in one order)"
	fi

	# one traced run, hashing on
	rm -f "$o"-"$p"-*.ktrace
	run_prog "$flags" "$p" "$o.$p.kt" KTRACE_OUTPUT="$o-$p-%p.ktrace" KTRACE_HASH=1 LD_PRELOAD="$lib"
	rc=$?
	trace=$(ls "$o"-"$p"-*.ktrace 2>/dev/null | head -n 1)
	cp "$o.$p".kt* "$L/" 2>/dev/null
	if [ $rc != 0 ] || [ -z "$trace" ]; then
		result "graphs-jaxwhile-body-$p" FAIL "traced run exited $rc: $(tail -n 2 "$o.$p.kt.err" | tr '\n' ' ' | cut -c1-200)"
		continue
	fi
	"$dump" --json "$trace" >"$o.$p.jsonl" 2>/dev/null
	grep '"code":259' "$o.$p.jsonl" | head -n 5 >"$L/jaxwhile.$p.notes" 2>/dev/null
	r=$(while_check "$o.$p.jsonl" "$p" 2>&1 | tail -n 1)
	result "graphs-jaxwhile-body-$p" "${r%% *}" "${r#* }"
	[ "${r%% *}" = SKIP ] && hostloop=1
	if [ "$p" = jax_fori_det ]; then
		t=$(output_of "$o.$p.kt")
		if [ -n "$t" ] && [ "$t" = "$a" ]; then
			result graphs-jaxwhile-transparency PASS "output with ktrace = without: ${a:0:12}"
		else
			result graphs-jaxwhile-transparency FAIL "output with ktrace ${t:-missing} != without ${a:0:12}"
		fi
	fi
	[ "${KT_GRAPHS_KEEP:-0}" = 1 ] || rm -f "$o"-"$p"-*.ktrace "$o.$p.jsonl"

	# ktrace check
	d=$T/check-jaxwhile-$p
	rm -rf "$d"
	env XLA_FLAGS="$flags" timeout -k 10 300 "$kt" check --json --runs 3 --dir "$d" -- python3 "$vp" "$p" \
		>"$d.json" 2>"$d.log" </dev/null
	rc=$?
	cp "$d.json" "$d.log" "$L/" 2>/dev/null
	mode=nondet
	[ "$hostloop" = 1 ] && mode=nondet-host
	[ "$p" = jax_fori_det ] && mode=det
	r=$(verdict_check "$mode" "$d.json" "$rc" 2>&1 | tail -n 1)
	result "graphs-jaxwhile-verdict-$p" "${r%% *}" "${r#* }"
	[ "${KT_GRAPHS_KEEP:-0}" = 1 ] || rm -rf "$d"
done
rm -f "$o"-probe-*.ktrace
exit 0
