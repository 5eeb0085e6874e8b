// Activation checkpointing (Chen et al. 2016, "Training deep nets with
// sublinear memory cost"; torch.utils.checkpoint): a block's forward runs
// without recording its graph, keeping only its inputs; backward runs the
// forward again with the graph recorded and backpropagates through that.
// The activations inside the block live only while its backward runs, at
// the cost of a second forward. The random state (dropout) is put back for
// the second forward, so both draw the same masks and the gradients equal
// those of the unchecked block.
//
// A model calls it with one line per block:
//   x = checkpoint_if(c.checkpoints(i), *block, [block](const TensorList& in) { return block->forward(in[0]); }, {x});
#pragma once

#include <functional>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

namespace tbd::nn {

// A block's forward as the checkpoint re-runs it: the tensors given to
// checkpointed() in, one tensor out. It is kept until backward, so it must
// own what it uses (capture the block's ModuleHolder by value, not a
// reference to a local).
using BlockForward = std::function<at::Tensor(const std::vector<at::Tensor>& inputs)>;

// forward(inputs), its activations dropped and recomputed in backward.
// `block` is the module whose parameters forward uses: their gradients flow
// back through the checkpoint as the inputs' do. Every input must be a
// defined tensor (masks and other inputs that need no gradient are fine).
// Under autocast the recomputation runs under the same autocast state.
at::Tensor checkpointed(const torch::nn::Module& block, BlockForward forward, std::vector<at::Tensor> inputs);

// checkpointed() when `on`, else forward(inputs) as it is.
inline at::Tensor checkpoint_if(bool on, const torch::nn::Module& block, BlockForward forward,
                                std::vector<at::Tensor> inputs) {
  return on ? checkpointed(block, std::move(forward), std::move(inputs)) : forward(inputs);
}

}  // namespace tbd::nn
