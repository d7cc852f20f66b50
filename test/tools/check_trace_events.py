#!/usr/bin/env python3
"""test/tools/check_trace_events.py: an independent reader of Chrome trace-event JSON.

Checks a timeline written by ktrace-export / ktrace-diff --perfetto without any of
ktrace's code:
  1. it is JSON (no NaN or Infinity) and matches the trace-event format's schema
     (test/tools/trace_event.schema.json, checked by the jsonschema package);
  2. the structural rules a viewer relies on: on each track (pid, tid) complete
     slices come in non-decreasing ts order and nest properly (no partial
     overlap), every B has its E, every flow has one start and one end, each
     bound to a slice of its track (the start inside one, the end inside one
     for bp "e"), every process and every track with slices is named;
  3. with --dump FILE (the same trace as `ktrace-dump --json` prints it): the
     timeline holds what the trace holds: one host slice per launch, copy and
     memset; one GPU slice per launch, copy and memset that ran (result 0, not
     captured), with the launch's kernel name and each argument's digests;
     measured GPU times (GPUTIME records, format 1.10): a launch with one is
     drawn at its measured start (later only by the error of the references
     it was aligned with) for its measured duration and says "measured", the
     nodes of a measured graph launch lie inside a "graph launch" slice drawn
     at the launch's measured times and say "graph_launch_measured", every
     other GPU slice says "unmeasured"; the record is in the slice's args;
     NVTX ranges (format 1.9): on each host thread's track, the range slices
     that hold a host call are exactly its range path, outermost first, one
     inside the other (none for a graph node's ranges, flag graph_node: where
     it was made), and every range slice holds at least one call.

  check_trace_events.py [--dump DUMP.jsonl] [--first-divergence NAME] [--marks N] TIMELINE.json

Prints one line of counts and exits 0, or prints the problems and exits 1.
"""
import argparse
import collections
import json
import os
import sys

import jsonschema

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trace_event.schema.json")


class Problems:
    def __init__(self):
        self.list = []

    def add(self, msg):
        if len(self.list) < 40:
            self.list.append(msg)
        elif len(self.list) == 40:
            self.list.append("... (more problems not shown)")

    def __bool__(self):
        return bool(self.list)


def load(path, problems):
    def no_constant(name):
        raise ValueError("non-JSON number " + name)
    with open(path, encoding="utf-8") as f:
        doc = json.load(f, parse_constant=no_constant)
    validator = jsonschema.Draft7Validator(json.load(open(SCHEMA, encoding="utf-8")))
    for err in sorted(validator.iter_errors(doc), key=lambda e: list(e.path))[:10]:
        problems.add("schema: %s: %s" % ("/".join(str(p) for p in err.path), err.message))
    return doc


def check_slices(events, problems):
    """X slices: ts non-decreasing per track in file order, proper nesting; B/E pairs."""
    by_track = collections.defaultdict(list)
    last_ts = {}
    open_b = collections.defaultdict(list)
    for i, e in enumerate(events):
        key = (e.get("pid"), e.get("tid"))
        if e["ph"] == "X":
            if key in last_ts and e["ts"] < last_ts[key]:
                problems.add("event %d: ts %s goes back on track %s (previous %s)" % (i, e["ts"], key, last_ts[key]))
            last_ts[key] = e["ts"]
            by_track[key].append((e["ts"], e["ts"] + e["dur"], i))
        elif e["ph"] == "B":
            open_b[key].append(e)
        elif e["ph"] == "E":
            if not open_b[key]:
                problems.add("event %d: E without B on track %s" % (i, key))
            else:
                open_b[key].pop()
    for key, stack in open_b.items():
        if stack:
            problems.add("track %s: %d B events never ended" % (key, len(stack)))
    for key, slices in by_track.items():
        stack = []
        for start, end, i in sorted(slices, key=lambda s: (s[0], -s[1])):
            while stack and start >= stack[-1][1] - 1e-9:
                stack.pop()
            if stack and end > stack[-1][1] + 1e-9:
                problems.add("event %d: slice [%s, %s] overlaps slice %d [%s, %s] on track %s without nesting"
                             % (i, start, end, stack[-1][2], stack[-1][0], stack[-1][1], key))
            stack.append((start, end, i))
    return by_track


def inside(slices, ts):
    return any(s - 1e-9 <= ts <= e + 1e-9 for s, e, _ in slices)


