// Attention-based LSTM encoder–decoder for translation (Luong, Pham and
// Manning 2015; the TF nmt tutorial's NMT model): stacked LSTM encoder over
// packed (variable-length) sequences; stacked LSTM decoder started from the
// encoder's final state, with input feeding (the previous attentional
// vector joins the next input) and global attention of the "general" form
// score(h_t, h_s) = h_tᵀ W_a h_s over the real source positions;
// h̃_t = tanh(W_c [c_t; h_t]) feeds the output projection. Dropout on the
// input of every LSTM layer, as TF nmt's DropoutWrapper.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>

namespace tbd::nn {

struct Seq2SeqConfig {  // defaults: IWSLT'15 en–vi as in TF nmt
  int64_t source_vocabulary = 17191, target_vocabulary = 7709;
  int64_t embedding = 512, hidden = 512, layers = 2;
  double dropout = 0.2;
};

// Luong global attention, general score, masked to the real source positions.
class LuongAttentionImpl : public torch::nn::Module {
 public:
  explicit LuongAttentionImpl(int64_t hidden);
  // keys(): W_a h_s for all source positions, computed once per batch.
  torch::Tensor keys(const torch::Tensor& encoder_outputs);  // [B, S, H]
  // h_t [B, H] → attentional vector h̃_t [B, H]. mask [B, S]: true on real tokens.
  torch::Tensor forward(const torch::Tensor& h_t, const torch::Tensor& keys, const torch::Tensor& encoder_outputs,
                        const torch::Tensor& mask);

  torch::nn::Linear score{nullptr}, combine{nullptr};  // W_a (H×H), W_c (2H→H), no biases
};
TORCH_MODULE(LuongAttention);

class Seq2SeqImpl : public torch::nn::Module {
 public:
  explicit Seq2SeqImpl(const Seq2SeqConfig& config);
  // source [B, S] ids, source_lengths [B] (CPU or device), target_input
  // [B, T] ids (<s> w1 …: teacher forcing) → logits [B, T, target_vocabulary]
  torch::Tensor forward(const torch::Tensor& source, const torch::Tensor& source_lengths,
                        const torch::Tensor& target_input);

 private:
  Seq2SeqConfig config_;
  torch::nn::Embedding source_embedding_{nullptr}, target_embedding_{nullptr};
  torch::nn::LSTM encoder_{nullptr};
  torch::nn::ModuleList decoder_;  // LSTMCell per layer; layer 0 reads [embedding; h̃_{t-1}]
  LuongAttention attention_{nullptr};
  torch::nn::Linear output_{nullptr};  // H → target vocabulary, no bias (TF nmt)
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(Seq2Seq);

}  // namespace tbd::nn
