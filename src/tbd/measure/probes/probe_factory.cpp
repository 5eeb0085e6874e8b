#include <algorithm>
#include <typeinfo>

#include "tbd/core/error.h"
#include "tbd/measure/probes/comm_probe.h"
#include "tbd/measure/probes/cpu_probe.h"
#include "tbd/measure/probes/data_probe.h"
#include "tbd/measure/probes/energy_probe.h"
#include "tbd/measure/probes/flops_probe.h"
#include "tbd/measure/probes/gpu_probe.h"
#include "tbd/measure/probes/gradient_probe.h"
#include "tbd/measure/probes/layers_probe.h"
#include "tbd/measure/probes/memory_probe.h"
#include "tbd/measure/probes/ops_probe.h"
#include "tbd/measure/probes/probe.h"
#include "tbd/measure/probes/roofline_probe.h"
#include "tbd/measure/probes/time_probe.h"

namespace tbd {

template <class P>
ProbeEntry row(const char* name, ProbeKind kind) {
  return {name, kind, typeid(P), [] { return std::unique_ptr<Probe>(std::make_unique<P>()); }};
}

const std::vector<ProbeEntry>& probe_table() {
  using K = ProbeKind;
  static const std::vector<ProbeEntry> table = {
      row<TimeProbe>("time", K::timed),
      row<DataProbe>("data", K::timed),
      row<CpuProbe>("cpu", K::timed),
      row<FlopsProbe>("flops", K::analysis),
      row<MemoryProbe>("memory", K::analysis),
      row<OpsProbe>("ops", K::analysis),
      row<RooflineProbe>("roofline", K::analysis),
      row<GradientProbe>("gradients", K::analysis),
      row<LayersProbe>("layers", K::analysis),
      row<GpuProbe>("gpu", K::timed),
      row<EnergyProbe>("energy", K::timed),
      row<CommProbe>("comm", K::timed),
  };
  return table;
}

namespace {

const ProbeEntry& row_of(const Probe& probe) {
  for (const auto& e : probe_table())
    if (e.type == typeid(probe)) return e;
  throw Error(std::string("probe class ") + typeid(probe).name() + " has no row in the probe table");
}

}  // namespace

std::string Probe::name() const { return row_of(*this).name; }
ProbeKind Probe::kind() const { return row_of(*this).kind; }

std::vector<std::string> probe_names() {
  std::vector<std::string> names;
  for (const auto& e : probe_table()) names.push_back(e.name);
  return names;
}

std::vector<std::string> default_probes() { return {"time", "data", "cpu", "flops", "memory", "gradients"}; }

std::unique_ptr<Probe> make_probe(const std::string& name) {
  for (const auto& e : probe_table())
    if (name == e.name) return e.make();
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