def check_flows(events, by_track, problems):
    flows = collections.defaultdict(lambda: {"s": [], "t": [], "f": []})
    for i, e in enumerate(events):
        if e["ph"] in ("s", "t", "f"):
            flows[(e.get("cat"), str(e["id"]))][e["ph"]].append((i, e))
    for key, parts in flows.items():
        if len(parts["s"]) != 1 or len(parts["f"]) != 1:
            problems.add("flow %s: %d starts and %d ends (one each expected)" % (key, len(parts["s"]), len(parts["f"])))
            continue
        (i, s), (j, f) = parts["s"][0], parts["f"][0]
        if f["ts"] < s["ts"]:
            problems.add("flow %s ends (event %d) before it starts (event %d)" % (key, j, i))
        if not inside(by_track.get((s["pid"], s["tid"]), []), s["ts"]):
            problems.add("flow %s: start (event %d) is in no slice of its track" % (key, i))
        end_slices = by_track.get((f["pid"], f["tid"]), [])
        bound = inside(end_slices, f["ts"]) if f.get("bp") == "e" else any(st >= f["ts"] for st, _, _ in end_slices)
        if not bound:
            problems.add("flow %s: end (event %d) binds to no slice of its track" % (key, j))
    return len(flows)


def check_names(events, by_track, problems):
    procs, threads = set(), set()
    for e in events:
        if e["ph"] == "M" and e["name"] == "process_name":
            procs.add(e["pid"])
        if e["ph"] == "M" and e["name"] == "thread_name":
            threads.add((e["pid"], e["tid"]))
    for e in events:
        if e["ph"] != "M" and e.get("s") != "g" and e["pid"] not in procs:
            problems.add("process %s has events but no process_name" % e["pid"])
            procs.add(e["pid"])
    for key in by_track:
        if key not in threads:
            problems.add("track %s has slices but no thread_name" % (key,))


def executed(rec):
    return rec.get("result", 0) == 0 and "capturing" not in rec.get("launch_flags", []) \
        and rec.get("dst_digest_state") != "capture"


def arg_key(arg_names, offset, args_by_offset):
    """The timeline's key of the argument holding param_offset: its name, or name+delta."""
    best = None
    for off, (name, size) in args_by_offset.items():
        if off <= offset < off + max(size, 1):
            best = name if off == offset else "%s+%d" % (name, offset - off)
    return best if best is not None else "@%d" % offset


def check_launch_digests(rec, gpu, problems):
    args = gpu.get("args", {}).get("arguments", {})
    by_offset = {a["offset"]: (a["name"] or "arg%d" % a["ordinal"], a["size"]) for a in rec.get("args", [])}
    for g in rec.get("regions", []):
        key = arg_key(None, g["param_offset"], by_offset)
        got = args.get(key)
        if got is None:
            problems.add("launch %d: argument %s (offset %d) missing from the GPU slice" % (rec["op_seq"], key, g["param_offset"]))
            continue
        for field in ("pre_hash", "post_hash", "hash_len", "out"):
            if g.get(field) is not None and g.get(field) != got.get(field, False if field == "out" else None):
                problems.add("launch %d: argument %s %s %s in the trace, %s on the timeline"
                             % (rec["op_seq"], key, field, g.get(field), got.get(field)))


# Args the timeline adds to the fields of the record (docs/json.md: a field that
# ktrace-dump --json prints has the same name and form on the timeline).
TIMELINE_ONLY = {"divergence", "gpu_time", "gputime", "arguments", "out", "bytes", "dir_inferred"}


def check_same_fields(what, seq, event, rec, problems):
    """Every arg of the slice that the dump record has too holds the same value."""
    args = event.get("args", {})
    for k, v in args.items():
        if k in TIMELINE_ONLY:
            continue
        if k not in rec:
            problems.add("%s %d: arg %r is not a field of the record (ktrace-dump --json)" % (what, seq, k))
        elif k == "dir" and args.get("dir_inferred") and rec[k] == "unknown":
            continue
        elif rec[k] != v:
            problems.add("%s %d: arg %s = %r on the timeline, %r in the record" % (what, seq, k, v, rec[k]))


GPUTIME_FIELDS = ("op_seq", "start_ns", "end_ns", "duration_ns", "ref_err_ns")


def close(a, b, tol_us=0.0015):
    return abs(a - b) <= tol_us


def check_measured_slice(what, e, g, base, problems):
    """A slice drawn at the GPUTIME record g's times: from its start (later by at most the
    references' errors, when the stream's previous measured work overlaps it), as long as it."""
    start, dur = (g["start_ns"] - base) / 1000.0, (g["end_ns"] - g["start_ns"]) / 1000.0
    slack = 2 * g["ref_err_ns"] / 1000.0 + 1.0
    if not (start - 0.0015 <= e["ts"] <= start + slack) or not close(e["dur"], dur):
        problems.add("%s: drawn at ts %s dur %s, measured from %.3f for %.3f us" % (what, e["ts"], e["dur"], start, dur))
    got = e.get("args", {}).get("gputime", {})
    if any(got.get(k) != g[k] for k in GPUTIME_FIELDS):
        problems.add("%s: args gputime %s, the record %s" % (what, got, {k: g[k] for k in GPUTIME_FIELDS}))


