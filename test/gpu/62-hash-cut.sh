#!/usr/bin/env bash
# test/gpu/62-hash-cut.sh: no silent cut at KTRACE_HASH_MAX (docs/verdicts.md,
# "Launches that cannot be verified", hash_cut; docs/hashing.md, "The cut").
#
# verdict_programs.py torch_hash_cut (a 1 GiB tensor, a non-deterministic
# index_add_ into rows past its first 256 MiB, then a sum that reads it all)
# under `ktrace check --json --runs 2 --no-warmup`:
#   hash-cut-default      the default KTRACE_HASH_MAX (4G) hashes the tensor whole:
#                         exit 1, the index_add confirmed non-deterministic, no
#                         region cut, the reduction never named
#   hash-cut-old-default  --hash-max 256M (the old default) cuts it: the reduction
#                         is never confirmed nor called non-deterministic; the
#                         report names the cut (an input "hash_cut", the
#                         index_add unverified with reason hash_cut)
# and the reference step under `ktrace run` with the default:
#   hash-cut-refstep      test/gpu/workloads/ref_step.py (3 steps): no region
#                         flagged capped
# Prints RESULT|...|PASS|FAIL|SKIP|detail lines (test/gpu/run.sh); the JSON
# reports and logs go to $KT_LOGS.
set -u
B=${KT_BUILD:-$PWD/build}
R=${KT_ROOT:-$PWD}
T=${KT_TMP:-$(mktemp -d)}
L=${KT_LOGS:-$T}
k=$B/ktrace
progs=$R/test/gpu/workloads/verdict_programs.py
names="hash-cut-default hash-cut-old-default hash-cut-refstep"

result() { echo "RESULT|$1|$2|$3"; }
skip_all() {
	for n in $names; do result "$n" SKIP "$1"; done
	exit 0
}

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	skip_all "no GPU"
fi
for f in "$k" "$B/ktrace-dump" "$B/libktrace.so"; do
	[ -f "$f" ] || skip_all "$f not built (make)"
done
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
	skip_all "python3 with CUDA torch not available"
mkdir -p "$L"

# judge NAME MODE JSON RC: one RESULT line from the JSON report.
judge() {
	python3 - "$@" <<'EOF'
import json, re, sys
name, mode, path, rc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def out(status, detail):
    print(f"RESULT|{name}|{status}|{detail.replace('|', '/')[:400]}")
    sys.exit(0)
try:
    doc = json.load(open(path))
except (OSError, ValueError) as e:
    out("FAIL", f"exit {rc}, no JSON report: {e}")
comps = doc.get("comparisons") or []
if rc not in (0, 1) or not comps:
    out("FAIL", f"exit {rc}, {len(comps)} comparisons")
c = comps[0]
text = json.dumps(c)
conf = c.get("confirmation") or {}
confirmed = [e.get("kernel", "") for e in conf.get("replayed") or [] if e.get("outcome") == "confirmed"]
divs = c.get("divergences") or []
first = divs[0] if divs else {}
# the reduction, not the index_add (whose functor is named ReduceAdd)
def is_reduction(k):
    return re.search(r"reduce|sum", k, re.I) and not re.search(r"index", k, re.I)
if any(is_reduction(k) for k in confirmed):
    out("FAIL", f"the reduction was confirmed non-deterministic: {confirmed}")
if first and is_reduction(first.get("kernel", "")) and first.get("classification") == "kernel_nondeterministic":
    out("FAIL", "the reduction is called non-deterministic on digests that matched up to the cut")
cut = (c.get("launches") or {}).get("unverified_by_reason", {}).get("hash_cut", 0)
if mode == "default":
    if rc != 1 or not any(re.search(r"indexFunc|index_add", k) for k in confirmed):
        out("FAIL", f"exit {rc}, confirmed {confirmed or 'nothing'}: wanted the index_add")
    if cut or '"hash_cut"' in text:
        out("FAIL", "a region was cut under the default KTRACE_HASH_MAX")
    out("PASS", f"exit 1, confirmed {confirmed[0][:80]}; nothing cut")
if not cut or '"hash_cut"' not in text:
    out("FAIL", f"exit {rc}: the report does not name the cut (unverified hash_cut {cut})")
out("PASS", f"exit {rc}, verdict '{c.get('verdict')}', first divergence {first.get('kernel', '-')[:60]} "
            f"({first.get('classification', '-')}), {cut} launch unverified (hash_cut)")
EOF
}

# check NAME MODE [ktrace check options...]
check() {
	local name=$1 mode=$2 rc
	shift 2
	rm -rf "$T/$name"
	timeout 300 "$k" check --json --runs 2 --no-warmup --dir "$T/$name" "$@" -- \
		python3 "$progs" torch_hash_cut >"$L/$name.json" 2>"$L/$name.log"
	rc=$?
	judge "$name" "$mode" "$L/$name.json" "$rc"
}

check hash-cut-default default
check hash-cut-old-default old --hash-max 256M

d=$T/hash-cut-refstep
rm -rf "$d"
mkdir -p "$d"
if ! timeout 300 "$k" run --overwrite -o "$d/trace.ktrace" -- python3 "$R/test/gpu/workloads/ref_step.py" \
	--steps 3 --warmup 1 >"$L/hash-cut-refstep.log" 2>&1; then
	result hash-cut-refstep FAIL "ktrace run of ref_step.py failed (hash-cut-refstep.log)"
else
	n=$("$B/ktrace-dump" --json "$d/trace.ktrace" 2>>"$L/hash-cut-refstep.log" | grep -c '"capped"')
	regions=$("$B/ktrace-dump" --json "$d/trace.ktrace" 2>/dev/null | grep -o '"param_offset"' | wc -l)
	if [ "$regions" -eq 0 ]; then
		result hash-cut-refstep FAIL "no region recorded"
	elif [ "$n" -eq 0 ]; then
		result hash-cut-refstep PASS "$regions regions, none capped"
	else
		result hash-cut-refstep FAIL "$n launch records with a capped region"
	fi
fi
exit 0
