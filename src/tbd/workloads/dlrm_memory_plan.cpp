#include "tbd/workloads/dlrm_memory_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "tbd/core/number_format.h"
#include "tbd/dist/sharded_embedding_bags.h"

namespace tbd {
namespace {

constexpr double kFloat = 4, kIndex = 8;  // fp32 values, int64 ids and sparse indices

int64_t lookups_of(const nn::DLRMConfig& c, size_t table) { return c.lookups.empty() ? 1 : c.lookups[table]; }

// Values the dense path keeps from forward to backward per sample: each
// Linear's input and output (the ReLU's output is the next input), the
// pooled embeddings and the interaction's output, and per cross layer its
// input, the low-rank projection and the output.
int64_t dense_values_per_sample(const nn::DLRMConfig& c) {
  int64_t values = 0;
  for (const auto& widths : {nn::dlrm_bottom_widths(c), nn::dlrm_top_widths(c)})
    for (size_t i = 0; i + 1 < widths.size(); ++i) values += widths[i] + widths[i + 1];
  const int64_t interaction = nn::dlrm_interaction_width(c);
  values += static_cast<int64_t>(c.table_sizes.size()) * c.embedding_dim + interaction;
  if (c.interaction == nn::DLRMInteraction::dcn) values += c.cross_layers * (2 * interaction + c.cross_rank);
  return values;
}

}  // namespace

MemoryPlan dlrm_memory_plan(const nn::DLRMConfig& c, const DLRMStep& s) {
  const double d = static_cast<double>(c.embedding_dim), batch = static_cast<double>(s.batch);
  const double ranks = s.ranks, tables = static_cast<double>(c.table_sizes.size());
  const bool placed = s.placement != EmbeddingSharding::replicate;
  // This rank's rows, and the lookups per micro-batch that land on them:
  // replicated its own B samples' in every table; placed, all N·B samples'
  // that fall in its rows (row-wise: ids assumed spread evenly over a
  // table's rows). Placed, it receives the ids of every table it pools: its
  // own tables (table-wise), all of them (row-wise).
  const auto held = rows_held(c.table_sizes, s.placement, s.rank, s.ranks);
  double lookups = 0, ids_received = 0, tables_pooled = 0;
  for (size_t t = 0; t < held.size(); ++t) {
    const double mine = static_cast<double>(held[t].second - held[t].first);
    const double per_sample = static_cast<double>(lookups_of(c, t));
    if (!placed) {
      lookups += batch * per_sample;
      continue;
    }
    lookups += ranks * batch * per_sample * mine / static_cast<double>(c.table_sizes[t]);
    if (s.placement == EmbeddingSharding::row || mine > 0) {
      ids_received += ranks * batch * per_sample;
      tables_pooled += 1;
    }
  }
  const double rows = static_cast<double>(total_rows(held));
  // Sparse gradients of several micro-batches accumulate by concatenation.
  const double gradient_rows = lookups * static_cast<double>(s.grad_accum);
  const double dense = static_cast<double>(nn::dlrm_dense_parameters(c));
  const std::string where = placed ? fmt::format("{}-wise over {} rank{}, rank {}", to_string(s.placement), s.ranks,
                                                 s.ranks == 1 ? "" : "s", s.rank)
                                   : std::string("replicated");

  MemoryPlan plan;
  plan.parameters = nn::dlrm_parameters(c);  // the model's; the tables term says this rank's part
  plan.model_state.push_back(
      {"embedding tables", kFloat * d * rows,
       fmt::format("4 B x {} x {} rows ({})", c.embedding_dim, with_thousands(static_cast<int64_t>(rows)), where)});
  if (s.adagrad)
    plan.model_state.push_back(
        {"table optimizer state", kFloat * d * rows, "Adagrad: one fp32 accumulator per weight"});
  plan.model_state.push_back(
      {"dense weights", kFloat * dense,
       fmt::format("4 B x {} MLP and cross parameters", with_thousands(static_cast<int64_t>(dense)))});
  plan.model_state.push_back({"dense gradients", kFloat * dense, "4 B x the dense parameters"});
  if (s.adagrad)
    plan.model_state.push_back({"dense optimizer state", kFloat * dense, "Adagrad: one fp32 accumulator per weight"});

  int64_t ids_per_sample = 0;
  for (size_t t = 0; t < c.table_sizes.size(); ++t) ids_per_sample += lookups_of(c, t);
  plan.activations.push_back(
      {"batch",
       batch * (kIndex * static_cast<double>(ids_per_sample) + kIndex * tables +
                kFloat * static_cast<double>(c.dense_features) + kFloat),
       fmt::format("{} samples x (8 B x {} ids + 8 B x {} bag offsets + 4 B x {} dense features + 4 B label)", s.batch,
                   ids_per_sample, c.table_sizes.size(), c.dense_features)});
  plan.activations.push_back({"dense path", kFloat * batch * static_cast<double>(dense_values_per_sample(c)),
                              fmt::format("4 B x {} samples x {} values kept per sample (MLP inputs and outputs, "
                                          "pooled embeddings, interaction{})",
                                          s.batch, dense_values_per_sample(c),
                                          c.interaction == nn::DLRMInteraction::dcn ? ", cross layers" : "")});

  plan.transients.push_back(
      {"sparse table gradients", (kFloat * d + kIndex) * gradient_rows,
       fmt::format("(4 B x {} + 8 B index) x {} lookups on this rank's rows in the step (one row each, uncoalesced)",
                   c.embedding_dim, with_thousands(static_cast<int64_t>(gradient_rows)))});
  if (placed) {
    // Ids and bag lengths in, the pooled rows for all N·B samples out, and
    // this rank's B rows of every table back (their gradients, the same).
    const double pooled_out = kFloat * d * ranks * batch * tables_pooled;
    const double exchange =
        kIndex * (ids_received + ranks * batch * tables_pooled) + 2 * pooled_out + 2 * kFloat * d * batch * tables;
    plan.transients.push_back(
        {"lookup exchange", exchange,
         fmt::format("8 B x ({} ids + {} bag lengths) received, 2 x 4 B x {} x {} pooled rows sent, 2 x 4 B x {} x "
                     "{} rows received",
                     with_thousands(static_cast<int64_t>(ids_received)),
                     with_thousands(static_cast<int64_t>(ranks * batch * tables_pooled)), c.embedding_dim,
                     with_thousands(static_cast<int64_t>(ranks * batch * tables_pooled)), c.embedding_dim,
                     with_thousands(static_cast<int64_t>(batch * tables)))});
  } else if (s.ranks > 1) {
    // The sparse all-reduce stacks the gradients (a copy) and gathers every
    // rank's rows (N copies' worth) before summing them.
    plan.transients.push_back({"sparse all-reduce", (ranks + 1) * (kFloat * d + kIndex) * gradient_rows,
                               fmt::format("({} + 1) x the sparse table gradients: their stack and every rank's "
                                           "gathered",
                                           s.ranks)});
  }
  // The tables come first in forward, so their backward runs last: by the
  // time their sparse gradients exist, the dense path's saved values are
  // freed. The peak is the larger of the two moments, the batch alive in both.
  double transient = 0;
  for (const auto& t : plan.transients) transient += t.bytes;
  const double batch_bytes = plan.activations.front().bytes;
  const double end_of_forward = plan.activation_bytes(), end_of_backward = batch_bytes + transient;
  plan.peak_bytes = plan.model_state_bytes() + std::max(end_of_forward, end_of_backward);
  plan.peak_moment = end_of_backward >= end_of_forward
                         ? "the end of backward: the step's sparse table gradients (and the lookups' exchange "
                           "buffers) beside the model state and the batch"
                         : "the end of forward: the dense path's saved values beside the model state";
  plan.assumptions = {"fp32 throughout", "the configuration's fixed lookups per table (--data files may differ)",
                      "row-wise: ids spread evenly over a table's rows (power-law ids put more on rank 0's)",
                      "no allocator caching or fragmentation"};
  if (!placed && s.ranks > 1)
    plan.assumptions.push_back(
        "replicated over several ranks: the sparse all-reduce's coalescing of the gathered rows is not counted (an "
        "under-estimate; docs/workloads.md#dlrm)");
  return plan;
}

}  // namespace tbd
