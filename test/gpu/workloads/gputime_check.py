"""test/gpu/workloads/gputime_check.py: the GPU times of a trace against ground truth
(test/gpu/11-capture-5-gputimes.sh).

    gputime_check.py spin DUMP.jsonl SPIN.out     build/gpu/gputime_spin's trace (KTRACE_GPU_TIMES=1)
    gputime_check.py sample DUMP.jsonl RATE       any trace recorded with KTRACE_GPU_TIMES=RATE

spin: each kt_spin launch after the first (a warm-up) is matched, in launch order, with
the line the program printed for it (its own start and end on the GPU's global timer);
its GPUTIME record must exist, its duration must hold the kernel's own (not shorter by
more than the timer's step, not longer by more than 20 us or 2 %; the first, which alone
meets an idle stream, by that plus its launch call's host time: docs/format.md says why
its interval holds the rest of the call), and its start and
end must lie where the host saw them: not before the launch call (minus the
reference's error and the call time's few microseconds), not after the stream
synchronisation that waited for it returned.  sample: every GPUTIME record's op is one
the sampling hash picks at RATE, records and counters agree, start <= end.

Prints RESULT and BENCH lines (test/gpu/run.sh).
"""
import json
import statistics as st
import sys

HASH = 0x9E3779B97F4A7C15
M64 = (1 << 64) - 1
CALL_SLACK_NS = 5000      # a launch's recorded call time is the TSC's, within a few us
TIMER_STEP_NS = 1000      # the global timer's step on the GPUs we run on (at most 1 us)


def load(path):
    recs = [json.loads(l) for l in open(path) if l.strip()]
    header = next(r for r in recs if r["type"] == "header")
    counters = {}
    for r in recs:
        if r["type"] == "counters":
            counters.update(r["counters"])
    return recs, header, counters


def sampled(seq, rate):
    return rate > 0 and ((seq * HASH & M64) << 4 & M64) < M64 // rate


def result(name, ok, detail):
    print("RESULT|%s|%s|%s" % (name, "PASS" if ok else "FAIL", detail))


