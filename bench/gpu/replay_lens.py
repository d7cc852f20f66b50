"""bench/gpu/replay_lens.py: apply region lengths replayed by build/extent_replay.

build/extent_replay TRACE prints, per launch, the hash extents another policy
gives; the amplification benchmarks (amplification.py, jax_amplification.py)
take them with --analyze ... --lens FILE and measure that policy on a trace
recorded on the GPU, without a GPU.
"""
import json


def apply_lens(launches, path):
    """Replace hash_len (and the capped flag) of each launch's regions, in place."""
    over = {}
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            over[o["launch_seq"]] = o
    for r in launches:
        o = over.get(r.get("op_seq"))  # ktrace-dump --json names it op_seq
        if not o:
            continue
        for i, g in enumerate(r.get("regions", [])):
            if i < len(o["lens"]):
                g["hash_len"] = o["lens"][i]
                g["flags"] = [f for f in g.get("flags", []) if f != "capped"] + (["capped"] if o["capped"][i] else [])
