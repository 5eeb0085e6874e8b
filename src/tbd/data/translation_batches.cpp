#include "tbd/data/translation_batches.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "tbd/data/batch_pool.h"

namespace tbd {
namespace {

// A batch's padded source and target lengths: its longest sentence on each
// side, with the added </s> (source, where used) or <s> counted, rounded up
// to ids.length_multiple.
std::pair<int64_t, int64_t> padded_batch_lengths(const SentencePairs& pairs, const std::vector<int64_t>& indices,
                                                 const SpecialIds& ids) {
  const int64_t extra = ids.source_eos ? 1 : 0;
  int64_t s_max = 1, t_max = 1;
  for (int64_t i : indices) {
    s_max = std::max<int64_t>(s_max, static_cast<int64_t>(pairs.source[i].size()) + extra);
    t_max = std::max<int64_t>(t_max, static_cast<int64_t>(pairs.target[i].size()) + 1);
  }
  return {bucketed_length(s_max, ids.length_multiple), bucketed_length(t_max, ids.length_multiple)};
}

}  // namespace

TranslationBatch make_translation_batch(const SentencePairs& pairs, const std::vector<int64_t>& indices,
                                        const SpecialIds& ids) {
  const auto b = static_cast<int64_t>(indices.size());
  const int64_t extra = ids.source_eos ? 1 : 0;
  const auto [s_max, t_max] = padded_batch_lengths(pairs, indices, ids);
  TranslationBatch batch;
  batch.source = torch::full({b, s_max}, ids.source_pad, torch::kInt64);
  batch.source_lengths = torch::empty({b}, torch::kInt64);
  batch.target_input = torch::full({b, t_max}, ids.pad, torch::kInt64);
  batch.target_output = torch::full({b, t_max}, ids.pad, torch::kInt64);
  auto src = batch.source.accessor<int64_t, 2>();
  auto src_len = batch.source_lengths.accessor<int64_t, 1>();
  auto tin = batch.target_input.accessor<int64_t, 2>();
  auto tout = batch.target_output.accessor<int64_t, 2>();
  for (int64_t r = 0; r < b; ++r) {
    const auto& s = pairs.source[indices[r]];
    const auto& t = pairs.target[indices[r]];
    const auto ns = static_cast<int64_t>(s.size()), nt = static_cast<int64_t>(t.size());
    for (int64_t j = 0; j < ns; ++j) src[r][j] = s[j];
    if (ids.source_eos) src[r][ns] = ids.eos;
    src_len[r] = ns + extra;
    tin[r][0] = ids.bos;
    for (int64_t j = 0; j < nt; ++j) {
      tin[r][j + 1] = t[j];
      tout[r][j] = t[j];
    }
    tout[r][nt] = ids.eos;
    batch.target_tokens += nt + 1;
  }
  return batch;
}

std::vector<int64_t> padded_lengths(const SentencePairs& pairs, const SpecialIds& ids) {
  std::vector<int64_t> lengths(pairs.source.size());
  for (size_t i = 0; i < lengths.size(); ++i)
    lengths[i] = bucketed_length(
        static_cast<int64_t>(std::max(pairs.source[i].size() + (ids.source_eos ? 1 : 0), pairs.target[i].size() + 1)),
        ids.length_multiple);
  return lengths;
}

TranslationBatches::TranslationBatches(std::shared_ptr<const SentencePairs> pairs, SpecialIds ids,
                                       LengthBatches::Limit limit, int64_t batch_size, uint64_t seed, int workers,
                                       Shard shard)
    : pairs_(std::move(pairs)),
      ids_(ids),
      plan_(padded_lengths(*pairs_, ids_), limit, batch_size, seed),
      prefetcher_([this, shard](
                      int64_t k) { return make_translation_batch(*pairs_, plan_.batch(shard.global_batch(k)), ids_); },
                  workers, 2 * workers) {
  std::set<std::tuple<int64_t, int64_t, int64_t>> shapes;
  for (int64_t k = 0; shard.global_batch(k) < plan_.batches_per_epoch(); ++k) {
    const auto indices = plan_.batch(shard.global_batch(k));
    const auto [s, t] = padded_batch_lengths(*pairs_, indices, ids_);
    shapes.insert({static_cast<int64_t>(indices.size()), s, t});
  }
  shapes_ = static_cast<int64_t>(shapes.size());
}

Batch to_training_batch(const TranslationBatch& b, c10::Device device, SourceLengthsOn lengths) {
  Batch batch;
  batch.inputs = {to_device(b.source, device),
                  lengths == SourceLengthsOn::host ? b.source_lengths : to_device(b.source_lengths, device),
                  to_device(b.target_input, device)};
  batch.targets = {to_device(b.target_output, device)};
  batch.samples = b.target_tokens;
  return batch;
}

}  // namespace tbd
