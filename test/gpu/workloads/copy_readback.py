"""test/gpu/workloads/copy_readback.py: what device-to-host copies delivered,
digested on the GPU (test/gpu/31-copy-readback.sh).

    copy_readback.py run OUTDIR          the program: PyTorch read-backs of one
                                         tensor (.cpu() into pageable memory,
                                         .item(), .tolist(), a non_blocking copy
                                         into pinned memory) and a synchronous
                                         driver copy (cuMemcpyDtoH_v2) of the same
                                         bytes; writes what each delivered to
                                         OUTDIR/<name>.bin
    copy_readback.py verify DUMP OUTDIR HASHTOOL
                                         checks the trace (ktrace-dump --json
                                         output in DUMP) against those files,
                                         prints RESULT lines
    copy_readback.py bench N             N .item() read-backs; prints the
                                         seconds they took
"""
import ctypes
import json
import os
import struct
import subprocess
import sys
import time


def program(out):
    import torch

    torch.manual_seed(0)
    x = torch.randn(1000, 37, device="cuda")
    y = (x * 3).sum(dim=1).contiguous()  # 1000 floats, 4000 bytes
    torch.cuda.synchronize()
    files = {
        "cpu": y.cpu().numpy().tobytes(),
        "item": struct.pack("<f", y[5].item()),
        "tolist": struct.pack("<16f", *y[:16].tolist()),
    }
    pinned = torch.empty(y.shape, dtype=y.dtype, pin_memory=True)
    pinned.copy_(y, non_blocking=True)
    torch.cuda.synchronize()
    files["pinned"] = pinned.numpy().tobytes()
    cuda = ctypes.CDLL("libcuda.so.1")
    buf = ctypes.create_string_buffer(4000)
    rc = cuda.cuMemcpyDtoH_v2(buf, ctypes.c_uint64(y.data_ptr()), ctypes.c_size_t(4000))
    if rc != 0:
        sys.exit("cuMemcpyDtoH_v2 failed: %d" % rc)
    files["sync"] = buf.raw
    for name, data in files.items():
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(data)


def digest(hashtool, path):
    out = subprocess.run([hashtool, path], capture_output=True, text=True, check=True).stdout
    return out.split()[0]


def result(name, ok, detail):
    print("RESULT|%s|%s|%s" % (name, "PASS" if ok else "FAIL", detail))


def verify(dump, out, hashtool):
    copies = []
    with open(dump) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{") and '"type":"memcpy"' in line:
                r = json.loads(line)
                if r.get("dst_digest_state", "none") != "none":
                    copies.append(r)
    want = {n: digest(hashtool, os.path.join(out, n + ".bin")) for n in
            ("cpu", "item", "tolist", "pinned", "sync")}
    asynchronous = [c for c in copies if "async" in (c.get("copy_flags") or [])]
    states = sorted(set(c["dst_digest_state"] for c in asynchronous))
    result("copy-readback-async-digested", bool(asynchronous) and states == ["device"],
           "%d device-to-host copies, %d asynchronous, their states: %s"
           % (len(copies), len(asynchronous), ", ".join(states) or "none"))
    by_size = {}
    for c in copies:
        by_size.setdefault(c["bytes"], []).append(c)
    whole = by_size.get(4000, [])
    kinds = sorted(set(c["dst_digest_state"] for c in whole))
    digests = set(c["dst_digest"] for c in whole)
    ok = kinds == ["device", "host"] and digests == {want["cpu"]} and want["cpu"] == want["sync"]
    result("copy-readback-sync-equals-async", ok,
           "%d copies of the 4000-byte tensor (%s): digests %s, ktrace-hash of the bytes %s"
           % (len(whole), ", ".join(kinds), ", ".join(sorted(d or "-" for d in digests)), want["cpu"]))
    for name, size in (("item", 4), ("tolist", 64)):
        got = sorted(set(c["dst_digest"] or "-" for c in by_size.get(size, [])))
        result("copy-readback-" + name, want[name] in got,
               "%d-byte copies digested %s; ktrace-hash of the bytes delivered %s"
               % (size, ", ".join(got) or "none", want[name]))


def bench(n):
    import torch

    y = torch.randn(1000, device="cuda")
    y[3].item()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(n):
        y[i % 1000].item()
    print("%.6f" % (time.perf_counter() - t0))


if __name__ == "__main__":
    if sys.argv[1] == "run":
        program(sys.argv[2])
    elif sys.argv[1] == "verify":
        verify(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        bench(int(sys.argv[2]))
