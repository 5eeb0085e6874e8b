# MLPerf DLRMv2's multi-hot days (day_N_dense.npy, day_N_labels.npy,
# day_N_sparse_multi_hot.npz), written by NumPy itself (np.save, np.savez;
# NumPy from PyPI), are read by dlrm's reader: a run trains on them with the
# files' multi-hot sizes, ZIP64 archives included; damaged or inconsistent
# days fail naming the file, the member and the sample (exit 1), missing
# files and models without a dataset name the fix (exit 2).
source "$(dirname "$0")/lib.sh"
quick=(--scale tiny --threads 1 --warmup 1 --repeat 1 --iters 3)
tiny=("${quick[@]}" --batch-size 4)

python="$(test_venv numpy numpy)" || { echo "FAIL: cannot install numpy" >&2; exit 1; }

# write_days DIR CASE: two days (5 and 4 samples) in the reference's layout,
# spoiled as CASE says.
write_days() {
  "$python" - "$1" "$2" <<'PY'
import os, sys, zipfile
import numpy as np
folder, case = sys.argv[1], sys.argv[2]
os.makedirs(folder, exist_ok=True)
sizes = [3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1]
rows = [40000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63, 40000000, 3067956, 405282, 10, 2209, 11938,
        155, 4, 976, 14, 40000000, 40000000, 40000000, 590152, 12973, 108, 36]
if case == "zip64":
    zipfile.ZIP64_LIMIT = 64  # NumPy's savez goes through zipfile: every record becomes ZIP64
rng = np.random.default_rng(5)
for day, n in [(0, 5), (1, 4)]:
    dense = np.log(rng.integers(0, 100, size=(n, 13)) + 3).astype(np.float32)
    labels = rng.integers(0, 2, size=(n, 1)).astype(np.int32)
    sparse = {f"{k}": rng.integers(0, min(r, 1000), size=(n, s)).astype(np.int32) for k, (r, s) in enumerate(zip(rows, sizes))}
    if day == 1 and case == "beyond":
        sparse["5"][2, 0] = 3          # feature 5's table has 3 rows
    if day == 1 and case == "empty":
        sparse["2"] = np.zeros((n, 0), np.int32)
    if day == 1 and case == "label":
        labels[3, 0] = 2
    if day == 1 and case == "rows":
        labels = labels[:3]
    np.save(f"{folder}/day_{day}_dense.npy", dense)
    if not (day == 1 and case == "nolabels"):
        np.save(f"{folder}/day_{day}_labels.npy", labels)
    save = np.savez_compressed if (day == 1 and case == "compressed") else np.savez
    save(f"{folder}/day_{day}_sparse_multi_hot.npz", **{f"{k}": v for k, v in sparse.items()})
    if day == 1 and case == "truncated":
        path = f"{folder}/day_{day}_sparse_multi_hot.npz"
        data = open(path, "rb").read()
        open(path, "wb").write(data[: len(data) // 2])
PY
}

for c in good zip64 beyond empty label rows nolabels compressed truncated; do
  write_days "$WORK/$c" "$c" || fail "NumPy could not write the $c days"
done

expect_exit 0 "throughput" -- run dlrm "${tiny[@]}" --set config=dcnv2 --data "$WORK/good" --out "$WORK/good.json"
json_check "$WORK/good.json" 'r["workload"]["configuration"]["lookups_per_table"][20] == 100 and sum(r["workload"]["configuration"]["lookups_per_table"]) == 214'
json_check "$WORK/good.json" 'r["workload"]["configuration"]["optimizer"] == "adagrad" and r["workload"]["settings"]["lr"] == "0.005"'
expect_exit 0 "throughput" -- run dlrm "${tiny[@]}" --set config=dcnv2 --data "$WORK/zip64"
# Two ranks read disjoint batches of the same stream.
expect_exit 0 "throughput" -- run dlrm "${quick[@]}" --set config=dcnv2 --data "$WORK/good" --nproc 2 --batch-size 2

expect_exit 1 "day_1_sparse_multi_hot.npz member 5.npy, sample 2: id 3 is outside feature 5's table of 3 rows" -- \
  run dlrm "${tiny[@]}" --set config=dcnv2 --data "$WORK/beyond" --out "$WORK/beyond.json"
[ -e "$WORK/beyond.json" ] && fail "a failed run left a result file"
expect_exit 1 "day_1_sparse_multi_hot.npz member 2.npy: bags of 0 ids" -- run dlrm "${tiny[@]}" --set config=dcnv2 --data "$WORK/empty"
expect_exit 1 "day_1_labels.npy, sample 3: a label other than 0 or 1" -- run dlrm "${tiny[@]}" --set config=dcnv2 --data "$WORK/label"
expect_exit 1 "day_1_labels.npy: expected 4 labels" -- run dlrm "${tiny[@]}" --set config=dcnv2 --data "$WORK/rows"
expect_exit 2 "day_1_labels.npy is missing" -- run dlrm "${tiny[@]}" --set config=dcnv2 --data "$WORK/nolabels"
expect_exit 1 "is compressed \(np.savez_compressed\).*np.savez" -- run dlrm "${tiny[@]}" --set config=dcnv2 --data "$WORK/compressed"
expect_exit 1 "day_1_sparse_multi_hot.npz: (not a NumPy .npz file|damaged .npz archive)" -- \
  run dlrm "${tiny[@]}" --set config=dcnv2 --data "$WORK/truncated"
# The RM classes have no dataset; an empty folder names the files it wanted.
expect_exit 2 "DeepRecSys defines its RM classes on synthetic lookups only" -- run dlrm "${tiny[@]}" --set config=rm1 --data "$WORK/good"
mkdir -p "$WORK/empty_folder"
expect_exit 2 "is a folder without MLPerf DLRMv2's multi-hot days" -- run dlrm "${tiny[@]}" --set config=dcnv2 --data "$WORK/empty_folder"

finish
