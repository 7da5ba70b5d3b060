"""All-reduce through whichever NCCL net the environment selects; checks results, prints busbw.

Run one process per rank (tests/gpu/run.sh does this). Each rank reduces
tensors of several sizes, verifies every element exactly, and rank 0 prints
one line per size in nccl-tests' units (algbw, busbw = algbw * 2(n-1)/n).
"""
import os
import sys
import time

import torch
import torch.distributed as dist


def check_and_time(size_bytes, iters, warmup, rank, world):
    count = max(1, size_bytes // 4)
    x = torch.empty(count, dtype=torch.float32, device="cuda")
    expected = float(sum(range(1, world + 1)))
    for _ in range(warmup):
        x.fill_(rank + 1)
        dist.all_reduce(x)
    torch.cuda.synchronize()
    wrong = int((x != expected).sum().item())
    dist.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    elapsed = (time.perf_counter() - start) / iters
    t = torch.tensor([elapsed], device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    algbw = count * 4 / t.item() / 1e9
    return count * 4, t.item() * 1e6, algbw, algbw * 2 * (world - 1) / world, wrong


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(0)
    sizes = [int(s) for s in os.environ.get("SIZES", "1048576 16777216 67108864").split()]
    iters = int(os.environ.get("ITERS", "10"))
    failures = 0
    if rank == 0:
        print(f"# torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
              f"{world} ranks, NCCL_NET={os.environ.get('NCCL_NET', '')}", flush=True)
        print("# size(B) time(us) algbw(GB/s) busbw(GB/s) #wrong", flush=True)
    for size in sizes:
        nbytes, us, algbw, busbw, wrong = check_and_time(size, iters, 2, rank, world)
        failures += wrong
        if rank == 0:
            print(f"{nbytes:12d} {us:12.1f} {algbw:10.3f} {busbw:10.3f} {wrong:6d}", flush=True)
    dist.destroy_process_group()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
