# MLPerf logs that MLPerf's own compliance checker (mlperf-logging, from PyPI)
# accepts (issue 16, part 3): for every workload, one run's --mllog passes
# with the configuration shipped in docs/mlperf/, and the official training
# 0.7.0 rules fail it only where tbd cannot comply: no evaluation reaching a
# quality target (eval_accuracy), and, for workloads MLPerf never ran, the
# benchmark name and the benchmark's own rules. Newer rounds (6.1.0) have
# none of these benchmarks; their common keys must pass as well.
source "$(dirname "$0")/lib.sh"

python="$(test_venv mlperf_logging mlperf-logging)" || { echo "FAIL: cannot install mlperf-logging" >&2; exit 1; }
here="$(cd "$(dirname "$0")" && pwd)"
config="$here/../../docs/mlperf/tbd_training.yaml"
# In $WORK: the checker writes compliance_checker.log into the current folder.
check() { (cd "$WORK" && "$python" "$here/mlperf_check.py" "$@"); }

quick=(--scale tiny --threads 1 --warmup 1 --iters 2 --repeat 2 --quiet)
for w in resnet50 inception3 seq2seq transformer faster_rcnn deepspeech2 wgan a3c ncf dlrm gpt; do
  batch=()
  case "$w" in resnet50 | inception3 | wgan) batch=(--batch-size 2) ;; esac
  "$TBD" run "$w" "${quick[@]}" "${batch[@]}" --mllog "$WORK/$w.mllog" --out "$WORK/$w.json" ||
    { fail "$w: the run exited $?"; continue; }
  case "$w" in
    resnet50 | seq2seq | transformer | dlrm) official='["eval_accuracy"]' ;;  # MLPerf ran this model
    *) official='["benchmark_rules", "eval_accuracy", "submission_benchmark"]' ;;
  esac
  got="$(check "$WORK/$w.mllog" 0.7.0 "$config")"
  [ "$got" = "[]" ] || fail "$w: the shipped configuration failed $got"
  got="$(check "$WORK/$w.mllog" 0.7.0)"
  [ "$got" = "$official" ] || fail "$w: the official 0.7.0 rules failed $got, expected $official"
done
got="$(check "$WORK/resnet50.mllog" 6.1.0)"
[ "$got" = '["benchmark_rules", "eval_accuracy", "submission_benchmark"]' ] ||
  fail "resnet50: the 6.1.0 rules failed $got, beyond the benchmark and evaluation"

# The official command line, as users run it.
(cd "$WORK" && "$python" -m mlperf_logging.compliance_checker --usage training --config "$config" gpt.mllog 2>&1) |
  grep -q "SUCCESS" || fail "python -m mlperf_logging.compliance_checker --config did not print SUCCESS"

# A data-parallel run logs once (rank 0), with the global batch of both ranks.
"$TBD" run ncf "${quick[@]}" --nproc 2 --batch-size 64 --mllog "$WORK/dp.mllog" || fail "the 2-rank run exited $?"
[ "$(grep -c '"key": "run_start"' "$WORK/dp.mllog")" -eq 1 ] || fail "a 2-rank run logged run_start other than once"
grep -q '"key": "global_batch_size", "value": 128' "$WORK/dp.mllog" || fail "the 2-rank log's global batch is not 2 x 64"
grep -q '"key": "micro_batch_size", "value": 64' "$WORK/dp.mllog" || fail "the 2-rank log's micro batch is not 64"
got="$(check "$WORK/dp.mllog" 0.7.0 "$config")"
[ "$got" = "[]" ] || fail "the 2-rank log failed the shipped configuration: $got"

# The checks bite: a log whose second block never closes fails.
awk '!/"block_stop"/ || ++n != 2' "$WORK/resnet50.mllog" > "$WORK/unclosed.mllog"
got="$(check "$WORK/unclosed.mllog" 0.7.0 "$config")"
[ "$got" != "[]" ] || fail "a log with an unclosed block passed the shipped configuration"

finish
