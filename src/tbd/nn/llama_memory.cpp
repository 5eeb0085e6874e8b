#include "tbd/nn/llama_memory.h"

#include <fmt/format.h>

#include <algorithm>

#include "tbd/core/number_format.h"

namespace tbd::nn {
namespace {

// fp32 for the residual stream, the norms' statistics and the loss (autocast
// runs rms_norm and log_softmax in fp32, and a residual sum with an fp32
// operand stays fp32); the run's precision for what the matmuls and
// attention read.
constexpr double kFp32 = 4;

double low_precision_bytes(Precision p) { return p == Precision::bf16 || p == Precision::fp16 ? 2 : 4; }

std::string tokens_text(int64_t tokens) { return fmt::format("T={}", tokens); }

}  // namespace

MemoryPlan llama_memory_plan(const LlamaConfig& c, const LlamaStep& s) {
  const double a = low_precision_bytes(s.precision), r = kFp32;
  const auto T = static_cast<double>(s.batch * c.context), d = static_cast<double>(c.d_model),
             F = static_cast<double>(c.ffn), V = static_cast<double>(c.vocabulary),
             q = static_cast<double>(c.heads * c.head_dim), kv = static_cast<double>(c.kv_heads * c.head_dim),
             H = static_cast<double>(c.heads);
  const bool autocast = a < 4;
  const int64_t n = llama_parameter_count(c);
  const double N = static_cast<double>(n);
  // The weights a matmul reads: all but the RMSNorm weights and an untied
  // input embedding (a lookup); autocast casts these.
  const double matmul_weights = N - static_cast<double>(2 * c.layers + 1) * d - (c.tied ? 0 : V * d);

  MemoryPlan plan;
  plan.parameters = n;
  plan.model_state = {
      {"weights", 4 * N, fmt::format("4 B x {} parameters (fp32; autocast keeps fp32 weights)", with_thousands(n))},
      {"gradients", 4 * N, fmt::format("4 B x {} parameters (fp32)", with_thousands(n))},
      {"optimizer_state", 8 * N, fmt::format("8 B x {} parameters (AdamW's two fp32 moments)", with_thousands(n))}};

  // One block without checkpointing: what its backward reads.
  // The normed inputs of the projections: shared in fp32; under autocast
  // each of q, k, v, gate and up casts (and keeps) its own copy, as autocast
  // caches casts of weights only.
  const double projection_inputs = (autocast ? 5 : 2) * a * T * d;
  const double norm_kept = s.fused_rms_norm ? 0 : 2 * r * T * d;  // x/rms of both norms (composite kernel)
  const double full_block = 2 * r * T * d                         // block input and mid-block residual
                            + norm_kept + 2 * 4 * T               // 1/rms of both norms
                            + projection_inputs                   // normed inputs of the projections
                            + a * T * (2 * q + 2 * kv)            // q, attention output; k, v (shared by GQA)
                            + 4 * T * H                           // attention's log-sum-exp
                            + 4 * a * T * F;                      // SwiGLU: gate, silu, up, their product
  const double checkpointed_block = r * T * d;                    // its input only; the rest re-run in backward
  int64_t checkpointed = 0;
  for (int64_t i = 0; i < c.layers; ++i) checkpointed += c.checkpointing.checkpoints(i) ? 1 : 0;
  const int64_t kept = c.layers - checkpointed;
  const std::string t = tokens_text(s.batch * c.context);
  if (kept > 0)
    plan.activations.push_back(
        {"blocks", static_cast<double>(kept) * full_block,
         fmt::format("{} blocks x (T·(2r·d{} + {}a·d + a·(2·{} + 2·{}) + 4a·F) + 4 B·T·(2 + H)); {}, d={}, F={}, "
                     "H={}, r=4 B (residual, fp32), a={} B",
                     kept, s.fused_rms_norm ? "" : " + 2r·d", autocast ? 5 : 2, c.heads * c.head_dim,
                     c.kv_heads * c.head_dim, t, c.d_model, c.ffn, c.heads, a)});
  if (checkpointed > 0)
    plan.activations.push_back({"checkpointed_blocks", static_cast<double>(checkpointed) * checkpointed_block,
                                fmt::format("{} blocks x 4 B x {}·d (each keeps only its input)", checkpointed, t)});
  const double head = r * T * d + (s.fused_rms_norm ? 0 : r * T * d) + 4 * T + a * T * d;
  plan.activations.push_back(
      {"final_norm", head, fmt::format("{}: last residual, RMSNorm, the output projection's input", t)});
  plan.activations.push_back(
      {"logits", a * T * V, fmt::format("{} B x {} x {} vocabulary (kept as the step's output)", a, t, c.vocabulary)});
  plan.activations.push_back({"log_probabilities", 4 * T * V,
                              fmt::format("4 B x {} x {} (cross-entropy's log-softmax, fp32)", t, c.vocabulary)});
  if (autocast)
    plan.activations.push_back({"weight_copies", a * matmul_weights,
                                fmt::format("{} B x {} matmul weights (autocast's casts, kept for backward)", a,
                                            with_thousands(static_cast<long long>(matmul_weights)))});

  // At the start of backward the loss's gradient exists twice over the
  // vocabulary (of the log-probabilities, then of the logits), in fp32.
  const double loss_gradients = 2 * 4 * T * V;
  plan.transients.push_back({"loss_gradients", loss_gradients,
                             fmt::format("4 B x 2 x {} x {} (gradients over the vocabulary)", t, c.vocabulary)});

  const double weights = 4 * N, gradients = 4 * N, optimizer = 8 * N;
  // Gradient accumulation keeps the gradients of earlier micro-batches.
  const double start =
      weights + optimizer + (s.grad_accum > 1 ? gradients : 0) + plan.activation_bytes() + loss_gradients;
  // Late in backward every gradient exists, and a checkpointed block re-runs
  // its forward: one block's full activations on top.
  const double late = weights + optimizer + gradients + (checkpointed > 0 ? full_block : 0) + checkpointed_block;
  plan.peak_bytes = std::max(start, late);
  plan.peak_moment = start >= late ? (s.grad_accum > 1 ? "the start of the last micro-batch's backward (gradients of "
                                                         "the earlier ones kept, activations and loss gradients alive)"
                                                       : "the start of backward (all activations and the loss's "
                                                         "gradients alive)")
                                   : "the end of backward (every gradient, a checkpointed block re-running)";
  plan.assumptions = {
      "fp32 weights, gradients and AdamW moments: 16 B per parameter (mixed precision keeps fp32 master weights)",
      "gradients set to none after each step, as tbd does; the optimizer's moments exist from the first step on",
      "attention through SDPA's flash or memory-efficient kernel (no T x T score matrix is kept)",
      std::string("RMSNorm ") + (s.fused_rms_norm ? "fused (CUDA: keeps its input and 1/rms)"
                                                  : "composite (CPU: also keeps x/rms and its output)"),
      "workspace (cuBLAS, cuDNN) and the allocator's fragmentation are not included: leave a margin"};
  return plan;
}

}  // namespace tbd::nn
