# deepspeech2, ncf, dlrm from the command line: listed with their counts, a
# tiny run of each writes a valid result, real-data formats are read, and bad
# data or settings fail clearly (exit 1 naming file and line, exit 2 for usage).
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --threads 1 --warmup 1 --repeat 1 --iters 3)

expect_exit 0 "deepspeech2 +speech recognition +utterances +8 +255,942,208" -- list
expect_exit 0 "ncf +recommendation +samples +2048 +31,832,577" -- list
expect_exit 0 "dlrm +recommendation +samples +128 +540,677,217" -- list
expect_exit 0 "max_rows" -- list dlrm

for w in deepspeech2 ncf dlrm; do
  expect_exit 0 "throughput" -- run "$w" "${tiny[@]}" --batch-size 4 --out "$WORK/$w.json"
  json_check "$WORK/$w.json" "r['workload']['name'] == '$w' and len(r['iterations']) == 3 and r['partial'] is False"
  json_check "$WORK/$w.json" 'r["model"]["parameters"] > 0 and r["throughput"]["samples_per_s"] > 0'
done
json_check "$WORK/deepspeech2.json" 'r["throughput"]["unit"] == "utterances/s"'
json_check "$WORK/deepspeech2.json" '0.2 <= r["workload"]["configuration"]["audio_seconds_per_utterance"] <= 0.5'
json_check "$WORK/ncf.json" 'r["throughput"]["unit"] == "samples/s" and r["workload"]["configuration"]["negatives"] == 4'

# max_rows is recorded in the result.
expect_exit 0 "throughput" -- run dlrm "${tiny[@]}" --set max_rows=20 --out "$WORK/capped.json"
json_check "$WORK/capped.json" 'r["workload"]["configuration"]["max_rows"] == 20 and r["workload"]["settings"]["max_rows"] == "20"'
json_check "$WORK/capped.json" 'max(r["workload"]["configuration"]["table_sizes"]) == 20'
expect_exit 2 "max_rows" -- run dlrm "${tiny[@]}" --set max_rows=-3
expect_exit 2 "negatives" -- run ncf "${tiny[@]}" --set negatives=x

# MovieLens ratings CSV.
printf 'userId,movieId,rating,timestamp\n1,31,2.5,1260759144\n1,1029,3.0,1260759179\n2,31,4,1260759182\n' > "$WORK/ratings.csv"
expect_exit 0 "throughput" -- run ncf "${tiny[@]}" --data "$WORK/ratings.csv" --out "$WORK/ml.json"
json_check "$WORK/ml.json" 'r["workload"]["configuration"]["users"] == 2 and r["workload"]["configuration"]["items"] == 2'
printf '1,31,2.5,1260759144\n1;1029;3.0;1260759179\n' > "$WORK/bad.csv"
expect_exit 1 "bad.csv:2: expected 4 comma-separated fields" -- run ncf "${tiny[@]}" --data "$WORK/bad.csv"
expect_exit 2 "no such file" -- run ncf "${tiny[@]}" --data "$WORK/none.csv"
# Columns in another order than MovieLens's: refused naming the expected header.
printf 'movieId,userId,rating,timestamp\n31,1,2.5,1260759144\n' > "$WORK/swapped.csv"
expect_exit 1 "swapped.csv:1: header 'movieId,userId,rating,timestamp' is not the MovieLens ratings header userId,movieId,rating,timestamp" -- \
  run ncf "${tiny[@]}" --data "$WORK/swapped.csv"
# A folder is named as one, with the file it should have been.
mkdir -p "$WORK/ml-20m" && cp "$WORK/ratings.csv" "$WORK/ml-20m/ratings.csv"
expect_exit 2 "ml-20m is a folder; ncf reads one MovieLens ratings file .*give --data .*ml-20m/ratings.csv" -- \
  run ncf "${tiny[@]}" --data "$WORK/ml-20m"

# Criteo TSV: empty fields are allowed, a malformed line stops the run.
python3 - "$WORK" <<'PY'
import sys
w = sys.argv[1]
good = ["1"] + [str(i) for i in range(12)] + [""] + ["68fd1e64"] * 25 + [""]
with open(w + "/day.tsv", "w") as f:
    for i in range(6):
        f.write("\t".join(good) + "\n")
