#!/usr/bin/env bash
# What length buckets cost on this machine (docs/workloads.md#length-buckets):
# for transformer, seq2seq and deepspeech2 at small scale on synthetic data,
# one thread, runs with the default bucket and with exact lengths
# (--set length_bucket=1), alternated ROUNDS times (default 2), so a drift
# of the machine hits both alike. Prints per run the padded share of the
# positions the model computes (deterministic: from the shapes the timed
# windows met) and the throughput, then per workload the mean ratio
# bucketed/exact and its spread over the rounds.
#
#   bench/length_buckets.sh [build/tbd] [workloads] [ROUNDS=2] [KEEP=DIR keeps the results]
set -euo pipefail
tbd="${1:-build/tbd}"
workloads="${2:-transformer seq2seq deepspeech2}"
rounds="${ROUNDS:-2}"
work="${KEEP:-$(mktemp -d)}"
mkdir -p "$work"
for round in $(seq 1 "$rounds"); do
  for w in $workloads; do
    for bucket in default 1; do
      set_args=()
      [ "$bucket" = 1 ] && set_args=(--set length_bucket=1)
      "$tbd" run "$w" --scale small --threads 1 --warmup 3 --iters 8 --repeat 3 --probes time --quiet \
        "${set_args[@]}" --out "$work/$w-$bucket-$round.json"
    done
  done
done
python3 - "$work" "$rounds" $workloads <<'PY'
import json, statistics, sys

work, rounds, workloads = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def padded_share(r):
    """Share of the positions computed that are padding: target positions
    (translation: B x T of each timed batch against the real target tokens)
    or frames (speech: B x T against the utterances' real frames, 100 per
    second of audio)."""
    padded = 0
    for key, n in r["batch_shapes"]["timed"].items():
        dims = [int(d) for d in key.split()[-1 if r["workload"]["name"] != "deepspeech2" else 0].split("x")]
        padded += n * dims[0] * dims[-1]
    if r["workload"]["name"] == "deepspeech2":
        real = r["throughput"]["samples"] * 100 * r["workload"]["configuration"]["audio_seconds_per_utterance"]
    else:
        real = r["throughput"]["samples"]
    return 1 - real / padded

for w in workloads:
    ratios = []
    for k in range(1, rounds + 1):
        runs = {b: json.load(open(f"{work}/{w}-{b}-{k}.json")) for b in ("default", "1")}
        for b, r in runs.items():
            print(f"{w} round {k} length_bucket={r['workload']['settings']['length_bucket']}: "
                  f"{r['throughput']['samples_per_s']:.4g} {r['throughput']['unit']}, "
                  f"padding {100 * padded_share(r):.1f}% of the positions, "
                  f"{len(r['batch_shapes']['timed'])} shapes in the timed windows")
        ratios.append(runs["default"]["throughput"]["samples_per_s"] / runs["1"]["throughput"]["samples_per_s"])
    spread = max(ratios) - min(ratios)
    print(f"{w}: bucketed/exact throughput {statistics.mean(ratios):.3f} "
          f"(rounds: {', '.join(f'{x:.3f}' for x in ratios)}; spread {spread:.3f})")
PY
