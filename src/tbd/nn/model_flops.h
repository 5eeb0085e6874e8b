// Model FLOPs of decoder-only language models, the figure MFU divides by the
// peak (docs/metrics.md#model-flops-utilisation).
#pragma once

#include <cstdint>

namespace tbd::nn {

// Model FLOPs per token for training (PaLM, Chowdhery et al. 2022, appendix
// B): 6N for the weight GEMMs forward and backward (N: parameters without
// position embeddings), plus 12·L·H·Q·T for attention scores and values (L
// layers, H query heads, Q head size, T context). Grouped-query attention
// shares key/value heads but every query head still forms its own scores and
// weighted values, so the second term counts query heads; the smaller k and v
// projections are already in N.
int64_t palm_flops_per_token(int64_t n, int64_t layers, int64_t heads, int64_t head_size, int64_t context);

}  // namespace tbd::nn
