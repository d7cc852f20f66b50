"""test/gpu/workloads/e2e_verify.py: judge the JSON of `ktrace check` for test/gpu/40-e2e-*.sh.

usage: e2e_verify.py MODE JSON RC LOG PREFIX [KERNEL_RE [OUT_ORDINAL]]

  JSON   stdout of `ktrace check --json` (one object for 2 runs, a list for more)
  RC     its exit status
  LOG    its stderr: the ktrace lines and the program's own output (with --json
         the program's stdout goes there), one result line per run starting
         with PREFIX (its last fields are the program's output digests)
  MODE
    nondet    the first divergence of every diverged comparison is KERNEL_RE,
              classified kernel_nondeterministic, with an output of ordinal
              OUT_ORDINAL (-1: any); comparisons without divergence must come
              from runs whose program outputs were equal (else ktrace missed it);
              no divergence at all with equal outputs is SKIP (the hardware
              happened to add in the same order every time)
    identical exit 0, no comparison diverged, each compared launches and
              verified some (unverified ones are counted in the detail)
    inputs    exit 1; the first divergence is classified inputs_differ and an
              input that differs has a host-to-device memcpy as last writer in
              both runs (KERNEL_RE, when given, must match the kernel)
Prints one line: PASS|FAIL|SKIP followed by a detail.
"""
import json
import re
import sys


def out(status, detail):
    print(f"{status} {detail}")
    sys.exit(0)


def main():
    if len(sys.argv) < 6:
        out("FAIL", "e2e_verify.py: bad arguments")
    mode, jpath, rc, log, prefix = sys.argv[1:6]
    kre = sys.argv[6] if len(sys.argv) > 6 else ""
    ordinal = int(sys.argv[7]) if len(sys.argv) > 7 else -1
    rc = int(rc)
    logtext = open(log, errors="replace").read()
    runs = [l.split() for l in logtext.splitlines() if l.startswith(prefix)]
    outputs = [tuple(f for f in r if f.startswith(("sums=", "checksum=", "params=", "loss="))) for r in runs]
    try:
        doc = json.load(open(jpath))
    except (OSError, ValueError) as e:
        tail = " | ".join(logtext.strip().splitlines()[-3:])
        out("FAIL", f"ktrace check exit {rc}, no JSON ({e}); log: {tail[:300]}")
    comps = doc["comparisons"] if isinstance(doc, dict) and "comparisons" in doc else [doc]
    if not comps:
        out("FAIL", "no comparison in the JSON")

    def first(c):
        d = c.get("divergences") or []
        return d[0] if d else None

    def run_no(label):
        m = re.match(r"run (\d+)", label)
        return int(m.group(1)) if m else 0

    def desc(c, d):
        outs = ",".join(f"{o['arg']}#{o['ordinal']}" for o in d.get("outputs", []))
        return (f"{c['a']} vs {c['b']}: {(d.get('kernel') or '?')[:60]} launch {d['op_seq_a']}/{d['op_seq_b']} "
                f"out {outs} -> {d['classification']}")

    if mode == "identical":
        if rc != 0:
            out("FAIL", f"ktrace check exit {rc} (want 0): " +
                "; ".join(desc(c, first(c)) for c in comps if first(c)))
        unv = 0
        for c in comps:
            l = c["launches"]
            if l["matched"] == 0:
                out("FAIL", f"{c['a']} vs {c['b']}: no launch compared")
            if l["unverified"] >= l["matched"]:
                out("FAIL", f"{c['a']} vs {c['b']}: none of {l['matched']} launches verified (no hashes)")
            unv += l["unverified"]
        l = comps[0]["launches"]
        out("PASS", f"{len(comps) + 1} runs, no divergence: {l['matched']} launches compared per run "
                    f"({unv} unverified in all, {l['only_a'] + l['only_b']} in one run only)")

    if mode == "nondet":
        diverged = [c for c in comps if first(c)]
        if not diverged:
            if rc != 0:
                out("FAIL", f"ktrace check exit {rc} without divergence")
            if len(set(outputs)) > 1:
                out("FAIL", f"program outputs differ between runs ({outputs}) but ktrace saw no divergence")
            out("SKIP", f"the program's outputs were identical in all {len(runs)} runs: nothing to find")
        if rc != 1:
            out("FAIL", f"ktrace check exit {rc} (want 1)")
        for c in comps:
            d = first(c)
            if not d:
                a, b = run_no(c["a"]), run_no(c["b"])
                if 0 < a <= len(outputs) and 0 < b <= len(outputs) and outputs[a - 1] != outputs[b - 1]:
                    out("FAIL", f"{c['a']} vs {c['b']}: program outputs differ but no divergence found")
                continue
            if not re.search(kre, d.get("kernel") or "") and not re.search(kre, d.get("mangled") or ""):
                out("FAIL", "first divergence is not /%s/: %s" % (kre, desc(c, d)))
            if d["classification"] != "kernel_nondeterministic":
                ins = ",".join(i["arg"] for i in d.get("inputs_differ", []) + d.get("inputs_unverified", []))
                out("FAIL", f"{desc(c, d)} (inputs: {ins})")
            if ordinal >= 0 and not any(o["ordinal"] == ordinal for o in d.get("outputs", [])):
                out("FAIL", f"no output of ordinal {ordinal}: {desc(c, d)}")
        d = first(diverged[0])
        out("PASS", f"{len(diverged)}/{len(comps)} comparisons diverged; {desc(diverged[0], d)}; "
                    f"inputs identical ({d['inputs_equal_pointers']} pointers, {d['inputs_equal_scalars']} scalars)")

    if mode == "inputs":
        if rc != 1:
            out("FAIL", f"ktrace check exit {rc} (want 1)")
        for c in comps:
            d = first(c)
            if not d:
                out("FAIL", f"{c['a']} vs {c['b']}: no divergence although the input data differ")
            if kre and not re.search(kre, d.get("kernel") or ""):
                out("FAIL", "first divergence is not /%s/: %s" % (kre, desc(c, d)))
            if d["classification"] != "inputs_differ":
                out("FAIL", desc(c, d))
            named = None
            for i in d.get("inputs_differ", []):
                wa, wb = i.get("writer_a", {}), i.get("writer_b", {})
                if (wa.get("type") == "memcpy" and wa.get("dir") == "htod" and
                        wb.get("type") == "memcpy" and wb.get("dir") == "htod"):
                    named = (i, wa, wb)
                    break
            if not named:
                ws = [(i["arg"], i.get("writer_a", {}).get("type"), i.get("writer_b", {}).get("type"))
                      for i in d.get("inputs_differ", [])]
                out("FAIL", f"no input written by a host-to-device copy: {desc(c, d)}; writers {ws}")
        c = comps[0]
        d = first(c)
        i, wa, wb = named
        dig = ("source digests differ" if wa.get("src_digest") and wa.get("src_digest") != wb.get("src_digest")
               else "source digests not recorded" if not wa.get("src_digest") else "source digests EQUAL")
        out("PASS", f"{desc(c, d)}; input {i['arg']} last written by host-to-device memcpy op {wa['op_seq']}/"
                    f"{wb['op_seq']} ({wa['bytes']} bytes, {dig})")
    out("FAIL", f"unknown mode {mode}")


main()
