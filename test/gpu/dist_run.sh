#!/usr/bin/env bash
# test/gpu/dist_run.sh: the first divergence of a job across ranks, on a machine with
# several GPUs (the device tool's nvidia-h100-x2 / x4 kinds).  Run in three parts, each
# an area's script: KT_DIST_PART=planted (92-dist-1-planted.sh: the ddp and tpdp cases),
# collectives (92-dist-2-collectives.sh: algo, branch, two nodes), overhead
# (92-dist-3-overhead.sh).
#
# test/gpu/workloads/dist_step.py under torchrun, each job run by a wrapper that
# numbers its runs (KT_DIST_RUN).  Ground truth: two bare runs of the job, their
# ranks' final parameters compared bytewise.  Then `ktrace check --json --runs 2
# --no-warmup` of the same job (docs/distributed.md):
#   dist-ddp2-planted    2 ranks, index_add_ on rank 1 before the gradients' all-reduce:
#                        exit 1, culprit rank 1 (index_add), confirmed by replay, rank 0
#                        downstream
#   dist-ddp2-det        the same job unplanted: exit 0 (no false divergence)
#   dist-ddp4-planted    4 ranks, the same, every rank but 1 downstream       (4 GPUs)
#   dist-tpdp4-planted   tensor-parallel pairs inside data-parallel pairs, index_add_ on
#                        rank 2: culprit rank 2                                (4 GPUs)
#   dist-algo            an all_reduce with NCCL_ALGO Ring in one run and Tree in the
#                        other: the collective named (verdict collective_nondeterministic,
#                        NCCL_ALGO among the settings that differ); SKIP when the bare
#                        runs did not differ (the algorithms summed alike)
#   dist-branch          rank 1 makes one more all_reduce in one run: reported as ranks
#                        whose collectives differ, exit 1
#   dist-two-nodes       2 ranks as two torchrun invocations with --nnodes=2 (one per
#                        "node"), traced with LD_PRELOAD into run<k>/node<n>/, compared
#                        with `ktrace-diff DIR DIR`: culprit rank 1
# BENCH: step time of the ddp job, 1 rank and N ranks, bare / metadata (KTRACE_HASH=0)
# / full hashing (`ktrace run`), and RESULT dist-overhead: the N-rank ratios at most
# 10% above the 1-rank ones.
# Prints RESULT|...|PASS|FAIL|SKIP|detail and BENCH|... lines (test/gpu/run.sh).
set -u
B=${KT_BUILD:-$PWD/build}
R=${KT_ROOT:-$PWD}
T=${KT_TMP:-$(mktemp -d)}
L=${KT_LOGS:-$T}
w=$R/test/gpu/workloads/dist_step.py
d=$T/dist
part=${KT_DIST_PART:-planted}
case $part in
planted) names="dist-ddp2-planted dist-ddp2-det dist-ddp4-planted dist-tpdp4-planted" ;;
collectives) names="dist-algo dist-branch dist-two-nodes" ;;
overhead) names="dist-overhead" ;;
*) echo "dist_run.sh: KT_DIST_PART=$part: not planted, collectives or overhead" >&2; exit 2 ;;
esac

skip_all() {
	for n in $names; do echo "RESULT|$n|SKIP|$1"; done
	exit 0
}

command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 || skip_all "no GPU"
ngpu=$(nvidia-smi -L | grep -c '^GPU')
[ "$ngpu" -ge 2 ] || skip_all "one GPU: the job needs at least 2 (nvidia-h100-x2 or x4)"
for f in "$B/ktrace" "$B/ktrace-diff" "$B/libktrace.so"; do
	[ -f "$f" ] || skip_all "$f not built (make)"
done
command -v torchrun >/dev/null 2>&1 || skip_all "no torchrun"
python3 -c "import torch, torch.distributed as d, sys; sys.exit(0 if d.is_nccl_available() else 1)" 2>/dev/null ||
	skip_all "PyTorch without NCCL"
rm -rf "$d"
mkdir -p "$d" "$L"

# job NAME NPROC SCENARIO [ARGS]: a wrapper that numbers its runs and starts the job
job() {
	local f=$d/$1.sh
	cat >"$f" <<EOF
#!/usr/bin/env bash
c=$d/$1.counter
n=\$((\$(cat "\$c" 2>/dev/null || echo 0) + 1)); echo \$n >"\$c"
export KT_DIST_RUN=\$n
exec torchrun --standalone --nproc-per-node=$2 "$w" $3 "$d/$1.out\$n" ${4:-}
EOF
	chmod +x "$f"
	echo "$f"
}

