# faster_rcnn from the command line: listed with its count, a tiny run writes
# a valid result (also data-parallel), bad settings are usage errors.
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --threads 1 --warmup 1)

expect_exit 0 "faster_rcnn +object detection +images +2 +60,336,440" -- list
expect_exit 0 "backbone" -- list faster_rcnn

expect_exit 0 "throughput" -- run faster_rcnn "${tiny[@]}" --repeat 1 --iters 3 --out "$WORK/frcnn.json"
json_check "$WORK/frcnn.json" "r['workload']['name'] == 'faster_rcnn' and len(r['iterations']) == 3 and r['partial'] is False"
json_check "$WORK/frcnn.json" 'r["throughput"]["unit"] == "images/s" and r["throughput"]["samples_per_s"] > 0'
json_check "$WORK/frcnn.json" '0 < r["model"]["trainable_parameters"] < r["model"]["parameters"]'
json_check "$WORK/frcnn.json" 'r["workload"]["configuration"]["classes"] == 21 and r["workload"]["configuration"]["backbone"] == "resnet101"'

expect_exit 0 "throughput" -- run faster_rcnn "${tiny[@]}" --repeat 1 --iters 2 --set backbone=resnet50 --out "$WORK/r50.json"
json_check "$WORK/r50.json" 'r["workload"]["configuration"]["backbone"] == "resnet50"'
expect_exit 2 "backbone" -- run faster_rcnn "${tiny[@]}" --repeat 1 --iters 1 --set backbone=vgg

# Pascal VOC folders: a missing layout is a usage error, a malformed
# annotation stops the run naming the file, before any result is written.
# (A successful VOC run, with JPEGs, is in faster_rcnn_test.cpp.)
expect_exit 2 "no such folder" -- run faster_rcnn "${tiny[@]}" --repeat 1 --iters 1 --data "$WORK/none"
mkdir -p "$WORK/voc/JPEGImages" "$WORK/voc/Annotations" "$WORK/voc/ImageSets/Main"
echo "000001" > "$WORK/voc/ImageSets/Main/trainval.txt"
echo "not a jpeg" > "$WORK/voc/JPEGImages/000001.jpg"
echo "<annotation><size><width>5" > "$WORK/voc/Annotations/000001.xml"
expect_exit 1 "000001.xml" -- run faster_rcnn "${tiny[@]}" --repeat 1 --iters 1 --data "$WORK/voc" --out "$WORK/voc.json"
[ ! -e "$WORK/voc.json" ] || fail "a failed run left a result file"

# Two data-parallel ranks: the frozen stem and layer1 get no gradients, the reducer copes.
expect_exit 0 "distributed +2 ranks" -- run faster_rcnn "${tiny[@]}" --nproc 2 --repeat 1 --iters 2 --out "$WORK/dp.json"
json_check "$WORK/dp.json" 'r["distributed"]["world_size"] == 2 and len(r["iterations"]) == 2'

finish
