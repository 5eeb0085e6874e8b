// The figures LLM pre-training runs are compared by (torchtitan, llm.c,
// MLPerf): tokens per second per device and model FLOPs utilisation,
// MFU = model FLOPs per token × tokens/s ÷ peak FLOP/s, against the measured
// and the datasheet peak of the run's precision (docs/metrics.md#mfu).
//
// A token workload opts in by recording `model_flops.per_token` in its
// configuration (gpt, llama); MFU needs no instrumented iteration, so it is
// there whichever probes ran.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace tbd {

// The result's "mfu" section from its workload configuration and throughput
// (this rank's tokens/s: one rank drives one device) and `peaks` (the
// {measured, datasheet} pair peaks_for_run gives); nullopt when the workload
// records no model FLOPs per token or no timed iteration completed.
std::optional<nlohmann::json> model_flops_utilisation(const nlohmann::json& result, const nlohmann::json& peaks,
                                                      const std::string& dtype);

// One summary line: tokens/s per device and MFU against each peak, or why not.
std::string mfu_summary(const nlohmann::json& section);

}  // namespace tbd
