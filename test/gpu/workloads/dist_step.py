#!/usr/bin/env python3
"""test/gpu/workloads/dist_step.py: one rank of a planted distributed job (torchrun).

    torchrun --nproc-per-node=N dist_step.py SCENARIO OUTDIR [--planted] [--bench STEPS]

Every rank trains a small MLP for a few steps on the NCCL backend and saves its final
parameters to OUTDIR/rank<R>.bin (the ground truth of bare runs is their bytes).
KT_DIST_RUN (set by the caller, one number per run of the job) varies what a scenario
varies between runs. Scenarios:
  ddp     DistributedDataParallel over all ranks; with --planted, rank 1 adds its
          activations into 64 rows with index_add_ (float atomics: non-deterministic)
          before the loss, so its gradient differs and the all-reduce spreads it
  tpdp    4 ranks: tensor-parallel pairs {0,1} {2,3} (an all_reduce of the partial
          products inside the pair) and data-parallel pairs {0,2} {1,3} (the gradients'
          all_reduce); with --planted, rank 2's index_add_ before its pair's all_reduce
  algo    all ranks all_reduce the same large tensor each step, NCCL_ALGO Ring in
          odd-numbered runs and Tree in even ones (set before NCCL starts): the
          collective's reduction order is what differs
  branch  rank 1 makes one more all_reduce in even-numbered runs (a collective-count
          mismatch between the runs)
--bench STEPS: time STEPS steps after a warm-up and print "step_ms X" on rank 0.
"""
import os
import sys
import time


def run_number():
    return int(os.environ.get("KT_DIST_RUN", "1"))


def model_and_data(torch, rank, width=512):
    g = torch.Generator(device="cpu").manual_seed(1234)
    layers = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, width))
    with torch.no_grad():
        for p in layers.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.02)
    gd = torch.Generator(device="cpu").manual_seed(100 + rank)
    x = torch.randn(256, width, generator=gd)
    y = torch.randn(256, width, generator=gd)
    return layers.cuda(), x.cuda(), y.cuda()


def planted_index_add(torch, h):
    """h with a non-deterministic sum mixed in: 64 rows gathered by index_add_."""
    idx = torch.arange(h.shape[0], device=h.device) % 64
    acc = torch.zeros(64, h.shape[1], device=h.device).index_add_(0, idx, h)
    return h + acc[idx] * 1e-3


def step_ddp(torch, dist, ctx, planted):
    model, x, y, opt = ctx
    opt.zero_grad(set_to_none=True)
    h = model(x)
    if planted and dist.get_rank() == 1:
        h = planted_index_add(torch, h)
    torch.nn.functional.mse_loss(h, y).backward()
    opt.step()


def step_tpdp(torch, dist, ctx, planted):
    model, x, y, opt, tp, dp = ctx
    opt.zero_grad(set_to_none=True)
    h = model(x)
    if planted and dist.get_rank() == 2:
        h = planted_index_add(torch, h)
    part = h.detach().clone()
    dist.all_reduce(part, group=tp)            # the tensor-parallel pair's partial sums
    h = h + (part - h.detach()) * 0.5
    torch.nn.functional.mse_loss(h, y).backward()
    for p in model.parameters():               # data parallel: average the gradients
        dist.all_reduce(p.grad, group=dp)
        p.grad.div_(2)
    opt.step()


def step_algo(torch, dist, ctx, planted):
    t = ctx[0]
    dist.all_reduce(t)
    t.mul_(1.0 / dist.get_world_size())


def step_branch(torch, dist, ctx, planted):
    t = ctx[0]
    dist.all_reduce(t)
    if dist.get_rank() == 1 and run_number() % 2 == 0:
        dist.all_reduce(t.clone())             # a collective the other run does not make


def setup(torch, dist, scenario, rank):
    if scenario in ("algo", "branch"):
        g = torch.Generator(device="cpu").manual_seed(7 + rank)
        return (torch.randn(1 << 22, generator=g).cuda(),)
    model, x, y = model_and_data(torch, rank)
    if scenario == "ddp":
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[torch.cuda.current_device()])
        return model, x, y, torch.optim.SGD(model.parameters(), lr=0.1)
    ws = dist.get_world_size()
    if ws != 4:
        raise SystemExit("tpdp needs 4 ranks")
    tps = [dist.new_group([0, 1]), dist.new_group([2, 3])]
    dps = [dist.new_group([0, 2]), dist.new_group([1, 3])]
    return model, x, y, torch.optim.SGD(model.parameters(), lr=0.1), tps[rank // 2], dps[rank % 2]


STEPS = {"ddp": step_ddp, "tpdp": step_tpdp, "algo": step_algo, "branch": step_branch}


def save(torch, ctx, out, rank):
    tensors = list(ctx[0].parameters()) if hasattr(ctx[0], "parameters") else [ctx[0]]
    torch.cuda.synchronize()
    with open(os.path.join(out, "rank%d.bin" % rank), "wb") as f:
        for t in tensors:
            f.write(t.detach().float().cpu().numpy().tobytes())


def main():
    scenario, out = sys.argv[1], sys.argv[2]
    planted = "--planted" in sys.argv
    bench = int(sys.argv[sys.argv.index("--bench") + 1]) if "--bench" in sys.argv else 0
    if scenario == "algo":
        os.environ["NCCL_ALGO"] = "Ring" if run_number() % 2 else "Tree"
    import torch
    import torch.distributed as dist
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local % torch.cuda.device_count())
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    ctx = setup(torch, dist, scenario, rank)
    step = STEPS[scenario]
    for _ in range(3):
        step(torch, dist, ctx, planted)
    if bench:
        torch.cuda.synchronize()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(bench):
            step(torch, dist, ctx, planted)
        torch.cuda.synchronize()
        if rank == 0:
            print("step_ms %.4f" % ((time.perf_counter() - t0) * 1e3 / bench), flush=True)
    os.makedirs(out, exist_ok=True)
    save(torch, ctx, out, rank)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
