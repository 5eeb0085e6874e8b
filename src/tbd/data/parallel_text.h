// Parallel text for translation: DIR/train.SRC and DIR/train.TGT hold one
// sentence per line (line i of one translates line i of the other), tokens
// separated by spaces (words or sub-words, e.g. BPE output). Vocabularies
// come from DIR/vocab.LANG (one token per line, TF nmt's layout) or, for a
// shared vocabulary, DIR/vocab.shared; without the file they are built from
// the training text, most frequent tokens first.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tbd/data/vocabulary.h"

namespace tbd {

// Token ids of sentence pairs, without <s> or </s>.
struct SentencePairs {
  std::vector<std::vector<int32_t>> source, target;
  int64_t size() const { return static_cast<int64_t>(source.size()); }
};

struct ParallelTextOptions {
  bool shared_vocabulary = false;  // one vocabulary over both languages
  bool reverse = false;            // translate the alphabetically second language into the first
  int64_t max_vocabulary = 0;      // cap of a vocabulary built from text (specials included); 0: none
  int64_t max_length = 50;         // longer sentences are cut to this many tokens (TF nmt)
};

struct ParallelText {
  std::string source_file, target_file;
  std::shared_ptr<const Vocabulary> source_vocabulary, target_vocabulary;  // one object when shared
  SentencePairs pairs;
  int64_t dropped = 0;    // pairs with an empty side (TF nmt drops them too)
  int64_t truncated = 0;  // pairs with a side cut to max_length
};

// Throws UsageError when DIR or its train.* files are missing or ambiguous,
// Error naming FILE:LINE for malformed content (invalid UTF-8, mismatched
// line counts, a bad vocab file) and Error when no usable pair remains.
ParallelText read_parallel_text(const std::string& dir, const ParallelTextOptions& options);

}  // namespace tbd