def check_gpu_times(events, recs, problems):
    """GPU slices against the GPUTIME records: which are measured, where they are drawn."""
    header = next((r for r in recs if r["type"] == "header"), {})
    base = header.get("start_monotonic_ns", 0)
    alone = {r["op_seq"]: r for r in recs if r["type"] == "gputime" and "graph" not in r["gputime_flags"]}
    graphs = {r["op_seq"]: r for r in recs if r["type"] == "gputime" and "graph" in r["gputime_flags"]}
    for r in list(alone.values()) + list(graphs.values()):
        if not r["start_ns"] <= r["end_ns"] or r["duration_ns"] != r["end_ns"] - r["start_ns"]:
            problems.add("gputime of op %d: start %d, end %d, duration %d" % (r["op_seq"], r["start_ns"], r["end_ns"], r["duration_ns"]))
    containers = {}
    for e in events:
        if e["ph"] == "X" and e.get("cat") == "graph_launch":
            seq = e["args"]["op_seq"]
            if seq not in graphs:
                problems.add("graph launch slice of op %s: no GPUTIME record of a graph launch" % seq)
                continue
            containers[seq] = e
            check_measured_slice("graph launch of op %d" % seq, e, graphs[seq], base, problems)
    measured = 0
    for e in events:
        if e["ph"] != "X" or e.get("cat") not in ("kernel", "memcpy", "memset"):
            continue
        args, seq = e.get("args", {}), e.get("args", {}).get("op_seq")
        how, graph = args.get("gpu_time"), args.get("graph")
        what = "%s slice of op %s" % (e["cat"], seq)
        if graph is not None and graph["op_seq"] in graphs:
            c = containers.get(graph["op_seq"])
            if how != "graph_launch_measured" or c is None or (c["pid"], c["tid"]) != (e["pid"], e["tid"]) or \
                    not (c["ts"] - 1e-9 <= e["ts"] and e["ts"] + e["dur"] <= c["ts"] + c["dur"] + 1e-9):
                problems.add("%s: a node of a measured graph launch, gpu_time %r, not inside its graph launch's slice" % (what, how))
        elif graph is None and e["cat"] == "kernel" and seq in alone:
            measured += 1
            if how != "measured":
                problems.add("%s: a GPUTIME record, gpu_time %r" % (what, how))
            check_measured_slice(what, e, alone[seq], base, problems)
        elif how != "unmeasured" or "gputime" in args:
            problems.add("%s: no GPUTIME record, gpu_time %r" % (what, how))
    return measured + len(containers)


def range_name(node):
    return ("%s: %s" % (node["domain"], node["message"])) if node["domain"] else node["message"]


def check_ranges(events, recs, problems):
    """NVTX range slices against the range paths of the dump's launches, copies and memsets."""
    nodes = {r["range_id"]: r for r in recs if r["type"] == "range"}
    by_seq = {r["op_seq"]: r for r in recs if r["type"] in ("launch", "memcpy", "memset")}
    ranges = collections.defaultdict(list)
    for e in events:
        if e["ph"] == "X" and e.get("cat") == "nvtx":
            ranges[(e["pid"], e["tid"])].append(e)
            node = nodes.get(e["args"].get("range_id"))
            if node is None or range_name(node) != e["name"]:
                problems.add("range slice %r: range_id %s is no RANGE record of that name" % (e["name"], e["args"].get("range_id")))
    used = set()
    for e in events:
        if e["ph"] != "X" or e.get("cat") != "cuda_api" or e["args"].get("op_seq") not in by_seq:
            continue
        rng = by_seq[e["args"]["op_seq"]].get("range", {})
        # a graph node's ranges are those it was made in (format 1.11), not the thread's at the launch
        want = [] if "graph_node" in rng.get("flags", []) else [range_name(n) for n in rng.get("path", [])]
        around = sorted((r for r in ranges[(e["pid"], e["tid"])]
                         if r["ts"] - 1e-9 <= e["ts"] and e["ts"] + e["dur"] <= r["ts"] + r["dur"] + 1e-9),
                        key=lambda r: (r["ts"], -r["dur"]))
        used.update(id(r) for r in around)
        if [r["name"] for r in around] != want:
            problems.add("op %d: inside range slices %s, its range path is %s"
                         % (e["args"]["op_seq"], [r["name"] for r in around], want))
    empty = [r["name"] for track in ranges.values() for r in track if id(r) not in used]
    if empty:
        problems.add("range slices holding no call: %s" % empty[:5])
    return sum(len(t) for t in ranges.values())