def spin(dump, out):
    recs, header, counters = load(dump)
    spins = []
    for line in open(out):
        if line.startswith("SPIN "):
            f = dict(kv.split("=") for kv in line.split()[2:])
            spins.append((int(f["target_ns"]), int(f["gpu_start"]), int(f["gpu_end"]), int(f.get("call_ns", 0))))
    launches = sorted((r for r in recs if r["type"] == "launch" and (r.get("kernel") or "").startswith("kt_spin")),
                      key=lambda r: r["op_seq"])[1:]
    gt = {r["op_seq"]: r for r in recs if r["type"] == "gputime" and "graph" not in r["gputime_flags"]}
    syncs = sorted(r["time_ns"] for r in recs if r["type"] == "order" and r["op"] == "stream_sync")
    if len(launches) != len(spins) or not spins:
        result("capture-gputimes-spin", False, "%d kt_spin launches after the warm-up, %d printed" % (len(launches), len(spins)))
        return 1
    diffs, errs, lead, tail, offsets, bad = [], [], [], [], [], []
    missing = []
    idle = None
    for i, (l, (target, t0, t1, call)) in enumerate(zip(launches, spins)):
        g = gt.get(l["op_seq"])
        if g is None:
            missing.append("op %d (spin %d of %d, %d ns)" % (l["op_seq"], i + 1, len(spins), t1 - t0))
            continue
        own, measured = t1 - t0, g["duration_ns"]
        diffs.append(measured - own)
        errs.append(g["ref_err_ns"])
        allowed = max(20000, own // 50) + (call if i == 0 else 0)
        if measured < own - TIMER_STEP_NS or measured - own > allowed:
            bad.append("op %d: %d ns measured, %d ns by the kernel, %d allowed over%s"
                       % (l["op_seq"], measured, own, allowed, " (idle stream)" if i == 0 else ""))
        if i == 0:
            idle = (measured - own, call, len(offsets))
        lead.append(g["start_ns"] - (l["time_ns"] - g["ref_err_ns"] - CALL_SLACK_NS))
        after = [t for t in syncs if t >= l["time_ns"]]
        if after:
            tail.append(after[0] + g["ref_err_ns"] - g["end_ns"])
        offsets.append(g["start_ns"] - header["start_monotonic_ns"] + header["start_realtime_ns"] - t0)
    early = [x for x in lead if x < 0]
    late = [x for x in tail if x < 0]
    n = len(diffs)
    if n:
        print("BENCH|capture-gputimes-spin-excess|%d|ns|GPUTIME duration minus the kernel's own (global timer), "
              "median over %d kt_spin launches of 20 us to 2 ms; max %d, min %d"
              % (st.median(diffs), n, max(diffs), min(diffs)))
        print("BENCH|capture-gputimes-ref-err|%d|ns|the reference's error bound, median (max %d)"
              % (st.median(errs), max(errs)))
        if idle is not None:
            # the start event against the kernel's start, relative to the other launches': how much
            # of the idle launch's excess lies before its kernel began
            before = st.median(offsets) - offsets[idle[2]] if len(offsets) > 1 else 0
            print("BENCH|capture-gputimes-idle-excess|%d|ns|the first launch (idle stream): GPUTIME duration minus "
                  "the kernel's own; its launch call took %d ns on the host; its start event ran %d ns further "
                  "ahead of its kernel than the other launches' (median)" % (idle[0], idle[1], before))
        print("BENCH|capture-gputimes-globaltimer-offset|%d|ns|GPUTIME start on CLOCK_REALTIME minus the kernel's "
              "global-timer start, median (range %d to %d over the run): a check of the alignment where the "
              "global timer keeps the host's wall clock" % (st.median(offsets), min(offsets), max(offsets)))
    result("capture-gputimes-spin", not missing and not bad,
           "%d of %d kt_spin launches measured%s; %s" % (n, len(spins),
                                                         " (no GPUTIME: %s)" % ", ".join(missing[:4]) if missing else "",
                                                         "; ".join(bad[:3]) if bad else "durations hold the kernels' own"))
    result("capture-gputimes-alignment", n > 0 and not early and not late,
           "%d starts before their call, %d ends after the synchronisation that waited for them (of %d); "
           "least margins %s ns and %s ns" % (len(early), len(late), n, min(lead) if lead else "-",
                                             min(tail) if tail else "-"))
    return 0 if not missing and not bad and not early and not late else 1


def sample(dump, rate):
    recs, _, counters = load(dump)
    traced = [r["op_seq"] for r in recs if r["type"] == "launch"]
    gts = [r for r in recs if r["type"] == "gputime"]
    wrong = [g["op_seq"] for g in gts if not sampled(g["op_seq"], rate)]
    backwards = [g["op_seq"] for g in gts if g["end_ns"] < g["start_ns"]]
    want = sum(1 for s in traced if sampled(s, rate))
    written, lost = counters.get("gpu_times", 0), counters.get("gpu_times_lost", 0)
    graphs = sum(1 for g in gts if "graph" in g["gputime_flags"])
    ok = not wrong and not backwards and written == len(gts) and len(gts) > 0
    result("capture-gputimes-sample-%d" % rate, ok,
           "%d GPUTIME records (%d of graph launches) for %d traced launches, %d sampled by the hash; "
           "counters gpu_times=%d gpu_times_lost=%d; %d not sampled, %d ending before they start"
           % (len(gts), graphs, len(traced), want, written, lost, len(wrong), len(backwards)))
    if gts:
        d = sorted(g["duration_ns"] for g in gts)
        print("BENCH|capture-gputimes-sample-%d-durations|%d|ns|median GPUTIME duration (10th %d, 90th %d) of %d"
              % (rate, st.median(d), d[len(d) // 10], d[(len(d) * 9) // 10], len(d)))
    return 0 if ok else 1


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "spin":
        return spin(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 4 and sys.argv[1] == "sample":
        return sample(sys.argv[2], int(sys.argv[3]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
