#!/usr/bin/env python3
"""Peer benchmark driver: tbd's training step against the same step written in
PyTorch Python by a performance-aware user, on the same torch wheel.

For every round and workload it runs `tbd run W --scale small --probes time`
and bench/peer/W.py back to back (which goes first alternates by round, so a
drift of the machine's load does not always favour one side), checks that
both trained the same model on the same batches (parameter count, sample
unit, samples of every timed iteration), and prints the throughput ratio
tbd / Python per round and its median. A benchmark, not a test: nothing here
asserts a speed. See README.md.

    bench/peer/run.py [--tbd build/tbd] [--rounds 3] [workload ...]
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
WORKLOADS = ["resnet50", "gpt", "llama", "ncf", "seq2seq", "dlrm"]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workloads", nargs="*", default=WORKLOADS, help=f"default: {' '.join(WORKLOADS)}")
    p.add_argument("--tbd", default=os.path.join(REPO, "build", "tbd"), help="the tbd binary (default: build/tbd)")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3; the table shows the median)")
    p.add_argument("--python", default=os.path.join(REPO, ".venv", "bin", "python"),
                   help="the Python with the torch wheel tbd links against (default: .venv/bin/python)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch", action="append", default=[], metavar="W=N",
                   help="batch size of workload W on both sides (default: tbd's default batch); repeatable")
    p.add_argument("--warmup", type=int, default=5, help="as tbd run's default")
    p.add_argument("--iters", type=int, default=4, help="as tbd run's default")
    p.add_argument("--repeat", type=int, default=5, help="as tbd run's default")
    p.add_argument("--keep", help="keep every result JSON in this folder")
    p.add_argument("--host-allocator", choices=["retain", "system"], default="retain",
                   help="freed host memory on both sides: retain (tbd's default; Python gets the same glibc "
                        "settings through GLIBC_TUNABLES) or system (glibc's defaults on both sides)")
    p.add_argument("--python-allocator", choices=["same", "system"], default="same",
                   help="same: Python gets --host-allocator's settings (the strict comparison of the steps); "
                        "system: Python keeps glibc's defaults, as a Python user runs it unless they set "
                        "GLIBC_TUNABLES or preload jemalloc/tcmalloc")
    args = p.parse_args()
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        p.error(f"no peer for {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}")
    try:
        args.batch = {w: int(n) for w, n in (b.split("=", 1) for b in args.batch)}
    except ValueError:
        p.error("--batch takes W=N, e.g. --batch gpt=2")
    return args


def timing_options(args, workload):
    options = ["--threads", str(args.threads), "--warmup", str(args.warmup), "--iters", str(args.iters),
               "--repeat", str(args.repeat)]
    if workload in args.batch:
        options += ["--batch-size", str(args.batch[workload])]
    return options


def run_tbd(args, binary, workload, out):
    command = [binary, "run", workload, "--scale", "small", "--probes", "time", "--quiet", "--out", out,
               "--host-allocator", args.host_allocator, *timing_options(args, workload)]
    subprocess.run(command, check=True)
    with open(out) as f:
        r = json.load(f)
    return {"samples_per_s": r["throughput"]["samples_per_s"], "parameters": r["model"]["parameters"],
            "sample_unit": r["workload"]["sample_unit"], "iteration_samples": [int(n) for n in r["iteration_samples"]],
            "batch_size": r["workload"]["options"]["batch_size"], "torch": r["environment"]["libtorch"].get("version"),
            "revision": r["environment"].get("tbd", {}).get("git_revision")}


def run_python(args, workload, out):
    command = [args.python, os.path.join(HERE, workload + ".py"), "--quiet", "--out", out,
               *timing_options(args, workload)]
    subprocess.run(command, check=True, env=python_environment(args))
    with open(out) as f:
        return json.load(f)


# tbd's --host-allocator retain (src/tbd/core/host_allocator.cpp) as glibc
# tunables, read by the Python process at start: the same mmap and trim
# thresholds, so both sides reuse freed memory alike and the ratio compares
# the steps, not the allocator settings.
RETAIN_TUNABLES = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824"


def python_environment(args):
    env = dict(os.environ)
    if args.host_allocator == "retain" and args.python_allocator == "same":
        env["GLIBC_TUNABLES"] = RETAIN_TUNABLES
    else:
        env.pop("GLIBC_TUNABLES", None)
    return env


def mismatch(t, p):
    """What differs between the two runs' model and data, or None."""
    problems = []
    if t["parameters"] != p["parameters"]:
        problems.append(f"parameters: tbd {t['parameters']:,}, python {p['parameters']:,}")
    if t["sample_unit"] != p["sample_unit"]:
        problems.append(f"sample unit: tbd {t['sample_unit']!r}, python {p['sample_unit']!r}")
    if t["iteration_samples"] != p["iteration_samples"]:
        problems.append(f"samples per timed iteration: tbd {t['iteration_samples']}, python {p['iteration_samples']}")
    return "; ".join(problems) or None


