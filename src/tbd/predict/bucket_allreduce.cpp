#include "tbd/predict/bucket_allreduce.h"

#include <algorithm>
#include <chrono>
#include <set>

#include <torch/torch.h>

#include "tbd/dist/process_group.h"
#include "tbd/measure/device.h"

namespace tbd {

nlohmann::json measure_bucket_allreduces(ProcessGroup& group, c10::Device device,
                                         const std::vector<double>& bucket_bytes) {
  nlohmann::json allreduce = nlohmann::json::array();
  const std::set<double> sizes(bucket_bytes.begin(), bucket_bytes.end());
  for (double bytes : sizes) {
    auto flat = torch::ones({std::max<int64_t>(1, static_cast<int64_t>(bytes / 4))},
                            torch::TensorOptions().dtype(torch::kFloat).device(device));
    std::vector<double> seconds;
    for (int rep = 0; rep < 7; ++rep) {  // two to warm up, five timed
      group.barrier();
      const auto begin = std::chrono::steady_clock::now();
      group.allreduce_sum(flat, [] {})->wait();
      synchronize(device);
      if (rep >= 2) seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    }
    std::sort(seconds.begin(), seconds.end());
    allreduce.push_back({{"bytes", bytes}, {"seconds", seconds[seconds.size() / 2]}});
  }
  if (group.rank() != 0) return nlohmann::json();
  return {{"ranks", group.size()}, {"backend", group.backend_name()}, {"allreduce", allreduce}};
}

}  // namespace tbd