def check_against_dump(events, dump_path, problems):
    recs = [json.loads(line) for line in open(dump_path, encoding="utf-8") if line.strip()]
    launches = {r["op_seq"]: r for r in recs if r["type"] == "launch"}  # ktrace-dump --json: op_seq
    ops = {r["op_seq"]: r for r in recs if r["type"] in ("memcpy", "memset")}
    host = [e for e in events if e["ph"] == "X" and e.get("cat") == "cuda_api"]
    kernels = {e["args"]["op_seq"]: e for e in events if e["ph"] == "X" and e.get("cat") == "kernel"}
    gpu_ops = {e["args"]["op_seq"]: e for e in events if e["ph"] == "X" and e.get("cat") in ("memcpy", "memset")}
    if len(host) != len(launches) + len(ops):
        problems.add("%d host call slices for %d launches and %d copies/memsets" % (len(host), len(launches), len(ops)))
    want = {s for s, r in launches.items() if executed(r)}
    if set(kernels) != want:
        problems.add("kernel slices for launches %s, the trace ran %s"
                     % (sorted(set(kernels) ^ want)[:10], "these too" if set(kernels) < want else "not these"))
    for seq in want & set(kernels):
        r, e = launches[seq], kernels[seq]
        name = r.get("kernel")
        if name and e["name"] != name:
            problems.add("launch %d: slice named %r, kernel %r" % (seq, e["name"], name))
        check_launch_digests(r, e, problems)
        check_same_fields("launch", seq, e, r, problems)
    for e in host:
        seq = e.get("args", {}).get("op_seq")
        rec = launches.get(seq) or ops.get(seq)
        if rec is not None:
            check_same_fields("host call of op", seq, e, rec, problems)
    want_ops = {s for s, r in ops.items() if executed(r)}
    if set(gpu_ops) != want_ops:
        problems.add("copy/memset slices for ops %s, the trace ran %s" % (sorted(gpu_ops)[:10], sorted(want_ops)[:10]))
    for seq in want_ops & set(gpu_ops):
        check_same_fields("op", seq, gpu_ops[seq], ops[seq], problems)
    return len(kernels), check_gpu_times(events, recs, problems), check_ranges(events, recs, problems)


def check_marks(events, args, problems):
    firsts = [e for e in events if e["ph"] in ("i", "I") and e.get("s") == "g"]
    marked = [e for e in events if e["ph"] == "X" and e.get("cat") == "kernel" and "divergence" in e.get("args", {})]
    if args.first_divergence is not None:
        if len(firsts) != 1 or args.first_divergence not in firsts[0]["name"]:
            problems.add("expected one global instant naming %r, found %s" % (args.first_divergence, [e["name"] for e in firsts]))
        hot = [e for e in marked if e.get("cname") == "terrible"]
        if len(hot) != 1 or hot[0]["name"] != args.first_divergence:
            problems.add("expected one highlighted kernel slice %r, found %s" % (args.first_divergence, [e["name"] for e in hot]))
    if args.marks is not None and len(marked) != args.marks:
        problems.add("expected %d marked launches, found %d" % (args.marks, len(marked)))
    return len(marked)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("timeline")
    ap.add_argument("--dump", help="the trace as ktrace-dump --json prints it")
    ap.add_argument("--first-divergence", help="kernel name the first divergence must be on")
    ap.add_argument("--marks", type=int, help="number of marked (divergent) launches expected")
    args = ap.parse_args()
    problems = Problems()
    doc = load(args.timeline, problems)
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else []
    if not problems:
        by_track = check_slices(events, problems)
        nflows = check_flows(events, by_track, problems)
        check_names(events, by_track, problems)
        nkernels, nmeasured, nranges = check_against_dump(events, args.dump, problems) if args.dump else (None, 0, 0)
        nmarks = check_marks(events, args, problems)
    if problems:
        print("check_trace_events: %s:" % args.timeline)
        for p in problems.list:
            print("  " + p)
        return 1
    print("check_trace_events: %s: ok: %d events, %d tracks with slices, %d flows%s%s%s, %d marked"
          % (args.timeline, len(events), len(by_track), nflows,
             "" if nkernels is None else ", %d kernel slices match the trace" % nkernels,
             ", %d measured GPU slices at their measured times" % nmeasured if nmeasured else "",
             ", %d NVTX range slices hold their calls" % nranges if nranges else "", nmarks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
