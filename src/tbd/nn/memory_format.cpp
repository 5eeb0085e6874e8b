#include "tbd/nn/memory_format.h"

#include <torch/torch.h>

namespace tbd::nn {
namespace {

// Whether channels-last is the faster layout on the CPU (oneDNN), measured
// on this project's CPU build: docs/workloads.md#memory-format.
constexpr bool kChannelsLastOnCpu = true;

}  // namespace

at::MemoryFormat resolve_memory_format(MemoryFormat requested, const torch::Device& device) {
  switch (requested) {
    case MemoryFormat::channels_last: return at::MemoryFormat::ChannelsLast;
    case MemoryFormat::contiguous: return at::MemoryFormat::Contiguous;
    case MemoryFormat::automatic: break;
  }
  // CUDA: tensor-core convolutions want NHWC (cuDNN transposes NCHW
  // otherwise). CPU: see kChannelsLastOnCpu.
  if (device.is_cuda()) return at::MemoryFormat::ChannelsLast;
  return kChannelsLastOnCpu ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
}

const char* memory_format_name(at::MemoryFormat format) {
  return format == at::MemoryFormat::ChannelsLast ? "channels_last" : "contiguous";
}

void convert_memory_format(torch::nn::Module& module, at::MemoryFormat format) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters())
    if (p.dim() == 4) p.set_data(p.contiguous(format));
  for (auto& b : module.buffers())
    if (b.dim() == 4) b.set_data(b.contiguous(format));
}

torch::Tensor in_memory_format(const torch::Tensor& batch, at::MemoryFormat format) {
  return batch.dim() == 4 ? batch.contiguous(format) : batch;
}

}  // namespace tbd::nn
