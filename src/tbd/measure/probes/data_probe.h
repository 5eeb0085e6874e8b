// data: time the training loop spent blocked waiting for its next batch.
#pragma once

#include <vector>

#include "tbd/measure/probes/probe.h"

namespace tbd {

class DataProbe : public Probe {
 public:
  void on_iteration_end(const IterationRecord& r) override;
  void contribute(nlohmann::json& result) const override;
  std::vector<std::pair<std::string, std::string>> summary_lines() const override;

 private:
  double stall_share() const;
  std::vector<double> wait_s_;
  double iteration_s_ = 0;
};

}  // namespace tbd