# truth NAME WRAPPER: "differ" or "same" from two bare runs (their rank*.bin files)
truth() {
	local c=$d/$1.counter
	rm -f "$c"
	timeout 240 "$2" >>"$L/dist-$1.log" 2>&1 && timeout 240 "$2" >>"$L/dist-$1.log" 2>&1 || {
		echo error
		return
	}
	if diff -rq "$d/$1.out1" "$d/$1.out2" >/dev/null 2>&1; then echo same; else echo differ; fi
	rm -f "$c"
}

# check NAME WRAPPER: ktrace check's JSON into $d/NAME.json, its exit status echoed
check() {
	timeout 400 "$B/ktrace" check --json --runs 2 --no-warmup --dir "$d/$1.check" -- "$2" \
		>"$d/$1.json" 2>>"$L/dist-$1.log"
	echo $?
}

# judge NAME STATUS PYTHON-EXPR: PASS when the expression holds of j (the job) and rc
judge() {
	python3 - "$d/$1.json" "$2" "$1" "$3" <<'EOF'
import json, sys
path, rc, name, expr = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
try:
    d = json.load(open(path))
    j = d["jobs"][0]
    ranks = {r["rank"]: r for r in j.get("ranks", [])}
    ok = eval(expr, {"j": j, "rc": rc, "ranks": ranks, "json": json})
    what = "exit %d, verdict %s, culprit rank %s, roles %s" % (
        rc, j.get("verdict"), j.get("culprit_rank"), {k: v.get("role") for k, v in ranks.items()})
except Exception as e:  # noqa: BLE001 - any unreadable report is this test's failure
    ok, what = False, "exit %d, no job report (%s)" % (rc, e)
print("RESULT|%s|%s|%s" % (name, "PASS" if ok else "FAIL", what))
EOF
}

planted_case() { # NAME NPROC SCENARIO CULPRIT
	local wr t rc
	wr=$(job "$1" "$2" "$3" --planted)
	t=$(truth "$1" "$wr")
	[ "$t" = differ ] || { echo "RESULT|$1|SKIP|bare runs: $t (nothing to find)"; return; }
	rc=$(check "$1" "$wr")
	judge "$1" "$rc" "rc == 1 and j['culprit_rank'] == $4 and all(r['role'] in ('downstream', 'identical') \
for k, r in ranks.items() if k != $4) and j['confirmation']['method'] == 'replay'"
}

np=2
[ "$ngpu" -ge 4 ] && np=4
if [ "$part" = planted ]; then
planted_case dist-ddp2-planted 2 ddp 1
wr=$(job dist-ddp2-det 2 ddp)
t=$(truth dist-ddp2-det "$wr")
if [ "$t" = same ]; then
	judge dist-ddp2-det "$(check dist-ddp2-det "$wr")" "rc == 0 and j['culprit_rank'] is None"
else
	echo "RESULT|dist-ddp2-det|SKIP|bare runs: $t (the unplanted job is not deterministic)"
fi
if [ "$ngpu" -ge 4 ]; then
	planted_case dist-ddp4-planted 4 ddp 1
	planted_case dist-tpdp4-planted 4 tpdp 2
else
	echo "RESULT|dist-ddp4-planted|SKIP|$ngpu GPUs (4 needed)"
	echo "RESULT|dist-tpdp4-planted|SKIP|$ngpu GPUs (4 needed)"
fi

fi
if [ "$part" = collectives ]; then
wr=$(job dist-algo "$np" algo)
t=$(truth dist-algo "$wr")
if [ "$t" = differ ]; then
	judge dist-algo "$(check dist-algo "$wr")" "rc == 1 and j['verdict'] == 'collective_nondeterministic' and \
'NCCL_ALGO' in json.dumps(j['collective'])"
else
	echo "RESULT|dist-algo|SKIP|bare runs with NCCL_ALGO Ring and Tree: $t ($np ranks summed alike)"
fi
wr=$(job dist-branch 2 branch)
judge dist-branch "$(check dist-branch "$wr")" "rc in (1, 2) and j['verdict'] == 'ranks_differ'"

