# --embedding-sharding from the command line: dlrm's tables placed across two
# ranks (table-wise, row-wise) train and record each rank's part; one rank
# runs the sharded path alone; the flag is refused with the reason where it
# cannot apply (exit 2).
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --threads 1 --warmup 1 --repeat 1 --iters 2)
small=(--scale small --threads 1 --warmup 1 --repeat 1 --iters 2)

for placement in table row; do
  expect_exit 0 "throughput .* across 2 ranks" -- \
    run dlrm "${tiny[@]}" --set config=dcnv2 --nproc 2 --embedding-sharding "$placement" --probes time,memory \
    --out "$WORK/$placement.json"
  json_check "$WORK/$placement.json" "r['workload']['options']['embedding_sharding'] == '$placement'"
  # Rank 0 holds part of the tables: half the rows (row-wise), or the tables placed on it.
  json_check "$WORK/$placement.json" '0 < r["workload"]["configuration"]["embedding_sharding"]["embedding_parameters_held"] < r["workload"]["configuration"]["embedding_parameters"]'
done
# Row-wise rank 0 of 2 holds rows [0, rows/2) of every table; table-wise, whole tables or none.
json_check "$WORK/row.json" 'all((f, e) == (0, t // 2) for (f, e), t in zip(r["workload"]["configuration"]["embedding_sharding"]["rows_held"], r["workload"]["configuration"]["table_sizes"]))'
json_check "$WORK/table.json" 'all(e - f in (0, t) for (f, e), t in zip(r["workload"]["configuration"]["embedding_sharding"]["rows_held"], r["workload"]["configuration"]["table_sizes"]))'

# One rank: every table on it, through the same all-to-all path.
expect_exit 0 "throughput" -- run dlrm "${tiny[@]}" --nproc 1 --embedding-sharding row --out "$WORK/one.json"
json_check "$WORK/one.json" 'r["workload"]["configuration"]["embedding_sharding"]["embedding_parameters_held"] == r["workload"]["configuration"]["embedding_parameters"]'

# The comm probe times the all-to-alls. Row-wise, each rank sends every
# rank its bags and every rank's pooled rows back: with N ranks, T tables,
# B samples per rank, one id per bag (kaggle) and dimension d (tiny: 8),
# N·T·B lengths and N·T·B ids (int64) and N·T·B·d floats forward, the same
# floats back: 16·N·T·B + 8·N·T·B·d bytes per iteration, in 4 exchanges.
expect_exit 0 "all-to-all .* per iteration .* all exposed" -- \
  run dlrm "${tiny[@]}" --batch-size 16 --nproc 2 --embedding-sharding row --probes time,comm --out "$WORK/comm.json"
json_check "$WORK/comm.json" 'r["comm"]["all_to_all"]["per_iteration"] == 4'
json_check "$WORK/comm.json" 'r["comm"]["all_to_all"]["bytes_per_iteration"] == 16 * 2 * 26 * 16 + 8 * 2 * 26 * 16 * 8'
json_check "$WORK/comm.json" '0 < r["comm"]["all_to_all"]["exposed_wait_s_mean"] == r["comm"]["all_to_all"]["s_mean"] < r["summary"]["mean_s"]'
json_check "$WORK/comm.json" 'r["comm"]["all_to_all"]["bus_bandwidth_bytes_per_s"] > 0'

# --memory-limit: rm1's small tables (8 x 100,000 rows x 32, fp32: 97.7 MiB)
# replicated exceed 64 MiB and are refused before any is allocated, naming
# where they fit; split by rows over two ranks they fit, and the run records
# its limit and that its peak stayed within it.
expect_exit 2 "the embedding tables replicated need .* \(fp32 weights\) on each rank, over --memory-limit 64.0 MiB; place them across ranks: --nproc 2 --embedding-sharding row" -- \
  run dlrm "${small[@]}" --set config=rm1 --batch-size 16 --memory-limit 64M
expect_exit 0 "limit +peak .* within --memory-limit 64.0 MiB" -- \
  run dlrm "${small[@]}" --set config=rm1 --batch-size 16 --nproc 2 --embedding-sharding row \
  --memory-limit 64M --probes time,memory --out "$WORK/limit.json"
json_check "$WORK/limit.json" 'r["memory"]["limit_bytes"] == 64 * 2**20 and r["memory"]["within_limit"]'
json_check "$WORK/limit.json" 'r["workload"]["options"]["memory_limit_bytes"] == 64 * 2**20'
# dcnv2's Adagrad keeps an accumulator per table element: twice the bytes.
expect_exit 2 "fp32 weights and Adagrad's accumulators\) on each rank, over --memory-limit" -- \
  run dlrm "${small[@]}" --set config=dcnv2 --batch-size 16 --memory-limit 512M
expect_exit 2 "--memory-limit takes a size such as 512M" -- run dlrm "${tiny[@]}" --memory-limit lots

expect_exit 2 "places the embedding tables across data-parallel ranks, and this run has none: add --nproc" -- \
  run dlrm "${tiny[@]}" --embedding-sharding table
expect_exit 2 "ncf has no embedding tables to place across ranks" -- run ncf "${tiny[@]}" --nproc 2 --embedding-sharding table
expect_exit 2 "must be replicate, table or row, got 'diagonal'" -- run dlrm "${tiny[@]}" --nproc 2 --embedding-sharding diagonal
expect_exit 2 "or place them across ranks with --embedding-sharding table or row" -- \
  run dlrm "${tiny[@]}" --nproc 2 --sharding full

finish
