#include "tbd/nn/model_flops.h"

namespace tbd::nn {

int64_t palm_flops_per_token(int64_t n, int64_t layers, int64_t heads, int64_t head_size, int64_t context) {
  return 6 * n + 12 * layers * heads * head_size * context;
}

}  // namespace tbd::nn
