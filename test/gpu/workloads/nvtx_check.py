"""test/gpu/workloads/nvtx_check.py: the checks of test/gpu/90-nvtx-*.sh.

    nvtx_check.py cuda PROG_OUT TRACE_JSONL NAME
    nvtx_check.py check torch|jax CHECK_JSON RC LOG NAME
    nvtx_check.py transparency PLAIN_OUT TRACED_OUT TRACE_JSONL NAME

cuda          PROG_OUT is test/gpu/nvtx_threads's stdout (EXPECT <tid> <kind>
              <path> lines), TRACE_JSONL `ktrace-dump --json` of its trace: each
              LAUNCH, MEMCPY and MEMSET of each thread carries exactly the path
              the program expected, in the thread's order; "@" paths are graph
              nodes, whose range must be the one they were captured in
              (`range.flags` has "graph_node").
check         CHECK_JSON is `ktrace check --json`'s output, LOG its stderr (the
              program's own lines: FORWARD_CALL, PLANTED, SCOPE).  torch: the first
              divergence is the planted op's backward kernel, confirmed, with the
              aten op, the backward node and its forward op's number, an NVTX
              path, and the Python line of the forward call.  jax: the divergent
              kernel's HLO op, its named scope, and (where XLA attaches source
              locations) the Python line.
transparency  the program's OUTPUT digest is the same with ktrace (torch ops and
              Python stacks on) and without; the trace has op ranges on most
              launches and the Python stacks asked for.
Prints RESULT|<NAME>-<check>|PASS|FAIL|SKIP|<detail> lines.
"""
import collections
import json
import os
import re
import sys


def result(name, status, detail):
    detail = str(detail).replace("|", "/").replace("\n", " ")
    print("RESULT|%s|%s|%s" % (name, status, detail[:400]), flush=True)


def lines(path, key):
    out = []
    try:
        with open(path, errors="replace") as f:
            for ln in f:
                if ln.startswith(key + " "):
                    out.append(ln.rstrip("\n")[len(key) + 1:])
    except OSError:
        pass
    return out


def records(path):
    recs = []
    with open(path, errors="replace") as f:
        for ln in f:
            try:
                recs.append(json.loads(ln))
            except ValueError:
                pass
    return recs


def path_text(rng):
    if not rng:
        return "-"
    return " / ".join((p["domain"] + ":" if p["domain"] else "") + p["message"] for p in rng["path"])


# ---- cuda ---------------------------------------------------------------------------------


def check_cuda(prog_out, trace, name):
    want = collections.defaultdict(list)
    for e in lines(prog_out, "EXPECT"):
        tid, kind, path = e.split(" ", 2)
        want[int(tid)].append((kind, path))
    if not want:
        result(name + "-paths", "FAIL", "the program printed no EXPECT line (crashed?)")
        return
    got = collections.defaultdict(list)
    kinds = {"launch": "L", "memcpy": "C", "memset": "S"}
    for r in sorted(records(trace), key=lambda r: r.get("op_seq", -1)):
        if r.get("type") in kinds and r.get("tid") in want:
            got[r["tid"]].append(r)
    bad, n = [], 0
    for tid, exp in want.items():
        recs = got[tid]
        if len(recs) != len(exp):
            bad.append(f"thread {tid}: {len(recs)} records, {len(exp)} expected")
            continue
        for (kind, path), r in zip(exp, recs):
            n += 1
            node = path.startswith("@")
            rng = r.get("range")
            flags = (rng or {}).get("flags", [])
            if kinds[r["type"]] != kind or path_text(rng) != path.lstrip("@") or node != ("graph_node" in flags):
                bad.append(f"op {r.get('op_seq')} (thread {tid}): {kind} {path} expected, got "
                           f"{kinds[r['type']]} {'@' if 'graph_node' in flags else ''}{path_text(rng)}")
    if bad:
        result(name + "-paths", "FAIL", "; ".join(bad[:4]))
    else:
        result(name + "-paths", "PASS", f"{n} records of {len(want)} threads carry exactly their thread's path "
                                        f"(graph nodes: the ranges they were captured in)")


# ---- ktrace check -------------------------------------------------------------------------


def load_check(path, rc, log, name):
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        tail = " | ".join(open(log, errors="replace").read().strip().splitlines()[-3:]) if os.path.exists(log) else ""
        result(name + "-run", "FAIL", f"ktrace check exit {rc}, no JSON ({e}): {tail}")
        return None, None
    for c in doc.get("comparisons", []):
        if c.get("divergences"):
            return c, c["divergences"][0]
    result(name + "-run", "SKIP" if rc == 0 else "FAIL",
           f"ktrace check exit {rc}, no divergence (the atomics happened to add in the same order)")
    return None, None


def replayed_of(comp, div):
    for r in (comp.get("confirmation") or {}).get("replayed", []):
        if r.get("op_seq_a") == div.get("op_seq_a"):
            return r
    reps = (comp.get("confirmation") or {}).get("replayed", [])
    return reps[0] if reps else {}


def frame_matches(stack, fwd):
    if not stack or not fwd:
        return False
    file, line = fwd[0], int(fwd[1])
    return any(os.path.basename(f["file"]) == os.path.basename(file) and f["line"] == line
               for f in stack.get("frames", []))


def stack_text(stack):
    if not stack:
        return "none"
    return " <- ".join(f"{os.path.basename(f['file'])}:{f['line']}" for f in stack.get("frames", [])[:6])


