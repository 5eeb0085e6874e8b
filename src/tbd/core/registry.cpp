#include "tbd/core/registry.h"

#include "tbd/core/error.h"

namespace tbd {

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (const auto& e : workload_registry()) names.push_back(e.name);
  return names;
}

std::unique_ptr<Workload> create_workload(const std::string& name) {
  for (const auto& e : workload_registry())
    if (e.name == name) return e.create();
  std::string known;
  for (const auto& n : workload_names()) known += (known.empty() ? "" : ", ") + n;
  throw UsageError("unknown workload '" + name + "'; known workloads: " + known +
                   " (see `tbd list`)");
}

}  // namespace tbd
