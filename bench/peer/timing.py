"""Times a Python training step the way `tbd run --probes time` times its own.

tbd's timed iteration (src/tbd/measure/runner.cpp, run_iteration) runs from the
request for a batch to the loss read back as a number: next batch, forward,
loss, backward, optimizer step, zero_grad, loss.item(). Warm-up iterations
first, then `repeat` windows of `iters` iterations; throughput is the timed
samples over the timed seconds (the ratio of totals, as tbd's time probe).
Synthetic batches are made once before timing and handed out in turn, as
tbd's BatchPool does, so the n-th iteration sees the same batch on both sides.

Each workload module provides build(args) -> Peer and calls main(); the
result is a small JSON (--out) that bench/peer/run.py reads.
"""
import argparse
import dataclasses
import json
import math
import sys
import time
import warnings

# The wheel has no NumPy; torch warns about it on import. Nothing here uses it.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
import torch  # noqa: E402


@dataclasses.dataclass
class Peer:
    model: torch.nn.Module
    batches: list            # made once, before timing; each a tuple the step takes
    samples: list            # samples per batch, in tbd's sample unit
    step: callable           # step(batch) -> loss tensor (detached); does forward..zero_grad
    sample_unit: str
    configuration: dict      # what was chosen (memory format, optimizer options, ...)


def parser(description, default_batch):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--batch-size", type=int, default=default_batch, help="tbd's default batch for the workload")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=4)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", help="write the result JSON here")
    p.add_argument("--quiet", action="store_true")
    return p


def parameter_count(model):
    return sum(p.numel() for p in model.parameters())


def main(name, build, arguments):
    args = arguments.parse_args()
    torch.set_num_threads(args.threads)  # as tbd's --threads (at::set_num_threads)
    torch.manual_seed(args.seed)         # as tbd's seed_everything
    peer = build(args)

    next_batch = 0

    def iteration():
        nonlocal next_batch
        t0 = time.perf_counter()
        k = next_batch % len(peer.batches)
        next_batch += 1
        loss = peer.step(peer.batches[k]).item()
        seconds = time.perf_counter() - t0
        if not math.isfinite(loss):
            sys.exit(f"{name}: the loss became {loss}")
        return seconds, peer.samples[k], loss

    for _ in range(args.warmup):
        iteration()
    seconds, samples, losses = [], [], []
    for _ in range(args.repeat):
        for _ in range(args.iters):
            s, n, loss = iteration()
            seconds.append(s)
            samples.append(n)
            losses.append(loss)

    result = {
        "workload": name,
        "parameters": parameter_count(peer.model),
        "sample_unit": peer.sample_unit,
        "samples_per_s": sum(samples) / sum(seconds),
        "iteration_samples": samples,
        "iterations": seconds,
        "loss": {"first_measured": losses[0], "last_measured": losses[-1]},
        "batch_size": args.batch_size,
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "configuration": peer.configuration,
    }
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    if not args.quiet:
        print(f"{name}: {result['parameters']:,} parameters, batch {args.batch_size}, "
              f"{result['samples_per_s']:.1f} {peer.sample_unit}/s over {len(seconds)} timed iterations "
              f"(median {sorted(seconds)[len(seconds) // 2] * 1e3:.1f} ms)", file=sys.stderr)
    return result
