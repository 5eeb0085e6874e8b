# tbd list and tbd run for the text workloads (seq2seq, transformer, gpt):
# each runs at tiny scale on synthetic and on real-format data; bad data
# exits 1 naming file and line; bad usage exits 2.
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --threads 1 --warmup 1)

# tbd list: domain, unit, default batch, full-scale parameter count.
expect_exit 0 "seq2seq +machine translation +target tokens +128 +26,935,808" -- list
expect_exit 0 "transformer +machine translation +target tokens +2048 +60,522,496" -- list
expect_exit 0 "gpt +language modelling +tokens +8 +124,439,808" -- list
expect_exit 0 "batch-size counts tokens" -- list transformer
expect_exit 0 "IWSLT'15 en-vi" -- list seq2seq

# A good tiny run of each, on synthetic data: a valid result with its unit.
for w in seq2seq transformer gpt; do
  out="$WORK/$w.json"
  expect_exit 0 "throughput" -- run "$w" "${tiny[@]}" --repeat 1 --iters 3 --out "$out"
  json_check "$out" "r['workload']['name'] == '$w' and len(r['iterations']) == 3 and r['partial'] is False"
  json_check "$out" 'r["throughput"]["samples_per_s"] > 0 and r["model"]["parameters"] > 0'
done
json_check "$WORK/seq2seq.json" 'r["throughput"]["unit"] == "target tokens/s"'
json_check "$WORK/transformer.json" 'r["throughput"]["unit"] == "target tokens/s"'
json_check "$WORK/gpt.json" 'r["throughput"]["unit"] == "tokens/s"'
# The batch counts what --batch-size counts: gpt sequences, seq2seq sentence pairs, transformer tokens.
expect_exit 0 "batch 2 sequences" -- run gpt "${tiny[@]}" --repeat 1 --iters 1 --batch-size 2
expect_exit 0 "batch 4 sentence pairs" -- run seq2seq "${tiny[@]}" --repeat 1 --iters 1 --batch-size 4
expect_exit 0 "batch 64 tokens" -- run transformer "${tiny[@]}" --repeat 1 --iters 1 --batch-size 64
json_check "$WORK/transformer.json" 'len(r["iteration_samples"]) == 3 and sum(r["iteration_samples"]) == r["throughput"]["samples"]'
json_check "$WORK/gpt.json" 'r["workload"]["configuration"]["model_flops"]["per_token"] > 0'
json_check "$WORK/seq2seq.json" '0 < r["workload"]["configuration"]["sentences_per_target_token"] < 1'

# Usage errors: exit 2.
expect_exit 2 "unknown setting 'heads' for transformer" -- run transformer --set heads=3
expect_exit 2 "bad value '2' for setting dropout of seq2seq" -- run seq2seq --set dropout=2
expect_exit 2 "no such folder" -- run seq2seq "${tiny[@]}" --data "$WORK/nodata"
expect_exit 2 "no such file or folder" -- run gpt "${tiny[@]}" --data "$WORK/nodata"

# Parallel text: a small en-vi corpus trains both translation workloads.
mkdir -p "$WORK/iwslt"
for i in $(seq 1 40); do echo "sentence number $i is here"; done > "$WORK/iwslt/train.en"
for i in $(seq 1 40); do echo "câu số $i ở đây nhé"; done > "$WORK/iwslt/train.vi"
expect_exit 0 "throughput" -- run seq2seq "${tiny[@]}" --repeat 1 --iters 3 --batch-size 8 --data "$WORK/iwslt" --out "$WORK/s.json"
json_check "$WORK/s.json" 'r["workload"]["configuration"]["data"].split(" -> ")[0].endswith("train.en")'
expect_exit 0 "throughput" -- run transformer "${tiny[@]}" --repeat 1 --iters 3 --batch-size 128 --data "$WORK/iwslt" --set reverse=true --out "$WORK/t.json"
json_check "$WORK/t.json" 'r["workload"]["configuration"]["data"].split(" -> ")[0].endswith("train.vi")'

