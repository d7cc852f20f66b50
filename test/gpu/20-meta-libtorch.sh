#!/usr/bin/env bash
# test/gpu/20-meta-libtorch.sh: ktrace-inspect on the installed libtorch_cuda.so.
#
# Parses every .nv_fatbin container for this GPU's architecture, times it, and
# compares the distinct names of the kernels whose ELF is for that sm with
# the entry symbols `cuobjdump -symbols -arch sm_N` lists (STO_ENTRY lines).
set -u
name=meta_libtorch
B=${KT_BUILD:-build}
LOGS=${KT_LOGS:-/tmp}
TMP=${KT_TMP:-/tmp}
inspect=$B/ktrace-inspect
[ -x "$inspect" ] || { echo "RESULT|$name|SKIP|$inspect not built"; exit 0; }
lib=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib","libtorch_cuda.so"))' 2>/dev/null)
[ -n "$lib" ] && [ -f "$lib" ] || { echo "RESULT|$name|SKIP|no torch with libtorch_cuda.so"; exit 0; }
sm=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
[ -n "$sm" ] || { echo "RESULT|$name|SKIP|no GPU architecture from nvidia-smi"; exit 0; }
size_mb=$(( $(stat -c %s "$lib") / 1048576 ))
echo "library: $lib ($size_mb MiB), sm_$sm"

# warm the page cache once so both timings read from memory
cat "$lib" >/dev/null
t0=$(date +%s%N)
timeout 90 "$inspect" --summary --json --no-env-caches --sm "$sm" "$lib" >"$LOGS/meta-libtorch-summary.json" 2>"$LOGS/meta-libtorch.err"
rc=$?
t1=$(date +%s%N)
wall_ms=$(( (t1 - t0) / 1000000 ))
cat "$LOGS/meta-libtorch-summary.json"
head -5 "$LOGS/meta-libtorch.err"
if [ $rc != 0 ]; then
	echo "RESULT|$name|FAIL|ktrace-inspect exit $rc: $(head -1 "$LOGS/meta-libtorch.err")"
	exit 0
fi
ours=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["kernels_by_sm"].get(sys.argv[2],0), d["kernels"], d["parse_ms"])' \
	"$LOGS/meta-libtorch-summary.json" "$sm")
read -r ours_sm ours_all parse_ms <<<"$ours"
echo "BENCH|meta_libtorch_parse|$parse_ms|ms|ktrace-inspect --sm $sm on libtorch_cuda.so ($size_mb MiB, $ours_all kernels; wall $wall_ms ms)"

command -v cuobjdump >/dev/null 2>&1 || { echo "RESULT|$name|SKIP|cuobjdump not installed (ktrace: $ours_sm sm_$sm kernels)"; exit 0; }
timeout 90 "$inspect" --json --no-env-caches --no-dwarf --sm "$sm" "$lib" >"$TMP/meta-libtorch.json" 2>/dev/null
t2=$(date +%s%N)
timeout 100 cuobjdump -symbols -arch "sm_$sm" "$lib" >"$TMP/meta-libtorch-symbols.txt" 2>&1
crc=$?
t3=$(date +%s%N)
echo "BENCH|meta_libtorch_cuobjdump_symbols|$(( (t3 - t2) / 1000000 ))|ms|cuobjdump -symbols -arch sm_$sm, for comparison"
[ "$crc" = 0 ] || { echo "RESULT|$name|FAIL|cuobjdump -symbols exit $crc"; exit 0; }
# The same kernel may sit in an sm_N and an sm_Na ELF of one container (ktrace
# keeps it once) and in several containers (kept each time): compare the sets
# of kernel names, and print the raw counts.
python3 - "$TMP/meta-libtorch.json" "$TMP/meta-libtorch-symbols.txt" "$sm" "$parse_ms" <<'PY'
import json, re, sys
ours_doc = json.load(open(sys.argv[1]))[0]
sm = int(sys.argv[3])
ours = [k['name'] for k in ours_doc['kernels'] if k['sm'] == sm]
arch, by_arch, theirs = None, {}, []
for line in open(sys.argv[2], errors='replace'):
    m = re.match(r'\s*arch\s*=\s*(\S+)', line)
    if m:
        arch = m.group(1)
        continue
    if 'STO_ENTRY' in line and ' U ' not in line:
        name = line.split()[-1]
        theirs.append(name)
        by_arch[arch] = by_arch.get(arch, 0) + 1
so, st = set(ours), set(theirs)
print('ktrace: %d kernels for sm_%d (%d distinct names); cuobjdump: %d entry symbols %s (%d distinct)'
      % (len(ours), sm, len(so), len(theirs), by_arch, len(st)))
for n in sorted(st - so)[:5]:
    print('only in cuobjdump: ' + n[:160])
for n in sorted(so - st)[:5]:
    print('only in ktrace: ' + n[:160])
if so == st and st:
    print('RESULT|meta_libtorch|PASS|%d distinct sm_%d kernel names = cuobjdump -symbols (%d entries, %s), parsed in %s ms'
          % (len(so), sm, len(theirs), by_arch, sys.argv[4]))
else:
    print('RESULT|meta_libtorch|FAIL|names differ: %d only in cuobjdump, %d only in ktrace (ktrace %d kernels, cuobjdump %d entries %s)'
          % (len(st - so), len(so - st), len(ours), len(theirs), by_arch))
PY