# Two "nodes": two torchrun invocations of one rank each, rendezvous on this host.
two_nodes() { # RUN: one traced run of the planted ddp job into $d/two/run<RUN>/node<n>
	local port=$((29600 + $1)) pids=() n
	for n in 0 1; do
		CUDA_VISIBLE_DEVICES=$n KT_DIST_RUN=$1 KTRACE_QUIET=1 LD_PRELOAD="$B/libktrace.so" \
			KTRACE_OUTPUT="$d/two/run$1/node$n/r%r-p%p.ktrace" \
			timeout 240 torchrun --nnodes=2 --node-rank=$n --nproc-per-node=1 --rdzv-backend=c10d \
			--rdzv-endpoint=127.0.0.1:$port "$w" ddp "$d/two/out$1" --planted >>"$L/dist-two-nodes.log" 2>&1 &
		pids+=($!)
	done
	wait "${pids[0]}" && wait "${pids[1]}"
}
mkdir -p "$d/two"
if two_nodes 1 && two_nodes 2; then
	"$B/ktrace-diff" --json "$d/two/run1" "$d/two/run2" >"$d/dist-two-nodes.json" 2>>"$L/dist-two-nodes.log"
	rc=$?
	python3 - "$d/dist-two-nodes.json" "$rc" <<'EOF'
import json, sys
rc = int(sys.argv[2])
try:
    d = json.load(open(sys.argv[1]))
    j = d["jobs"][0] if "jobs" in d else d
    ok = rc == 1 and j.get("culprit_rank") == 1
    what = "exit %d, verdict %s, culprit rank %s" % (rc, j.get("verdict"), j.get("culprit_rank"))
except Exception as e:  # noqa: BLE001
    ok, what = False, "exit %d, no job report (%s)" % (rc, e)
print("RESULT|dist-two-nodes|%s|%s" % ("PASS" if ok else "FAIL", what))
EOF
else
	echo "RESULT|dist-two-nodes|FAIL|a traced two-node run failed (see dist-two-nodes.log)"
fi

fi
if [ "$part" = overhead ]; then
# Overhead: the ddp step, 1 rank and np ranks, bare / metadata / hashing.
step_ms() { # NPROC MODE: rank 0's ms per step
	local env=()
	case $2 in
	meta) env=(LD_PRELOAD="$B/libktrace.so" KTRACE_HASH=0 KTRACE_QUIET=1 KTRACE_OUTPUT="$d/bench/$1-meta-r%r-p%p.ktrace") ;;
	hash) env=(LD_PRELOAD="$B/libktrace.so" KTRACE_QUIET=1 KTRACE_OUTPUT="$d/bench/$1-hash-r%r-p%p.ktrace") ;;
	esac
	env ${env[@]+"${env[@]}"} timeout 240 torchrun --standalone --nproc-per-node="$1" "$w" ddp "$d/bench/out" \
		--bench 50 2>>"$L/dist-bench.log" | sed -n 's/^step_ms //p' | tail -n 1
}
mkdir -p "$d/bench"
declare -A ms
for n in 1 "$np"; do
	for m in bare meta hash; do
		rm -f "$d"/bench/*.ktrace
		ms[$n-$m]=$(step_ms "$n" "$m")
		echo "BENCH|dist-step-$n-$m|${ms[$n-$m]:-nan}|ms|ddp step, $n rank(s), $m (rank 0, 50 steps)"
	done
done
python3 - "${ms[1-bare]:-}" "${ms[1-meta]:-}" "${ms[1-hash]:-}" "${ms[$np-bare]:-}" "${ms[$np-meta]:-}" \
	"${ms[$np-hash]:-}" "$np" <<'EOF'
import sys
try:
    b1, m1, h1, bn, mn, hn = (float(x) for x in sys.argv[1:7])
except ValueError:
    print("RESULT|dist-overhead|FAIL|a step time is missing (see dist-bench.log)")
    sys.exit(0)
n = sys.argv[7]
r = {"meta1": m1 / b1, "hash1": h1 / b1, "metan": mn / bn, "hashn": hn / bn}
for k, v in r.items():
    print("BENCH|dist-ratio-%s|%.3f|x|step time traced / bare" % (k, v))
ok = r["metan"] <= r["meta1"] * 1.1 and r["hashn"] <= r["hash1"] * 1.1
print("RESULT|dist-overhead|%s|%s ranks: metadata %.3fx, hashing %.3fx; 1 rank: %.3fx, %.3fx (target: within 10%%)"
      % ("PASS" if ok else "FAIL", n, r["metan"], r["hashn"], r["meta1"], r["hash1"]))
EOF
fi
exit 0
