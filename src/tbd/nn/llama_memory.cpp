#include "tbd/nn/llama_memory.h"

#include <fmt/format.h>

#include <algorithm>

#include "tbd/core/number_format.h"
#include "tbd/core/zero_memory.h"

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
  // The weights a matmul reads: a block's projections and the output head
  // (not the RMSNorm weights, nor an untied input embedding, a lookup).
  const double block_matmul_weights = 2 * d * q + 2 * d * kv + 3 * d * F, head_matmul_weights = V * d;

  // ZeRO's units: the blocks; the root (embeddings, head, final norm) stays
  // whole. Under autocast full gathers a block's projections in the run's
  // precision (its norms' weights fp32), so autocast casts none of them.
  const bool sharded = s.sharding != Sharding::none;
  const bool shards_weights = s.sharding == Sharding::full,
             shards_gradients = s.sharding == Sharding::gradients || shards_weights;
  const bool gathers_low = shards_weights && autocast;
  const double block_parameters = block_matmul_weights + 2 * d;
  const double block_gathered = gathers_low ? a * block_matmul_weights + 4 * 2 * d : 4 * block_parameters;
  const double root_parameters = N - static_cast<double>(c.layers) * block_parameters;
  const WrappingUnitBytes units{.root_share = root_parameters / N,
                                .largest_unit = block_gathered,
                                .largest_unit_gradients = 4 * block_parameters,
                                .count = c.layers};
  const ShardedModelState state = sharded_model_state({4 * N, 4 * N, 8 * N}, units, s.ranks, s.sharding);
  const std::string per_rank = fmt::format(" / {} ranks", s.ranks);

  MemoryPlan plan;
  plan.parameters = n;
  plan.model_state = {
      {"weights", state.weights,
       shards_weights ? fmt::format("4 B x ({} root + {} in {} blocks{}) (fp32; embeddings, head and final norm whole)",
                                    with_thousands(static_cast<long long>(root_parameters)),
                                    with_thousands(static_cast<long long>(N - root_parameters)), c.layers, per_rank)
                      : fmt::format("4 B x {} parameters (fp32; autocast keeps fp32 weights)", with_thousands(n))},
      {"gradients", state.gradients,
       fmt::format("4 B x {} parameters{} (fp32{})", with_thousands(n), shards_gradients ? per_rank : "",
                   shards_gradients ? "; reduce-scattered, this rank's slice kept" : "")},
      {"optimizer_state", state.optimizer_state,
       fmt::format("8 B x {} parameters{} (AdamW's two fp32 moments{})", with_thousands(n), sharded ? per_rank : "",
                   sharded ? " of this rank's slice" : "")}};

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
  // Autocast casts each matmul weight once per forward; backward keeps the
  // casts of the head and of the blocks that are not checkpointed (a
  // checkpointed block saves nothing, and re-casts when it re-runs). Full
  // gathers the blocks' weights already cast: only the head's are copies.
  const int64_t cast_blocks = gathers_low ? 0 : kept;
  const double cast_weights = static_cast<double>(cast_blocks) * block_matmul_weights + head_matmul_weights;
  if (autocast)
    plan.activations.push_back(
        {"weight_copies", a * cast_weights,
         fmt::format("{} B x {} matmul weights of the head and {} blocks{} (autocast's casts, kept for backward)", a,
                     with_thousands(static_cast<long long>(cast_weights)), cast_blocks,
                     gathers_low ? " (full gathers them in the run's precision)" : " not checkpointed")});

  // At the start of backward the loss's gradient exists twice over the
  // vocabulary (of the log-probabilities, then of the logits), in fp32.
  const double loss_gradients = 2 * 4 * T * V;
  // Gradient accumulation keeps the gradients of earlier micro-batches in
  // .grad, whole under every strategy (sharding reduces only the last
  // micro-batch's, as DDP's and FSDP's no_sync do).
  const double accumulated = s.grad_accum > 1 ? 4 * N : 0;
  const double start = state.weights + state.optimizer_state + accumulated + plan.activation_bytes() + loss_gradients;
  // Late in backward every gradient exists (sharded: the reduce-scattered
  // slices and up to three buckets whole), a checkpointed block re-runs its
  // forward (one block's full activations on top), and with full the units
  // in use are gathered (the one computing and the one prefetched).
  const double gradients_late = sharded_gradients_alive(4 * N, s.bucket_bytes, units, s.ranks, s.sharding);
  const double recomputed = (checkpointed > 0 ? full_block : 0) + checkpointed_block;
  const double late = state.weights + state.optimizer_state + gradients_late + state.gathered + recomputed;
  plan.peak_bytes = std::max(start, late);
  if (start >= late) {
    plan.transients.push_back({"loss_gradients", loss_gradients,
                               fmt::format("4 B x 2 x {} x {} (gradients over the vocabulary)", t, c.vocabulary)});
    if (accumulated > 0)
      plan.transients.push_back(
          {"accumulated_gradients", accumulated,
           fmt::format("4 B x {} parameters (the earlier micro-batches' sum, whole)", with_thousands(n))});
    plan.peak_moment = s.grad_accum > 1 ? "the start of the last micro-batch's backward (gradients of the earlier "
                                          "ones kept, activations and loss gradients alive)"
                                        : "the start of backward (all activations and the loss's gradients alive)";
  } else {
    // The model state counts the gradients a rank keeps; what is whole beyond that is transient.
    if (gradients_late > state.gradients)
      plan.transients.push_back(
          {"whole_gradient_buckets", gradients_late - state.gradients,
           fmt::format("up to 3 buckets of {} whole beyond this rank's slices (on the wire or filling)",
                       format_bytes(std::max(s.bucket_bytes, shards_weights ? units.largest_unit_gradients : 0.0)))});
    if (state.gathered > 0)
      plan.transients.push_back(
          {"gathered_blocks", state.gathered,
           fmt::format("2 blocks x {} (the one computing and the one prefetched){}", format_bytes(block_gathered),
                       gathers_low ? "; projections in the run's precision, norms fp32" : "")});
    if (checkpointed > 0)
      plan.transients.push_back(
          {"recomputation", full_block, "a checkpointed block re-running its forward (its full activations)"});
    plan.transients.push_back({"residual_gradient", checkpointed_block,
                               fmt::format("4 B x {}·d (the gradient flowing back along the residual)", t)});
    plan.peak_moment = "late in backward (every gradient" + std::string(shards_gradients ? " slice" : "") +
                       (checkpointed > 0 ? ", a checkpointed block re-running" : "") +
                       (state.gathered > 0 ? ", two blocks gathered" : "") + ")";
  }
  plan.assumptions = {
      "fp32 weights, gradients and AdamW moments: 16 B per parameter (mixed precision keeps fp32 master weights)",
      "gradients set to none after each step, as tbd does; the optimizer's moments exist from the first step on",
      "attention through SDPA's flash or memory-efficient kernel (no T x T score matrix is kept)",
      std::string("RMSNorm ") + (s.fused_rms_norm ? "fused (CUDA: keeps its input and 1/rms)"
                                                  : "composite (CPU: also keeps x/rms and its output)"),
      "workspace (cuBLAS, cuDNN) and the allocator's fragmentation are not included: leave a margin"};
  if (sharded)
    plan.assumptions.push_back(fmt::format(
        "{} ranks, --sharding {} (ZeRO-{}): each rank runs the whole batch given; weights gathered in {} and "
        "gradients reduced in fp32; buckets of {}; shard padding and the collectives' buffers not included",
        s.ranks, to_string(s.sharding), zero_stage(s.sharding),
        gathers_low ? "the run's precision (the blocks' projections; norms fp32)" : "fp32",
        format_bytes(s.bucket_bytes)));
  return plan;
}

}  // namespace tbd::nn
