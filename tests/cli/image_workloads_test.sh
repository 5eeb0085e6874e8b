# tbd list and tbd run for inception3 and wgan: tiny runs on synthetic data
# and on an image folder, a corrupt JPEG exits 1 naming the file, bad usage
# exits 2, and wgan runs data-parallel.
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --batch-size 2 --threads 1 --warmup 1)

# tbd list: domain, unit, default batch, full-scale parameter count.
expect_exit 0 "inception3 +image classification +images +32 +27,161,264" -- list
expect_exit 0 "wgan +adversarial learning +images +64 +16,032,324" -- list

# A good tiny run of each on synthetic data: a valid result in images/s.
for w in inception3 wgan; do
  out="$WORK/$w.json"
  expect_exit 0 "throughput" -- run "$w" "${tiny[@]}" --repeat 1 --iters 3 --out "$out"
  json_check "$out" "r['workload']['name'] == '$w' and len(r['iterations']) == 3 and r['partial'] is False"
  json_check "$out" 'r["throughput"]["samples_per_s"] > 0 and r["throughput"]["unit"] == "images/s"'
  json_check "$out" 'r["model"]["parameters"] > 0 and r["model"]["trainable_parameters"] == r["model"]["parameters"]'
done
json_check "$WORK/inception3.json" 'r["workload"]["configuration"]["image_size"] == 299'
json_check "$WORK/wgan.json" 'r["workload"]["configuration"]["real_images_per_iteration"] == 10'

# An image folder (two classes of a small JPEG, 20×16 pixels).
mkdir -p "$WORK/images/cat" "$WORK/images/dog"
base64 -d > "$WORK/image.jpg" <<'JPEG'
/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0a
HBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/2wBDAQkJCQwLDBgNDRgyIRwhMjIyMjIy
MjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjL/wAARCAAQABQDASIA
AhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQA
AAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3
ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWm
p6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEA
AwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSEx
BhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElK
U1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3
uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwDzOz0P
p8tb9nofT5a6yz0Pp8lb9nofT5K8jE5r5mOS53tqcdFofyD5aK9Li0P5B8lFeU8113Pv4Z37q1P/
2Q==
JPEG
for i in 0 1 2; do cp "$WORK/image.jpg" "$WORK/images/cat/$i.jpg"; cp "$WORK/image.jpg" "$WORK/images/dog/$i.jpg"; done
for w in inception3 wgan; do
  out="$WORK/$w-folder.json"
  expect_exit 0 "throughput" -- run "$w" "${tiny[@]}" --repeat 1 --iters 3 --data "$WORK/images" --out "$out"
  json_check "$out" "len(r['iterations']) == 3 and r['partial'] is False"
done
json_check "$WORK/inception3-folder.json" 'r["workload"]["configuration"]["classes"] == 2'

# A truncated JPEG in the folder: exit 1 naming the file, no result file.
head -c 300 "$WORK/image.jpg" > "$WORK/images/dog/cut.jpg"
for w in inception3 wgan; do
  expect_exit 1 "cut.jpg" -- run "$w" "${tiny[@]}" --repeat 1 --iters 20 --data "$WORK/images" --out "$WORK/$w-bad.json"
  [ ! -e "$WORK/$w-bad.json" ] || fail "$w: a failed run left a result file"
done

# An empty class folder would count as a class: refused, naming the folder (exit 2, a layout mistake).
rm "$WORK/images/dog/cut.jpg"
mkdir "$WORK/images/bird"
expect_exit 2 "class folder .*images/bird holds no .jpg/.jpeg files; every sub-folder counts as a class" -- \
  run inception3 "${tiny[@]}" --repeat 1 --iters 3 --data "$WORK/images"
rmdir "$WORK/images/bird"
# A loop of symbolic links: a tbd error naming the path, not a filesystem exception.
ln -s "$WORK/images/cat/loop.jpg" "$WORK/images/cat/loop.jpg"
expect_exit 1 "tbd: error: .*images/cat/loop.jpg: a loop of symbolic links" -- \
  run inception3 "${tiny[@]}" --repeat 1 --iters 3 --data "$WORK/images"
rm "$WORK/images/cat/loop.jpg"

# Bad usage: exit 2 naming the setting.
expect_exit 2 "bad value 'maybe' for setting aux" -- run inception3 --set aux=maybe
expect_exit 2 "bad value '0' for setting critic_iters" -- run wgan --set critic_iters=0
expect_exit 2 "unknown setting 'depth'" -- run wgan --set depth=50

# wgan data-parallel: every critic and generator update all-reduces (both
# networks' gradients each time; the idle network's slots are zeros).
expect_exit 0 "distributed +2 ranks" -- run wgan "${tiny[@]}" --nproc 2 --repeat 1 --iters 2 --out "$WORK/wgan-dp.json"
json_check "$WORK/wgan-dp.json" 'r["distributed"]["world_size"] == 2 and len(r["iterations"]) == 2'

finish
