#include "tbd/data/embedding_bags.h"

#include <cmath>
#include <map>

#include "tbd/data/batch_pool.h"

namespace tbd {

std::vector<torch::Tensor> fixed_size_bags(const std::vector<torch::Tensor>& ids, c10::Device device) {
  std::vector<torch::Tensor> out;
  std::map<int64_t, torch::Tensor> offsets_by_size;
  for (const auto& table_ids : ids) {
    const int64_t batch = table_ids.size(0), size = table_ids.size(1);
    auto& offsets = offsets_by_size[size];
    if (!offsets.defined()) offsets = to_device(torch::arange(0, batch * size, size, torch::kInt64), device);
    out.push_back(to_device(table_ids.reshape({-1}), device));
    out.push_back(offsets);
  }
  return out;
}

std::vector<torch::Tensor> bag_rows(at::TensorList bags, int64_t start, int64_t count) {
  std::vector<torch::Tensor> out;
  for (size_t t = 0; t + 1 < bags.size(); t += 2) {
    const auto& ids = bags[t];
    const auto offsets = bags[t + 1].cpu();
    const int64_t samples = offsets.size(0);
    const int64_t first = offsets[start].item<int64_t>();
    const int64_t end = start + count < samples ? offsets[start + count].item<int64_t>() : ids.size(0);
    out.push_back(ids.narrow(0, first, end - first));
    out.push_back((bags[t + 1].narrow(0, start, count) - first).contiguous());
  }
  return out;
}

torch::Tensor power_law_ids(int64_t rows, int64_t count, double skew, at::Generator& generator) {
  const auto u = torch::rand({count}, generator, torch::TensorOptions().dtype(torch::kDouble));
  const double top = static_cast<double>(rows) + 1.0;
  torch::Tensor r;  // the inverse of the power law's distribution function, on [1, rows + 1)
  if (std::abs(skew - 1.0) < 1e-12) {
    r = torch::exp(u * std::log(top));
  } else {
    const double a = 1.0 - skew;
    r = torch::pow(1.0 + u * (std::pow(top, a) - 1.0), 1.0 / a);
  }
  const auto rank = (torch::floor(r).to(torch::kInt64) - 1).clamp(0, rows - 1);
  return (rank * int64_t{2654435761}).remainder(rows);
}

}  // namespace tbd
