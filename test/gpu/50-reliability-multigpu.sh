#!/usr/bin/env bash
# test/gpu/50-reliability-multigpu.sh: several contexts and devices in one
# process, and one trace per rank under torchrun (docs/reliability.md, guarantee 4).
#
# 1. build/gpu/rel_multictx (test/gpu/rel_multictx.cu) under ktrace, hashing
#    on: every device's primary context from its own thread, a second context
#    on device 0, then device 0's primary again.  PASS when the program's own
#    checks pass, the trace reads to its END, it holds as many launches as the
#    program made, in as many distinct contexts as it used, on every device,
#    and bytes were hashed.  Works on one GPU (two contexts on device 0).
# 2. torchrun --nproc_per_node=2, NCCL all-reduce (the sum checked in each
#    rank), KTRACE_OUTPUT=rank%r-%p.ktrace: exactly one trace per rank (0 and
#    1), each with NCCL kernels (name contains "nccl") and an END with exit
#    status 0.  SKIP with fewer than 2 GPUs or without torch.distributed/NCCL.
set -u
cd "$(dirname "$0")/../.."
B=${KT_BUILD:-$PWD/build}
T=${KT_TMP:-$(mktemp -d)}/multigpu
L=${KT_LOGS:-$T}/multigpu
mkdir -p "$T" "$L"
lib=$B/libktrace.so
dump=$B/ktrace-dump
prog=$B/gpu/rel_multictx

result() { echo "RESULT|multigpu-$1|$2|$3"; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	result all SKIP "no GPU"
	exit 0
fi
ngpu=$(nvidia-smi -L | grep -c '^GPU')
echo "GPUs: $ngpu"

# ---- 1. contexts and devices in one process -----------------------------------
if [ ! -x "$prog" ] || [ ! -f "$lib" ]; then
	result contexts SKIP "$prog or $lib not built (make gpu)"
else
	rm -f "$T"/ctx-*.ktrace
	KTRACE_OUTPUT="$T/ctx-%p.ktrace" KTRACE_HASH=1 LD_PRELOAD="$lib" timeout 120 "$prog" \
		>"$T/ctx.out" 2>"$T/ctx.err"
	rc=$?
	cat "$T/ctx.out" "$T/ctx.err"
	trace=$(ls "$T"/ctx-*.ktrace 2>/dev/null | head -n 1)
	if [ $rc != 0 ] || ! grep -q '^OK' "$T/ctx.out" || [ -z "$trace" ]; then
		result contexts FAIL "exit $rc, trace ${trace:-missing}: $(grep -m1 FAIL "$T/ctx.out")"
	else
		"$dump" --json "$trace" >"$T/ctx.jsonl" 2>"$T/ctx.dump.err"
		"$dump" --summary "$trace" >"$L/ctx.summary.txt" 2>&1
		python3 - "$T/ctx.jsonl" "$T/ctx.out" <<'EOF' | tee "$L/ctx.check.txt"
import json, re, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
out = open(sys.argv[2]).read()
m = re.search(r"DEVICES (\d+) CONTEXTS (\d+) LAUNCHES (\d+)", out)
ndev, nctx, nl = map(int, m.groups())
fills = [r for r in recs if r["type"] == "launch" and "fill" in (r.get("kernel") or "")]
ctxs = {r["context"] for r in fills}
devs = {r["device"] for r in fills}
end = [r for r in recs if r["type"] == "end"]
hashed = sum(1 for r in fills if "hash_skipped" not in r.get("launch_flags", []))
problems = []
if len(fills) != nl:
    problems.append(f"{len(fills)} fill launches recorded, program made {nl}")
if len(ctxs) < nctx:
    problems.append(f"{len(ctxs)} contexts in the trace, program used {nctx}")
if devs != set(range(ndev)):
    problems.append(f"devices in the trace {sorted(devs)}, want 0..{ndev - 1}")
if not end or end[-1].get("status") != 0:
    problems.append("no END with status 0")
if hashed == 0:
    problems.append("no fill launch was hashed")
print(f"CHECK fills={len(fills)} program={nl} contexts={len(ctxs)} devices={sorted(devs)} hashed_launches={hashed}")
print("VERDICT " + ("PASS" if not problems else "FAIL " + "; ".join(problems)))
EOF
		v=$(grep '^VERDICT' "$L/ctx.check.txt")
		case "$v" in
		"VERDICT PASS") result contexts PASS "$(grep '^CHECK' "$L/ctx.check.txt" | cut -c7-)" ;;
		*) result contexts FAIL "${v#VERDICT FAIL }" ;;
		esac
	fi
