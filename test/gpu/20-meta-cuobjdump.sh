#!/usr/bin/env bash
# test/gpu/20-meta-cuobjdump.sh: parameter layouts from ktrace-inspect against
# `cuobjdump -elf` (which exists only where the CUDA driver stack is installed).
#
# Dumps every test cubin (build/cubins, made by `make cubins`) and the Triton
# fixture cubins (test/fixtures/cuobjdump/triton-3.6), then checks that every
# kernel's parameter ordinals, offsets and sizes printed by cuobjdump equal
# ktrace-inspect's.  The dumps are kept in $OUT/cuobjdump-dumps.tar.gz (when
# $OUT is set): they are the reference files of test/fixtures/cuobjdump/.
set -u
name=meta_cuobjdump
B=${KT_BUILD:-build}
ROOT=${KT_ROOT:-$PWD}
TMP=${KT_TMP:-/tmp}/meta-cuobjdump
mkdir -p "$TMP/dumps"

command -v cuobjdump >/dev/null 2>&1 || { echo "RESULT|$name|SKIP|cuobjdump not installed"; exit 0; }
command -v python3 >/dev/null 2>&1 || { echo "RESULT|$name|SKIP|python3 not installed"; exit 0; }
[ -x "$B/ktrace-inspect" ] || { echo "RESULT|$name|SKIP|$B/ktrace-inspect not built"; exit 0; }
[ -d "$B/cubins" ] || { echo "RESULT|$name|SKIP|$B/cubins not built (make cubins)"; exit 0; }
cuobjdump --version | tail -1

files=()
for f in "$B"/cubins/*.cubin "$ROOT"/test/fixtures/cuobjdump/triton-3.6/triton-cache/*/*.cubin; do
	[ -f "$f" ] && files+=("$f")
done
for f in "${files[@]}"; do
	out="$TMP/dumps/$(basename "$f").elf.txt"
	case "$f" in */triton-cache/*) out="$TMP/dumps/triton-$(basename "$(dirname "$f")" | cut -c1-8)-$(basename "$f").elf.txt" ;; esac
	cuobjdump -elf "$f" >"$out" 2>&1 || echo "cuobjdump -elf $f failed"
done
# fatbins and host ELF: which entries cuobjdump sees (compressed ones included)
for f in "$B"/cubins/*.fatbin "$B"/cubins/libkernels.so; do
	[ -f "$f" ] || continue
	{ cuobjdump --list-elf "$f"; cuobjdump --list-ptx "$f"; } >"$TMP/dumps/$(basename "$f").list.txt" 2>&1
done
cuobjdump -elf "$B/cubins/kernels_multi.fatbin" >"$TMP/dumps/kernels_multi.fatbin.elf.txt" 2>&1
if [ -n "${OUT:-}" ]; then
	tar -C "$TMP" -czf "$OUT/cuobjdump-dumps.tar.gz" dumps && echo "dumps: $OUT/cuobjdump-dumps.tar.gz"
fi

python3 - "$B/ktrace-inspect" "$TMP/dumps" "${files[@]}" <<'PY'
import json, os, re, subprocess, sys
inspect, dumps, files = sys.argv[1], sys.argv[2], sys.argv[3:]

def parse_dump(text):
    """{kernel: {ordinal: (offset, size)}} from cuobjdump -elf output."""
    out, cur, attr = {}, None, None
    for line in text.splitlines():
        m = re.match(r'^\s*\.nv\.info\.(\S+)', line)
        if m:
            cur = out.setdefault(m.group(1), {})
            attr = None
            continue
        if re.match(r'^\s*\.', line) and not line.strip().startswith('.nv.info'):
            if re.match(r'^\s*\.(text|nv\.constant|nv\.shared|symtab|strtab|shstrtab|rel)', line):
                cur = None
        m = re.search(r'Attribute:\s*(\w+)', line)
        if m:
            attr = m.group(1)
            continue
        if cur is not None and attr and attr.startswith('EIATTR_KPARAM_INFO'):
            o = re.search(r'Ordinal\s*:\s*(0x[0-9a-fA-F]+|\d+)', line)
            f = re.search(r'Offset\s*:\s*(0x[0-9a-fA-F]+|\d+)', line)
            s = re.search(r'Size\s*:\s*(0x[0-9a-fA-F]+|\d+)', line)
            if o and f and s:
                cur[int(o.group(1), 0)] = (int(f.group(1), 0), int(s.group(1), 0))
    return out

fails, checked, kernels = [], 0, 0
for f in files:
    base = os.path.basename(f)
    cand = [p for p in os.listdir(dumps) if p.endswith(base + '.elf.txt')]
    if 'triton-cache' in f:
        h = os.path.basename(os.path.dirname(f))[:8]
        cand = [p for p in cand if p.startswith('triton-' + h)]
    if not cand:
        fails.append(f + ': no dump'); continue
    ref = parse_dump(open(os.path.join(dumps, cand[0])).read())
    r = subprocess.run([inspect, '--json', '--no-env-caches', '--no-dwarf', f], capture_output=True, text=True)
    if r.returncode != 0:
        fails.append(f + ': ktrace-inspect failed: ' + r.stderr.strip()); continue
    ours = {k['name']: k for k in json.loads(r.stdout)[0]['kernels']}
    for kname, params in ref.items():
        if not params:
            continue
        k = ours.get(kname)
        if not k:
            fails.append('%s: kernel %s missing' % (base, kname)); continue
        kernels += 1
        got = {p['ordinal']: (p['offset'], p['size']) for p in k['params']}
        if got != params:
            fails.append('%s: %s: cuobjdump %s, ktrace %s' % (base, kname, sorted(params.items()), sorted(got.items())))
        checked += len(params)
print('compared %d parameters of %d kernels in %d files' % (checked, kernels, len(files)))
for x in fails[:20]:
    print('MISMATCH ' + x)
if fails:
    print('RESULT|meta_cuobjdump|FAIL|%d mismatches (first: %s)' % (len(fails), fails[0][:200]))
elif checked == 0:
    print('RESULT|meta_cuobjdump|FAIL|no KPARAM_INFO parsed from the dumps')
else:
    print('RESULT|meta_cuobjdump|PASS|%d parameters of %d kernels equal cuobjdump -elf' % (checked, kernels))
PY