# Length buckets (docs/workloads.md#length-buckets): warm-up (asked for 1
# iteration) goes on until it has run every batch shape the workload
# declares, so no timed iteration meets a new shape; on synthetic data (a
# pool) and on a corpus of varied sentence lengths (a shuffled stream).
mkdir -p "$WORK/varied"
for i in $(seq 1 60); do seq -s ' ' 1 $((i % 23 + 1)); done > "$WORK/varied/train.en"
for i in $(seq 1 60); do seq -s ' ' 1 $((i % 17 + 2)); done > "$WORK/varied/train.vi"
expect_exit 0 "throughput" -- run transformer "${tiny[@]}" --repeat 2 --iters 3 --batch-size 64 --data "$WORK/varied" --out "$WORK/tv.json"
for f in seq2seq transformer tv; do
  json_check "$WORK/$f.json" '(lambda b: b["declared"] >= 2 and len(b["warmup"]) == b["declared"] and set(b["timed"]) <= set(b["warmup"]) and b["timed_iterations_first_seen"] == 0 and not b["warmup_cap_reached"] and r["warmup"]["iterations"] >= b["declared"])(r["batch_shapes"])'
  json_check "$WORK/$f.json" 'r["warmup"]["ended_by"] == "shapes"'  # asked for 1 iteration, went on for the shapes
done
# Two ranks, each its own shard with its own shapes: they agree on how long to warm up.
expect_exit 0 "distributed +2 ranks" -- run transformer "${tiny[@]}" --nproc 2 --repeat 1 --iters 2 --batch-size 64 --data "$WORK/varied" --out "$WORK/tv2.json"
json_check "$WORK/tv2.json" 'r["batch_shapes"]["timed_iterations_first_seen"] == 0 and r["warmup"]["iterations"] >= r["batch_shapes"]["declared"]'
# Every length in the shapes is a multiple of the bucket (8); length_bucket=1 keeps exact lengths.
json_check "$WORK/tv.json" 'all(int(d) % 8 == 0 for k in r["batch_shapes"]["warmup"] for t in k.split() if "x" in t for d in t.split("x")[1:])'
expect_exit 0 "throughput" -- run transformer "${tiny[@]}" --repeat 1 --iters 3 --batch-size 64 --data "$WORK/varied" --set length_bucket=1 --out "$WORK/tv1.json"
json_check "$WORK/tv1.json" 'any(int(d) % 8 for k in r["batch_shapes"]["warmup"] for t in k.split() if "x" in t for d in t.split("x")[1:])'

# Corrupt parallel text: exit 1 naming the file and the line.
cp -r "$WORK/iwslt" "$WORK/short"
head -n 39 "$WORK/iwslt/train.vi" > "$WORK/short/train.vi"
expect_exit 1 "train.en has 40 lines but .*train.vi has 39; .*train.en:40 has no translation" -- run seq2seq "${tiny[@]}" --data "$WORK/short"
cp -r "$WORK/iwslt" "$WORK/badutf"
printf 'ok\n\xff\xfe bad\n' > "$WORK/badutf/train.en"
head -n 2 "$WORK/iwslt/train.vi" > "$WORK/badutf/train.vi"
expect_exit 1 "train.en:2: invalid UTF-8" -- run transformer "${tiny[@]}" --data "$WORK/badutf"

