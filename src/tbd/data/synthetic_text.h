// Synthetic text of realistic shape: word ids follow Zipf's law (rank r has
// frequency ∝ 1/r, as in natural text), sentence lengths a log-normal
// distribution like that of IWSLT/WMT training data.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "tbd/data/parallel_text.h"

namespace tbd {

// Draws ids first..vocabulary-1 with P(first + r) ∝ 1/(r+1).
class ZipfWords {
 public:
  ZipfWords(int64_t first, int64_t vocabulary);
  int32_t operator()(std::mt19937_64& rng) { return static_cast<int32_t>(first_ + dist_(rng)); }

 private:
  int64_t first_;
  std::discrete_distribution<int64_t> dist_;
};

// Source lengths are log-normal with the given median and σ 0.6 (IWSLT'15
// en: median about 17 words, a long right tail; WMT'14 BPE: about 25);
// target length = source length × 1.2 × a log-normal factor of σ 0.2
// (Vietnamese runs about a fifth longer than English). Both within
// [1, max_length]. Word ids start at `first_word` (after the specials).
SentencePairs synthetic_sentence_pairs(int64_t count, int64_t source_vocabulary, int64_t target_vocabulary,
                                       int64_t first_word, double median_length, int64_t max_length, uint64_t seed);

}  // namespace tbd
