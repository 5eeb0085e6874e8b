#include <algorithm>

#include "tbd/core/error.h"
#include "tbd/measure/probes/comm_probe.h"
#include "tbd/measure/probes/cpu_probe.h"
#include "tbd/measure/probes/data_probe.h"
#include "tbd/measure/probes/energy_probe.h"
#include "tbd/measure/probes/flops_probe.h"
#include "tbd/measure/probes/gpu_probe.h"
#include "tbd/measure/probes/gradient_probe.h"
#include "tbd/measure/probes/memory_probe.h"
#include "tbd/measure/probes/ops_probe.h"
#include "tbd/measure/probes/probe.h"
#include "tbd/measure/probes/roofline_probe.h"
#include "tbd/measure/probes/time_probe.h"

namespace tbd {

std::vector<std::string> probe_names() {
  return {"time", "data", "cpu", "flops", "memory", "ops", "roofline", "gradients", "gpu", "energy", "comm"};
}

std::vector<std::string> default_probes() { return {"time", "data", "cpu", "flops", "memory", "gradients"}; }

std::unique_ptr<Probe> make_probe(const std::string& name) {
  if (name == "time") return std::make_unique<TimeProbe>();
  if (name == "data") return std::make_unique<DataProbe>();
  if (name == "cpu") return std::make_unique<CpuProbe>();
  if (name == "flops") return std::make_unique<FlopsProbe>();
  if (name == "memory") return std::make_unique<MemoryProbe>();
  if (name == "ops") return std::make_unique<OpsProbe>();
  if (name == "roofline") return std::make_unique<RooflineProbe>();
  if (name == "gradients") return std::make_unique<GradientProbe>();
  if (name == "gpu") return std::make_unique<GpuProbe>();
  if (name == "energy") return std::make_unique<EnergyProbe>();
  if (name == "comm") return std::make_unique<CommProbe>();
  std::string known;
  for (const auto& n : probe_names()) known += (known.empty() ? "" : ", ") + n;
  throw UsageError("unknown probe '" + name + "'; known probes: " + known);
}

std::vector<std::unique_ptr<Probe>> make_probes(const std::vector<std::string>& requested, bool distributed) {
  std::vector<std::string> names = {"time"};
  for (const auto& n : requested)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  if (distributed && std::find(names.begin(), names.end(), "comm") == names.end()) names.push_back("comm");
  std::vector<std::unique_ptr<Probe>> probes;
  for (const auto& n : names) probes.push_back(make_probe(n));
  return probes;
}

}  // namespace tbd
