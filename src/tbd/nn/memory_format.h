// Channels-last (NHWC) for convolutional workloads: the layout cuDNN's
// tensor-core kernels and oneDNN's CPU kernels prefer, and what
// performance-aware PyTorch users select with
// model.to(memory_format=torch.channels_last). Measured choices per device:
// docs/workloads.md#memory-format.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/MemoryFormat.h>
#include <torch/nn/module.h>
#include <torch/types.h>

#include "tbd/core/options.h"

namespace tbd::nn {

// The layout `requested` means on `device`: auto picks the measured faster.
at::MemoryFormat resolve_memory_format(MemoryFormat requested, const torch::Device& device);
const char* memory_format_name(at::MemoryFormat format);  // "channels_last" / "contiguous"

// Restrides every 4-D parameter and buffer of `module` (convolution weights,
// batch-norm buffers are 1-D and stay) into `format`; gradients and
// optimizer state follow the parameters' layout.
void convert_memory_format(torch::nn::Module& module, at::MemoryFormat format);

// A 4-D batch in `format` (other ranks unchanged): the copy a training loop
// makes when its data pipeline yields NCHW.
torch::Tensor in_memory_format(const torch::Tensor& batch, at::MemoryFormat format);

}  // namespace tbd::nn