fi

# ---- 2. torchrun, 2 ranks, NCCL all-reduce ----------------------------------------
if [ "$ngpu" -lt 2 ]; then
	result torchrun-nccl SKIP "$ngpu GPU(s); 2 needed"
	exit 0
fi
if ! python3 -c "import torch.distributed as d; assert d.is_nccl_available()" 2>/dev/null; then
	result torchrun-nccl SKIP "torch.distributed with NCCL not available"
	exit 0
fi
cat >"$T/allreduce.py" <<'EOF'
import os, torch, torch.distributed as dist
dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
x = torch.full((1 << 20,), float(rank + 1), device="cuda")
for _ in range(3):
    y = x.clone()
    dist.all_reduce(y)
torch.cuda.synchronize()
want = float(sum(range(1, world + 1)))
ok = bool((y == want).all())
print(f"RANK {rank} PID {os.getpid()} SUM {float(y[0])} {'OK' if ok else 'BAD'}", flush=True)
dist.destroy_process_group()
raise SystemExit(0 if ok else 1)
EOF
rm -f "$T"/rank*.ktrace
KTRACE_OUTPUT="$T/rank%r-%p.ktrace" KTRACE_HASH=1 LD_PRELOAD="$lib" timeout 300 \
	torchrun --standalone --nproc_per_node=2 "$T/allreduce.py" >"$T/tr.out" 2>"$T/tr.err"
rc=$?
cat "$T/tr.out"
tail -n 20 "$T/tr.err" >"$L/torchrun.err.txt"
grep "ktrace" "$T/tr.err" | head -n 10
ls -la "$T"/rank*.ktrace 2>/dev/null
if [ $rc != 0 ] || [ "$(grep -c ' OK$' "$T/tr.out")" != 2 ]; then
	result torchrun-nccl FAIL "torchrun exit $rc: $(tail -n 3 "$T/tr.err" | tr '\n' ' ' | cut -c1-300)"
	exit 0
fi
bad=""
for r in 0 1; do
	files=$(ls "$T"/rank$r-*.ktrace 2>/dev/null | wc -l)
	pid=$(awk -v r=$r '$1=="RANK" && $2==r {print $4}' "$T/tr.out")
	f=$T/rank$r-$pid.ktrace
	if [ ! -f "$f" ]; then
		bad="$bad rank $r: no trace $f from the worker;"
		continue
	fi
	# Other processes with this rank number (torchrun's own agent, which
	# initialises CUDA but has no RANK and so expands %r to 0) may leave a
	# trace too: it must hold no launch.
	for g in "$T"/rank$r-*.ktrace; do
		[ "$g" = "$f" ] && continue
		n=$("$dump" --summary "$g" 2>/dev/null | sed -n 's/.* \([0-9][0-9]*\) launches.*/\1/p' | head -n 1)
		echo "rank $r: also $g (${n:-?} launches: not a worker)"
		[ "${n:-1}" = 0 ] || bad="$bad rank $r: a second trace with launches ($g);"
	done
	"$dump" --summary "$f" >"$L/rank$r.summary.txt" 2>&1
	nccl=$("$dump" --kernel 'nccl|NCCL' "$f" 2>/dev/null | grep -c '^launch')
	endok=$(grep -c 'end: exit status 0' "$L/rank$r.summary.txt")
	echo "rank $r: $f, $nccl NCCL launches, END ok: $endok"
	[ "$nccl" -gt 0 ] || bad="$bad rank $r: no NCCL kernel launches;"
	[ "$endok" = 1 ] || bad="$bad rank $r: no END with exit status 0;"
done
if [ -n "$bad" ]; then
	result torchrun-nccl FAIL "$bad"
else
	result torchrun-nccl PASS "one trace with launches per rank (rank%r), NCCL kernels in each, all-reduce sums right"
fi
rm -f "$T"/*.ktrace