with open(w + "/bad.tsv", "w") as f:
    f.write("\t".join(good) + "\n")
    f.write("\t".join(good[:-1] + ["zz-top"]) + "\n")
PY
expect_exit 0 "throughput" -- run dlrm "${tiny[@]}" --batch-size 4 --data "$WORK/day.tsv"
expect_exit 1 "bad.tsv:2: categorical feature 26 is 'zz-top', not a hex id" -- \
  run dlrm "${tiny[@]}" --batch-size 2 --data "$WORK/bad.tsv" --out "$WORK/bad.json"
[ ! -e "$WORK/bad.json" ] || fail "a failed run left a result file"

# A LibriSpeech-style folder of WAV files (written with Python's wave module).
python3 - "$WORK" <<'PY'
import math, os, struct, sys, wave
w = sys.argv[1]
def tone(path, rate, seconds):
    with wave.open(path, "wb") as f:
        f.setnchannels(1); f.setsampwidth(2); f.setframerate(rate)
        n = int(rate * seconds)
        f.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * 300 * i / rate))) for i in range(n)))
d = w + "/speech/1/2"
os.makedirs(d)
tone(d + "/1-2-0000.wav", 16000, 0.4)
tone(d + "/1-2-0001.wav", 16000, 0.3)
open(d + "/1-2.trans.txt", "w").write("1-2-0000 HELLO WORLD\n1-2-0001 GOOD BYE\n")
d = w + "/phone/1/2"
os.makedirs(d)
tone(d + "/1-2-0000.wav", 8000, 0.4)
open(d + "/1-2.trans.txt", "w").write("1-2-0000 HELLO\n")
PY
if "$TBD" run deepspeech2 "${tiny[@]}" --batch-size 2 --data "$WORK/speech" 2>&1 | grep -q "without libsndfile"; then
  echo "built without libsndfile: skipping the audio folder checks"
  finish
  exit 0
fi
expect_exit 0 "throughput" -- run deepspeech2 "${tiny[@]}" --batch-size 2 --data "$WORK/speech" --out "$WORK/speech.json"
json_check "$WORK/speech.json" 'abs(r["workload"]["configuration"]["audio_seconds_per_utterance"] - 0.35) < 1e-9'
expect_exit 1 "1-2-0000.wav: sample rate 8000 Hz, but 16000 Hz is needed" -- \
  run deepspeech2 "${tiny[@]}" --batch-size 1 --data "$WORK/phone"
# A WAV cut short (its data chunk runs past the end of the file): exit 1 naming it, no result.
cp -r "$WORK/speech" "$WORK/cut"
truncate -s -2000 "$WORK/cut/1/2/1-2-0001.wav"
expect_exit 1 "1-2-0001.wav: truncated WAV: its data chunk declares 9600 bytes but the file ends after 7600" -- \
  run deepspeech2 "${tiny[@]}" --batch-size 2 --data "$WORK/cut" --out "$WORK/cut.json"
[ ! -e "$WORK/cut.json" ] || fail "a run on a truncated WAV left a result file"
# An empty FLAC says it is empty, not "(No Error.)".
cp -r "$WORK/speech" "$WORK/emptyflac"
rm "$WORK/emptyflac/1/2/1-2-0001.wav" && : > "$WORK/emptyflac/1/2/1-2-0001.flac"
expect_exit 1 "1-2-0001.flac: the file is empty \(0 bytes\)" -- run deepspeech2 "${tiny[@]}" --batch-size 2 --data "$WORK/emptyflac"
out="$("$TBD" run deepspeech2 "${tiny[@]}" --batch-size 2 --data "$WORK/emptyflac" 2>&1)"
echo "$out" | grep -q "No Error" && fail "empty FLAC still says No Error: $out"
printf '1-2-0000 HELLO 4EVER\n' > "$WORK/speech/1/2/1-2.trans.txt"
expect_exit 1 "1-2.trans.txt:1: character '4'" -- run deepspeech2 "${tiny[@]}" --data "$WORK/speech"

finish
