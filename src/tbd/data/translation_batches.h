// Padded tensors of sentence pairs for translation models (teacher forcing):
// the decoder reads <s> w1 … wn and is trained to predict w1 … wn </s>.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/types.h>

#include "tbd/data/length_batches.h"
#include "tbd/data/length_bucket.h"
#include "tbd/data/parallel_text.h"
#include "tbd/data/prefetcher.h"
#include "tbd/data/shard.h"

namespace tbd {

struct Batch;  // tbd/core/workload.h

struct TranslationBatch {        // int64 tensors on the CPU, <pad> after each sentence
  torch::Tensor source;          // [B, S]
  torch::Tensor source_lengths;  // [B] real tokens per source row
  torch::Tensor target_input;    // [B, T] <s> w1 … wn
  torch::Tensor target_output;   // [B, T] w1 … wn </s>
  int64_t target_tokens = 0;     // non-padding positions of target_output (what the loss counts)
};

// Where a translation batch's source lengths go: an LSTM's sequence packing
// reads them on the host, attention masks want them on the device.
enum class SourceLengthsOn { host, device };

// inputs source, source_lengths, target_input; target target_output; samples:
// target tokens. Everything on `device` but the lengths, which go to `lengths`.
Batch to_training_batch(const TranslationBatch& b, c10::Device device, SourceLengthsOn lengths);

struct SpecialIds {
  int64_t bos, eos, pad;  // of the target vocabulary
  int64_t source_pad;     // of the source vocabulary (the same id when shared)
  bool source_eos;        // append </s> (eos) to sources too: fairseq does, TF nmt does not
  // Each batch's source and target lengths are padded up to a multiple of
  // this (length bucketing: a bounded set of shapes, so a GPU plans each
  // attention or RNN shape once); 1: the longest sentence's exact length.
  int64_t length_multiple = 1;
};

TranslationBatch make_translation_batch(const SentencePairs& pairs, const std::vector<int64_t>& indices,
                                        const SpecialIds& ids);

// The length that pads pair i in a batch: its longer side, with the added
// </s> (or <s>) counted, rounded up to ids.length_multiple (what a token
// budget must count).
std::vector<int64_t> padded_lengths(const SentencePairs& pairs, const SpecialIds& ids);

// Endless stream of length-bucketed batches from a corpus, made ahead by the
// prefetching pipeline.
class TranslationBatches {
 public:
  TranslationBatches(std::shared_ptr<const SentencePairs> pairs, SpecialIds ids, LengthBatches::Limit limit,
                     int64_t batch_size, uint64_t seed, int workers, Shard shard = {});
  TranslationBatch next() { return prefetcher_.next(); }
  // Distinct (sentences, source length, target length) among this rank's
  // batches of the first epoch, lengths padded as make_translation_batch
  // pads them. Later epochs cut the same sorted lengths into the same
  // batch sizes; which sentences meet in a batch can still differ.
  int64_t distinct_shapes() const { return shapes_; }

 private:
  std::shared_ptr<const SentencePairs> pairs_;
  SpecialIds ids_;
  LengthBatches plan_;
  int64_t shapes_ = 0;
  Prefetcher<TranslationBatch> prefetcher_;  // last: its threads use the members above
};

}  // namespace tbd
