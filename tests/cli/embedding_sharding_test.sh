# --embedding-sharding from the command line: dlrm's tables placed across two
# ranks (table-wise, row-wise) train and record each rank's part; one rank
# runs the sharded path alone; the flag is refused with the reason where it
# cannot apply (exit 2).
source "$(dirname "$0")/lib.sh"
tiny=(--scale tiny --threads 1 --warmup 1 --repeat 1 --iters 2)

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

expect_exit 2 "places the embedding tables across data-parallel ranks, and this run has none: add --nproc" -- \
  run dlrm "${tiny[@]}" --embedding-sharding table
expect_exit 2 "ncf has no embedding tables to place across ranks" -- run ncf "${tiny[@]}" --nproc 2 --embedding-sharding table
expect_exit 2 "must be replicate, table or row, got 'diagonal'" -- run dlrm "${tiny[@]}" --nproc 2 --embedding-sharding diagonal
expect_exit 2 "or place them across ranks with --embedding-sharding table or row" -- \
  run dlrm "${tiny[@]}" --nproc 2 --sharding full

finish
