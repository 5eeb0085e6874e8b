"""Which memory format makes resnet50's Python step faster on this CPU?

Builds the peer resnet50 twice in one process, once channels-last and once
contiguous, and alternates their steps (the order flips every iteration), so
a change in the machine's load hits both alike. Prints min, median and mean
step time per format; resnet50.py's --memory-format default is the faster.

    .venv/bin/python bench/peer/memory_format.py [--batch-size 32] [--iters 6]
"""
import argparse
import statistics
import time

import timing  # first: it quiets torch's NumPy warning on import

import torch

import resnet50


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--iters", type=int, default=6, help="timed steps per format, after 2 warm-up steps each")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    peers = {}
    for fmt in ("contiguous", "channels_last"):
        torch.manual_seed(42)
        peers[fmt] = resnet50.build(argparse.Namespace(batch_size=args.batch_size, seed=42, memory_format=fmt))
    seconds = {fmt: [] for fmt in peers}
    for i in range(2 + args.iters):
        for fmt in (list(peers) if i % 2 == 0 else list(reversed(peers))):
            peer = peers[fmt]
            t0 = time.perf_counter()
            peer.step(peer.batches[i % len(peer.batches)]).item()
            if i >= 2:
                seconds[fmt].append(time.perf_counter() - t0)
    for fmt, s in seconds.items():
        print(f"resnet50 batch {args.batch_size}, {fmt:>13}: min {min(s) * 1e3:7.0f} ms, "
              f"median {statistics.median(s) * 1e3:7.0f} ms, mean {statistics.mean(s) * 1e3:7.0f} ms ({len(s)} steps)")


if __name__ == "__main__":
    main()
