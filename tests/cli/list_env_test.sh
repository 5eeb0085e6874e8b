# tbd list / env / help: the tables a new user sees first.
source "$(dirname "$0")/lib.sh"

expect_exit 0 "resnet50 +image classification +images +32 +25,557,032" -- list
"$TBD" list --json > "$WORK/list.json" || fail "list --json failed"
json_check "$WORK/list.json" '[w["parameters"] for w in r if w["name"] == "resnet50"] == [25557032]'
expect_exit 0 "depth +default 50" -- list resnet50
expect_exit 2 "unknown workload 'nosuch'" -- list nosuch
expect_exit 0 "libtorch +2\." -- env
"$TBD" env --json > "$WORK/env.json" || fail "env --json failed"
json_check "$WORK/env.json" 'r["cpu"]["logical_cores"] >= 1 and r["libtorch"]["version"].startswith("2.")'
expect_exit 0 "Examples" -- --help
expect_exit 0 "--batch-size" -- run --help
expect_exit 2 "" --
expect_exit 2 "nosuch" -- nosuch

finish