# Byte-level text for gpt.
for i in $(seq 1 30); do echo "plain text line $i for the byte-level language model"; done > "$WORK/book.txt"
expect_exit 0 "throughput" -- run gpt "${tiny[@]}" --repeat 1 --iters 3 --data "$WORK/book.txt" --out "$WORK/g.json"
json_check "$WORK/g.json" 'len(r["iterations"]) == 3'
printf 'line one\nline \xc3\n' > "$WORK/bad.txt"
expect_exit 1 "bad.txt:2: invalid UTF-8" -- run gpt "${tiny[@]}" --data "$WORK/bad.txt"
: > "$WORK/empty.txt"
expect_exit 1 "empty.txt: the file is empty" -- run gpt "${tiny[@]}" --data "$WORK/empty.txt"
# /dev/null exists: not "no such file", but what it is.
expect_exit 2 "/dev/null: not a regular file" -- run gpt "${tiny[@]}" --data /dev/null
out="$("$TBD" run gpt "${tiny[@]}" --data /dev/null 2>&1)"
echo "$out" | grep -q "no such file" && fail "gpt --data /dev/null says 'no such file': $out"
# Token files for gpt (llm.c shards, nanoGPT .bin), chosen by format over text.
# shard FILE MAGIC VERSION COUNT FMT IDS...: an llm.c shard (256 int32 header, then the ids).
shard() {
  python3 -c 'import struct, sys
f, magic, version, count, fmt = sys.argv[1], *map(int, sys.argv[2:5]), sys.argv[5]
ids = [int(x) for x in sys.argv[6:]]
h = [0] * 256; h[0], h[1], h[2] = magic, version, count
open(f, "wb").write(struct.pack("<256i", *h) + struct.pack("<%d%s" % (len(ids), fmt), *ids))' "$@"
}
ids=$(python3 -c 'print(*[(i * 37) % 511 for i in range(400)])')  # below tiny's vocabulary of 512
# shellcheck disable=SC2086
shard "$WORK/shard.bin" 20240520 1 400 H $ids
expect_exit 0 "throughput" -- run gpt "${tiny[@]}" --repeat 1 --iters 3 --data "$WORK/shard.bin" --out "$WORK/tok.json"
json_check "$WORK/tok.json" 'r["workload"]["configuration"]["data"].endswith("shard.bin (llm.c shard (version 1, uint16 tokens), 1 file, 400 tokens)")'
# Training on a token file learns: one 50-token sentence repeated (end-of-text 511 between copies).
# shellcheck disable=SC2046
shard "$WORK/learn.bin" 20240520 1 4080 H $(python3 -c 'print(*((list(range(0, 500, 10)) + [511]) * 80))')
expect_exit 0 "throughput" -- run gpt "${tiny[@]}" --repeat 1 --iters 60 --set dropout=0 --set lr=3e-3 \
  --data "$WORK/learn.bin" --out "$WORK/learn.json"
json_check "$WORK/learn.json" 'r["loss"]["last_measured"] < 0.5 * r["loss"]["first_measured"]'
# GPT-2's own ids (end-of-text 50256) do not fit the tiny model: exit 1 naming file, offset and vocabulary.
shard "$WORK/gpt2.bin" 20240520 1 40 H $(python3 -c 'print(*([50256] + list(range(39))))')
expect_exit 1 "gpt2.bin: byte offset 1024: token id 50256 is outside the model's vocabulary of 512 ids" -- \
  run gpt "${tiny[@]}" --data "$WORK/gpt2.bin"
# A truncated body, a wrong version, a file shorter than one window: exit 1 naming the offset.
# shellcheck disable=SC2086
shard "$WORK/trunc.bin" 20240520 1 500 H $ids
expect_exit 1 "trunc.bin: byte offset 1824: truncated body" -- run gpt "${tiny[@]}" --data "$WORK/trunc.bin"
shard "$WORK/v2.bin" 20240520 2 3 H 1 2 3
expect_exit 1 "v2.bin: byte offset 4: version 2 does not go with magic 20240520" -- run gpt "${tiny[@]}" --data "$WORK/v2.bin"
shard "$WORK/few.bin" 20240520 1 3 H 1 2 3
expect_exit 1 "few.bin: byte offset 1030: the data ends after 3 tokens" -- run gpt "${tiny[@]}" --data "$WORK/few.bin"
# nanoGPT's headerless train.bin in a folder beside val.bin: the train file is read.
mkdir -p "$WORK/nano"
python3 -c 'import struct; open("'"$WORK"'/nano/train.bin", "wb").write(struct.pack("<300H", *[(i * 7) % 500 for i in range(300)]))'
printf 'x' > "$WORK/nano/val.bin"  # odd-sized: reading it would fail
expect_exit 0 "throughput" -- run gpt "${tiny[@]}" --repeat 1 --iters 2 --data "$WORK/nano" --out "$WORK/nano.json"
json_check "$WORK/nano.json" '"nanoGPT .bin (uint16 tokens), 1 file, 300 tokens" in r["workload"]["configuration"]["data"]'
# An empty vocabulary file says it is the vocabulary that is empty.
cp -r "$WORK/iwslt" "$WORK/emptyvocab"
: > "$WORK/emptyvocab/vocab.vi"
expect_exit 1 "vocab.vi: the vocabulary file is empty; it must hold one token per line" -- \
  run seq2seq "${tiny[@]}" --data "$WORK/emptyvocab"

finish
