"""test/gpu/workloads/nccl_single.py: a one-rank PyTorch NCCL job, recorded
(test/gpu/91-nccl-1-single.sh).

    nccl_single.py check                 exit 0 when torch.distributed has a usable
                                         NCCL backend and a GPU; else prints why
    nccl_single.py run OUTDIR            the program: init_process_group("nccl",
                                         file:// rendezvous in OUTDIR, world size 1,
                                         rank 0, bound to cuda:0 where torch allows),
                                         all_reduce (AVG), broadcast,
                                         all_gather_into_tensor, reduce_scatter_tensor
                                         (AVG), a new_group and an all_reduce (AVG) on
                                         it, barrier, destroy; writes the received
                                         tensors' bytes to OUTDIR/<name>.bin and what
                                         it ran to OUTDIR/meta.json
    nccl_single.py verify DUMP OUTDIR HASHTOOL
                                         checks the trace (ktrace-dump --json output
                                         in DUMP) against them, prints RESULT lines

NCCL runs a one-rank communicator's operations at their call and launches a
kernel only for a reduction that scales (ncclAvg: PreMulSum); the others are
copies (cudaMemcpyAsync) or nothing.  So the reductions use AVG, and the
checks that need a launch look at the reductions; the other operations'
launch counts are reported.  PyTorch's broadcast calls ncclBcast, and at world
size 1 its reduce_scatter_tensor calls no NCCL function (torch 2.11, NCCL
2.28.9 on an H100): reduce_scatter is checked where it is called, said where not.
"""
import json
import os
import subprocess
import sys

COUNT = 4096


def check():
    try:
        import torch
        import torch.distributed as dist
    except Exception as e:  # noqa: BLE001 (any import failure means: no PyTorch here)
        print("PyTorch not importable: %s" % e)
        return 1
    if not torch.cuda.is_available():
        print("PyTorch without CUDA")
        return 1
    if not dist.is_available() or not dist.is_nccl_available():
        print("torch.distributed without the NCCL backend")
        return 1
    return 0


def save(out, name, t):
    with open(os.path.join(out, name + ".bin"), "wb") as f:
        f.write(t.cpu().numpy().tobytes())


def program(out):
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(0)
    dev = torch.device("cuda", 0)
    args = dict(backend="nccl", init_method="file://" + os.path.join(out, "rendezvous"), world_size=1, rank=0)
    try:  # bound to its device: eager init, and new groups split from it
        dist.init_process_group(device_id=dev, **args)
        bound = True
    except TypeError:
        dist.init_process_group(**args)
        bound = False
    avg = dist.ReduceOp.AVG
    x = torch.arange(COUNT, dtype=torch.float32, device=dev) * 0.25 + 1.0
    dist.all_reduce(x, op=avg)
    torch.cuda.synchronize()
    save(out, "all_reduce", x)
    b = x.clone()
    dist.broadcast(b, src=0)
    gathered = torch.empty(COUNT, dtype=torch.float32, device=dev)
    dist.all_gather_into_tensor(gathered, x)
    scattered = torch.empty(COUNT, dtype=torch.float32, device=dev)
    dist.reduce_scatter_tensor(scattered, x * 3, op=avg)
    torch.cuda.synchronize()
    save(out, "reduce_scatter", scattered)
    group = dist.new_group([0])
    y = x * 2
    dist.all_reduce(y, op=avg, group=group)
    torch.cuda.synchronize()
    save(out, "group_all_reduce", y)
    dist.barrier()
    torch.cuda.synchronize()
    dist.destroy_process_group()
    meta = {"bound": bound, "torch": torch.__version__,
            "nccl": ".".join(str(v) for v in torch.cuda.nccl.version())}
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f)


def digest(hashtool, path):
    out = subprocess.run([hashtool, path], capture_output=True, text=True, check=True).stdout
    return out.split()[0]


def result(name, state, detail):
    if state is True or state is False:
        state = "PASS" if state else "FAIL"
    print("RESULT|%s|%s|%s" % (name, state, detail))


def load(dump):
    recs = []
    with open(dump) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                recs.append(json.loads(line))
    comms = [r for r in recs if r.get("type") == "comm"]
    colls = sorted((r for r in recs if r.get("type") == "coll"), key=lambda r: r["coll_index"])
    launches = {r["op_seq"]: r for r in recs if r.get("type") == "launch"}
    return comms, colls, launches


