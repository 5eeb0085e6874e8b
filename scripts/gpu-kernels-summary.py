#!/usr/bin/env python3
"""Summarises the kernel checks of scripts/gpu-check (docs/gpu.md): which
optimizer and attention operators each CUDA run executed, the memory format
resnet50 ran in, and the throughput of each ablation run, from the result
files alone.

    scripts/gpu-kernels-summary.py RESULT.json [RESULT.json ...]

Exit status 1 when a run that asked for the fused optimizer did not run
ATen's fused kernel, or an attention workload ran no scaled-dot-product
attention kernel: the CUDA path would not be the one the docs describe.
"""
import json
import sys

# The operators that show which implementation ran (ATen's names).
FUSED = ("aten::_fused_sgd_", "aten::_fused_adam_", "aten::_fused_adamw_")
FOREACH_PREFIX = "aten::_foreach_"
SDPA = ("scaled_dot_product", "flash_attention", "efficient_attention", "cudnn_attention")


def ops_of(result):
    ops = result.get("ops", {})
    return {o["op"]: o for o in ops.get("by_op", [])} if isinstance(ops.get("by_op"), list) else {}


def main(paths):
    problems = []
    print("| run | impl | memory format | samples/s (CI95) | fused ops | foreach ops | attention ops |")
    print("|---|---|---|---:|---|---|---|")
    for path in paths:
        with open(path) as f:
            r = json.load(f)
        w = r["workload"]
        opts = w["options"]
        name = path.rsplit("/", 1)[-1].removesuffix(".json")
        ops = ops_of(r)
        fused = sorted(o for o in ops if o in FUSED)
        foreach = sorted(o for o in ops if o.startswith(FOREACH_PREFIX))
        attention = sorted(o for o in ops if any(s in o for s in SDPA))
        t = r.get("throughput", {})
        ci = t.get("ci95") or [float("nan")] * 2
        fmt = w.get("configuration", {}).get("memory_format", opts.get("memory_format", ""))
        print(f"| {name} | {opts.get('optimizer_impl')} | {fmt} | {t.get('samples_per_s', float('nan')):.1f} "
              f"({ci[0]:.1f}-{ci[1]:.1f}) {t.get('unit', '')} | {', '.join(fused) or '-'} | {len(foreach)} | "
              f"{', '.join(attention) or '-'} |")
        if ops and opts.get("optimizer_impl") == "fused" and not fused:
            problems.append(f"{name}: --optimizer-impl fused ran no fused kernel")
        if ops and w["name"] in ("gpt", "transformer") and not attention:
            problems.append(f"{name}: no scaled-dot-product attention operator")
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