def load():
    return open("/proc/loadavg").read().split()[0] if os.path.exists("/proc/loadavg") else "?"


def main():
    args = parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="tbd-peer-")
    os.makedirs(folder, exist_ok=True)
    started, load_start = datetime.datetime.now().astimezone(), load()
    # Run a copy: a rebuild of the binary during the rounds (a shared checkout)
    # would otherwise mix two versions of tbd in one table.
    built = datetime.datetime.fromtimestamp(os.path.getmtime(args.tbd)).astimezone()
    binary = os.path.join(folder, "tbd")
    shutil.copy2(args.tbd, binary)
    runners = {"tbd": lambda w, out: run_tbd(args, binary, w, out), "python": lambda w, out: run_python(args, w, out)}
    results = {w: [] for w in args.workloads}  # per round: (tbd, python)
    failures = []
    for r in range(args.rounds):
        for w in args.workloads:
            print(f"round {r + 1}/{args.rounds}: {w}", file=sys.stderr, flush=True)
            outs = {side: os.path.join(folder, f"{w}.{side}.{r + 1}.json") for side in ("tbd", "python")}
            order = ("tbd", "python") if r % 2 == 0 else ("python", "tbd")
            got = {}
            for side in order:
                got[side] = runners[side](w, outs[side])
            problem = mismatch(got["tbd"], got["python"])
            if problem:
                failures.append(f"{w} round {r + 1}: {problem}")
            results[w].append((got["tbd"], got["python"]))

    print()
    print(f"Peer benchmark: tbd vs performance-aware PyTorch Python, --scale small, --threads {args.threads}, fp32, CPU")
    rounds_header = "  ".join(f"r{r + 1:<5}" for r in range(args.rounds))
    header = f"{'workload':<9} {'unit':<14} {'batch':>5} {'params':>11}  {'tbd/s':>9} {'python/s':>9}  {rounds_header}  {'median':>6}"
    print(header)
    print("-" * len(header))
    for w, pairs in results.items():
        tbd_rates = [t["samples_per_s"] for t, _ in pairs]
        py_rates = [p["samples_per_s"] for _, p in pairs]
        ratios = [a / b for a, b in zip(tbd_rates, py_rates)]
        t0 = pairs[0][0]
        print(f"{w:<9} {t0['sample_unit']:<14} {t0['batch_size']:>5} {t0['parameters']:>11,}  "
              f"{statistics.median(tbd_rates):>9.1f} {statistics.median(py_rates):>9.1f}  "
              + "  ".join(f"{x:<6.3f}" for x in ratios) + f"  {statistics.median(ratios):>6.3f}")
    print()
    print("tbd/s, python/s: medians over the rounds of samples per second (tbd's throughput.samples_per_s; "
          "Python: timed samples / timed seconds, the same definition).")
    print("r1..: tbd / Python throughput per round; median: their median (> 1: tbd faster).")
    first_tbd, first_python = next(iter(results.values()))[0]
    print("How it was made:")
    print(f"  started {started:%Y-%m-%d %H:%M %Z}, {args.rounds} rounds, tbd and Python alternating "
          "(tbd first in odd rounds, Python first in even ones)")
    print(f"  tbd: a copy of {args.tbd} (built {built:%Y-%m-%d %H:%M}, revision {first_tbd['revision']}): "
          f"tbd run W --scale small --probes time {' '.join(timing_options(args, '-'))}"
          + (f"; batch sizes {args.batch}" if args.batch else "; each workload's default batch")
          + f"; --host-allocator {args.host_allocator}")
    print(f"  python: {args.python} bench/peer/W.py, the same timing options"
          + (f", GLIBC_TUNABLES={RETAIN_TUNABLES}" if "GLIBC_TUNABLES" in python_environment(args)
             else ", glibc's defaults") + "; "
          f"torch {first_python['torch']} in Python, LibTorch {first_tbd['torch']} in tbd")
    print(f"  machine: {platform.machine()}, {os.cpu_count()} CPUs, load average {load_start} at start, "
          f"{load()} at end; result JSONs in {folder}")
    if failures:
        print("NOT THE SAME STEP (the ratios above compare different work):")
        for f in failures:
            print("  " + f)
        sys.exit(1)
    print("  checked: same parameter count, sample unit and samples of every timed iteration on both sides")


if __name__ == "__main__":
    main()