def check_comms(comms, meta):
    inits = [c for c in comms if c["event"] == "init"]
    ok = bool(inits) and all(c["result"] == 0 and c["rank"] == 0 and c["nranks"] == 1 and c["comm_id"] != "0x0"
                             and c["version"] == meta["nccl"] for c in inits)
    result("nccl-single-comm-init", ok, "%d init record(s): comm_id %s, version %s (torch says NCCL %s), rank/ranks %s"
           % (len(inits), ", ".join(c["comm_id"] for c in inits), ", ".join(sorted(set(c["version"] for c in inits))),
              meta["nccl"], ", ".join("%d/%d" % (c["rank"], c["nranks"]) for c in inits)))
    splits = [c for c in comms if c["event"] == "split"]
    ids = set(c["comm_id"] for c in inits)
    if splits:
        ok = all(c["parent_id"] in ids and c["comm_id"] not in ("0x0", c["parent_id"]) and c["result"] == 0
                 and c["rank"] == 0 and c["nranks"] == 1 for c in splits)
        result("nccl-single-comm-split", ok, "%d split record(s): comm_id %s from parent %s"
               % (len(splits), ", ".join(c["comm_id"] for c in splits), ", ".join(c["parent_id"] for c in splits)))
    elif not meta["bound"] or len(inits) > 1:
        result("nccl-single-comm-split", "SKIP", "torch %s made the new group without ncclCommSplit (%s)"
               % (meta["torch"], "no device_id" if not meta["bound"] else "a second init"))
    else:
        result("nccl-single-comm-split", False, "no split record; events: %s"
               % ", ".join(c["event"] for c in comms))


def launches_of(coll, colls):
    """The launch range an operation's launches are in: its own, else its group end's."""
    if coll["launch_count"]:
        return coll
    if coll["group"]:
        for g in colls:
            if g["op"] == "group_end" and g["group"] == coll["group"] and g["launch_count"]:
                return g
    return None


def tied(coll, colls, launches):
    rng = launches_of(coll, colls)
    if not rng:
        return []
    seqs = range(rng["first_launch"], rng["last_launch"] + 1)
    return [launches.get(s) for s in seqs if launches.get(s) and launches[s]["tid"] == rng["tid"]]


def coll_regions(coll, launched):
    key = coll["coll_index"] & 0x7fffffff
    return [g for l in launched for g in l.get("regions", [])
            if "coll_buffer" in g["flags"] and g["param_offset"] >> 1 == key]


def check_colls(colls, launches, out, hashtool):
    ops = [c for c in colls if c["op"] != "group_end"]
    names = [c["op"] for c in ops]
    seen = names.count("all_reduce") >= 3 and "all_gather" in names and ("bcast" in names or "broadcast" in names)
    result("nccl-single-coll-records", seen and all(c["result"] == 0 for c in ops),
           "%d operations (%s; reduce_scatter %s), %d group ends, results %s"
           % (len(ops), " ".join(names), "called" if "reduce_scatter" in names else "not an NCCL call here",
              len(colls) - len(ops), sorted(set(c["result"] for c in colls))))
    per_comm = {}
    for c in ops:
        per_comm.setdefault(c["comm"], []).append(c["comm_seq"])
    result("nccl-single-comm-seq", bool(per_comm) and all(s == list(range(len(s))) for s in per_comm.values()),
           "; ".join("comm %s: %s" % (k, s) for k, s in per_comm.items()))
    reductions = [c for c in ops if c["op"] in ("all_reduce", "reduce_scatter") and c["redop"] == "avg"]
    ties = {c["coll_index"]: tied(c, colls, launches) for c in reductions}
    others = ", ".join("%s %d" % (c["op"], c["launch_count"]) for c in ops if c not in reductions)
    rs_called = any(c["op"] == "reduce_scatter" for c in reductions)
    result("nccl-single-launches", len(reductions) >= 2 + rs_called and all(ties.values()),
           "reductions (avg) tied to LAUNCH records of their thread: %s; launch counts of the others "
           "(one rank: copies, no kernel): %s" % (", ".join("%s %d" % (c["op"], len(ties[c["coll_index"]]))
                                                          for c in reductions), others or "none"))
    regs = {i: coll_regions(next(c for c in reductions if c["coll_index"] == i), t) for i, t in ties.items()}
    ok = bool(regs) and all(r and all("pre" in g["flags"] and "post" in g["flags"] and g["hash_len"] == COUNT * 4
                                      for g in r) for r in regs.values())
    result("nccl-single-regions", ok, "coll_buffer regions with pre/post digests of %d bytes: %s"
           % (COUNT * 4, ", ".join("COLL %d: %d" % (i, len(r)) for i, r in regs.items())))
    got = {}
    for name, op, k in (("all_reduce", "all_reduce", 0), ("reduce_scatter", "reduce_scatter", 0),
                        ("group_all_reduce", "all_reduce", 1)):
        cands = [c for c in reductions if c["op"] == op]
        if op == "reduce_scatter" and not rs_called:
            continue
        recv = [g for g in regs.get(cands[k]["coll_index"], []) if g["param_offset"] & 1] if len(cands) > k else []
        got[name] = (recv[-1]["post_hash"] if recv else "-", digest(hashtool, os.path.join(out, name + ".bin")))
    result("nccl-single-received-digests", len(got) >= 2 and all(a == b for a, b in got.values()),
           "; ".join("%s received %s, ktrace-hash of the tensor %s" % (n, a, b) for n, (a, b) in got.items()))


def verify(dump, out, hashtool):
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    comms, colls, launches = load(dump)
    check_comms(comms, meta)
    check_colls(colls, launches, out, hashtool)


if __name__ == "__main__":
    if sys.argv[1] == "check":
        sys.exit(check())
    elif sys.argv[1] == "run":
        program(sys.argv[2])
    else:
        verify(sys.argv[2], sys.argv[3], sys.argv[4])
