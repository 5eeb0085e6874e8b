"""Runs MLPerf's official compliance checker (mlperf-logging) on one log and
prints, as a JSON list, the rules it failed: the key each failed rule is
about, or "benchmark_rules" where the ruleset has no rules for the log's
benchmark (the checker itself stops there with an exception; the checks it
made up to then stand).

    python mlperf_check.py LOG RULESET [CONFIG]

With CONFIG (a path) the checker runs that configuration instead of the
ruleset's common.yaml, as `--config` does.
"""
import json
import logging
import re
import sys

from mlperf_logging.compliance_checker import mlp_compliance

log, ruleset = sys.argv[1], sys.argv[2]
config = sys.argv[3] if len(sys.argv) > 3 else f"training_{ruleset}/common.yaml"
logging.disable(logging.CRITICAL)
checker = mlp_compliance.make_checker("training", ruleset, False, False)
mlp_compliance.enqueued_configs.clear()
failed = set()
try:
    checker.check_file(log, config)
except FileNotFoundError:
    pass  # the benchmark's own rules file: recorded below from the checker's message
failed.update(checker.overwritable)
failed.update(checker.warnings)
for message in checker.not_overwritable:
    if message.startswith("Could not find config file"):
        failed.add("benchmark_rules")
    else:
        m = re.search(r"occurrence of '(\w+)'", message)
        failed.add(m.group(1) if m else message)
print(json.dumps(sorted(failed)))