def check_torch(comp, div, rc, log, name):
    fwd = (lines(log, "FORWARD_CALL") or [""])[-1].split()
    rng = div.get("range_a") or {}
    kern = div.get("kernel") or ""
    rep = replayed_of(comp, div)
    ok = re.search(r"upsample_bilinear2d_backward", kern) and rc == 1 and rep.get("outcome") == "confirmed"
    result(name + "-kernel", "PASS" if ok else "FAIL",
           f"first divergence {kern[:90]} op_seq {div.get('op_seq_a')}, exit {rc}, replay {rep.get('outcome')}")
    op = rng.get("op") or ""
    result(name + "-op", "PASS" if re.search(r"^aten::upsample_bilinear2d_backward", op) else "FAIL",
           f"op {op or None}")
    seq = rng.get("framework_seq") or {}
    bnode = rng.get("backward_node") or ""
    ok = seq.get("kind") == "backward" and re.search(r"UpsampleBilinear2DBackward", bnode)
    result(name + "-backward", "PASS" if ok else "FAIL",
           f"backward node {bnode or None}, forward op number {seq.get('number')} ({seq.get('kind')})")
    path = path_text(rng)
    result(name + "-path", "PASS" if op and op in path else "FAIL", f"NVTX path: {path[:300]}")
    stacks = rep.get("python_stacks") or {}
    fstack = stacks.get("forward_op")
    if not fwd:
        result(name + "-python-line", "FAIL", "the program printed no FORWARD_CALL line")
    elif frame_matches(fstack, fwd):
        result(name + "-python-line", "PASS", f"forward call {os.path.basename(fwd[0])}:{fwd[1]} in the forward "
                                              f"op's stack: {stack_text(fstack)}")
    else:
        result(name + "-python-line", "FAIL", f"want {os.path.basename(fwd[0])}:{fwd[1]}; forward op stack "
                                              f"{stack_text(fstack)}; launch stack {stack_text(stacks.get('launch'))}")


def check_jax(comp, div, rc, log, name):
    fwd = (lines(log, "FORWARD_CALL") or [""])[-1].split()
    scope = (lines(log, "SCOPE") or ["kt_pool"])[-1]
    rng = div.get("range_a") or {}
    kern = div.get("kernel") or ""
    rep = replayed_of(comp, div)
    result(name + "-kernel", "PASS" if rc == 1 and rep.get("outcome") == "confirmed" else "FAIL",
           f"first divergence {kern[:90]} op_seq {div.get('op_seq_a')}, exit {rc}, replay {rep.get('outcome')}")
    hlo = rng.get("hlo_op") or ""
    result(name + "-hlo-op", "PASS" if hlo else "FAIL",
           f"HLO op {hlo or None} (module {rng.get('hlo_module')}); path {path_text(rng)[:200]}")
    opn = rng.get("op_name") or ""
    result(name + "-scope", "PASS" if scope in opn else "FAIL", f"op_name {opn or None}, want the scope {scope}")
    src = rng.get("source") or ""
    if not fwd:
        result(name + "-python-line", "FAIL", "the program printed no FORWARD_CALL line")
    elif not src:
        result(name + "-python-line", "SKIP", "XLA attached no source locations to the kernel's range "
                                              "(its NVTX payload; older XLA)")
    else:
        want = f"{os.path.basename(fwd[0])}:{fwd[1]}"
        result(name + "-python-line", "PASS" if want in src else "FAIL",
               f"want {want} in the source locations: {src.strip()[:250]}")


# ---- transparency -------------------------------------------------------------------------


def check_transparency(plain, traced, trace, name):
    po, to = lines(plain, "OUTPUT"), lines(traced, "OUTPUT")
    if not po or not to:
        result(name + "-output", "FAIL", f"no OUTPUT line (plain {bool(po)}, traced {bool(to)})")
    else:
        result(name + "-output", "PASS" if po[-1] == to[-1] else "FAIL",
               f"sha256 {to[-1][:16]} {'identical' if po[-1] == to[-1] else '!= %s without ktrace' % po[-1][:16]}")
    recs = records(trace)
    launches = [r for r in recs if r.get("type") == "launch"]
    in_op = [r for r in launches if any(p["message"].startswith("aten::") for p in (r.get("range") or {}).get("path", []))]
    stacks = [r for r in recs if r.get("type") == "pystack"]
    share = len(in_op) / len(launches) if launches else 0
    result(name + "-ops", "PASS" if share >= 0.8 else "FAIL",
           f"{len(in_op)} of {len(launches)} launches inside an aten op range ({share:.0%})")
    result(name + "-pystacks", "PASS" if stacks else "FAIL",
           f"{len(stacks)} PYSTACK records: " + "; ".join(f"{s.get('kind')} {stack_text(s)}" for s in stacks[:2]))


def main():
    a = sys.argv[1:]
    if a[:1] == ["cuda"] and len(a) == 4:
        check_cuda(a[1], a[2], a[3])
    elif a[:1] == ["check"] and len(a) == 6:
        fw, path, rc, log, name = a[1], a[2], int(a[3]), a[4], a[5]
        comp, div = load_check(path, rc, log, name)
        if div:
            (check_torch if fw == "torch" else check_jax)(comp, div, rc, log, name)
    elif a[:1] == ["transparency"] and len(a) == 5:
        check_transparency(a[1], a[2], a[3], a[4])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
