// The lookups of sum-pooled embedding bags as a recommendation batch carries
// them (and torch.nn.EmbeddingBag takes them): for each table its ids,
// flattened, then the offsets at which each sample's bag starts in them.
// Real click logs' lookups are skewed: a few ids take most of them; the
// synthetic ids follow a power law over ranks.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Generator.h>
#include <c10/core/Device.h>
#include <torch/types.h>

namespace tbd {

// Per table t, ids[t] is [B, L_t]: every sample looks up L_t ids of table t
// (its multi-hot size; 1: one-hot). Returns {ids_0, offsets_0, ids_1, ...}
// on `device`; tables of equal L share one offsets tensor.
std::vector<torch::Tensor> fixed_size_bags(const std::vector<torch::Tensor>& ids, c10::Device device);

// Samples [start, start + count) of bags laid out as above ({ids, offsets}
// per table): each table's ids of those samples and their offsets rebased to
// 0. Reads the offsets on the host.
std::vector<torch::Tensor> bag_rows(at::TensorList bags, int64_t start, int64_t count);

// `count` ids of a table of `rows` rows: rank r (0 the hottest) drawn with
// P(r) ∝ (r + 1)^-skew (a continuous power law on [1, rows + 1) floored;
// skew 0 is uniform, 1 Zipf's law), the ranks scattered over the table by a
// multiplicative hash (a bijection: 2654435761 is prime), so hot rows are not
// neighbours. Int64 [count].
torch::Tensor power_law_ids(int64_t rows, int64_t count, double skew, at::Generator& generator);

}  // namespace tbd
