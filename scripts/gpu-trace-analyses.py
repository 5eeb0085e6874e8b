#!/usr/bin/env python3
"""Holistic Trace Analysis's GPU analyses over the CUDA trace scripts/gpu-check
brings back (docs/gpu.md): temporal breakdown, idle time, kernel breakdown and
kernel-launch statistics, with the ProfilerStep iterations HTA found.

    scripts/gpu-trace-analyses.py TRACE.json[.gz]

Needs `holistictraceanalysis` (pip); runs on any machine, no GPU needed.
"""
import gzip
import os
import shutil
import sys
import tempfile
import warnings

if len(sys.argv) != 2:
    print(__doc__, file=sys.stderr)
    sys.exit(2)
try:
    from hta.trace_analysis import TraceAnalysis
except ImportError:
    print("gpu-trace-analyses: holistictraceanalysis is not installed: pip install holistictraceanalysis",
          file=sys.stderr)
    sys.exit(2)
warnings.simplefilter("ignore")  # pandas deprecations inside HTA

# HTA reads a folder of rank files.
folder = tempfile.mkdtemp()
try:
    opener = gzip.open if sys.argv[1].endswith(".gz") else open
    with opener(sys.argv[1], "rb") as src, open(os.path.join(folder, "rank-0.json"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    analysis = TraceAnalysis(trace_dir=folder, include_last_profiler_step=True)
    symbols = analysis.t.symbol_table.get_sym_table()
    names = {symbols[i] for i in analysis.t.get_trace(0)["name"].unique()}
    print("iterations:", sorted(n for n in names if n.startswith("ProfilerStep#")))
    print("\n--- temporal breakdown\n", analysis.get_temporal_breakdown(visualize=False).to_string())
    idle = analysis.get_idle_time_breakdown(visualize=False)
    print("\n--- idle time\n", (idle[0] if isinstance(idle, tuple) else idle).to_string())
    kernels = analysis.get_gpu_kernel_breakdown(visualize=False)
    print("\n--- kernel types\n", kernels[0].to_string())
    top = kernels[1].head(10).copy()
    top["name"] = top["name"].str.slice(0, 90)
    print("\n--- top kernels\n", top.to_string())
    for rank, launches in analysis.get_cuda_kernel_launch_stats(visualize=False).items():
        print(f"\n--- kernel launches, rank {rank}\n", launches.describe().loc[["count", "mean", "50%"]].to_string())
finally:
    shutil.rmtree(folder)
