#include "tbd/data/synthetic_text.h"

#include <algorithm>
#include <cmath>

namespace tbd {
namespace {

std::vector<double> zipf_weights(int64_t n) {
  std::vector<double> w(static_cast<size_t>(std::max<int64_t>(n, 1)));
  for (size_t r = 0; r < w.size(); ++r) w[r] = 1.0 / static_cast<double>(r + 1);
  return w;
}

}  // namespace

ZipfWords::ZipfWords(int64_t first, int64_t vocabulary) : first_(first) {
  const auto w = zipf_weights(vocabulary - first);
  dist_ = std::discrete_distribution<int64_t>(w.begin(), w.end());
}

SentencePairs synthetic_sentence_pairs(int64_t count, int64_t source_vocabulary, int64_t target_vocabulary,
                                       int64_t first_word, double median_length, int64_t max_length, uint64_t seed) {
  std::mt19937_64 rng(seed);
  ZipfWords source_words(first_word, source_vocabulary), target_words(first_word, target_vocabulary);
  std::lognormal_distribution<double> source_length(std::log(median_length), 0.6);
  std::lognormal_distribution<double> ratio(std::log(1.2), 0.2);
  auto clamp = [max_length](double x) {
    return std::clamp<int64_t>(static_cast<int64_t>(std::lround(x)), 1, max_length);
  };
  SentencePairs pairs;
  for (int64_t i = 0; i < count; ++i) {
    const double s = source_length(rng);
    const int64_t ls = clamp(s), lt = clamp(s * ratio(rng));
    std::vector<int32_t> src(static_cast<size_t>(ls)), tgt(static_cast<size_t>(lt));
    for (auto& w : src) w = source_words(rng);
    for (auto& w : tgt) w = target_words(rng);
    pairs.source.push_back(std::move(src));
    pairs.target.push_back(std::move(tgt));
  }
  return pairs;
}

}  // namespace tbd
