#include "tbd/dist/sharded_embedding_bags.h"

#include <torch/autograd.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "tbd/core/error.h"
#include "tbd/dist/process_group.h"

namespace tbd {
namespace {

using torch::Tensor;

// c10d's all-to-all over rows, awaited and logged for the comm probe.
Tensor exchange(ProcessGroup& group, CollectiveLog& log, const Tensor& send, const std::vector<int64_t>& send_rows,
                const std::vector<int64_t>& recv_rows) {
  auto shape = send.sizes().vec();
  shape[0] = std::accumulate(recv_rows.begin(), recv_rows.end(), int64_t{0});
  Tensor out = torch::empty(shape, send.options());
  const Tensor input = send.contiguous();
  const auto launched = std::chrono::steady_clock::now();
  const auto pending = group.all_to_all(out, input, recv_rows, send_rows);
  pending->wait();
  const std::chrono::duration<double> host = std::chrono::steady_clock::now() - launched;
  log.record({.kind = "all-to-all",
              .bytes = static_cast<double>(input.numel() * input.element_size()),
              .seconds = pending->device_seconds().value_or(host.count())});
  return out;
}

// The return trip of the pooled embeddings, differentiable: backward sends
// the gradients back along the same splits, scaled.
class ExchangeRows : public torch::autograd::Function<ExchangeRows> {
 public:
  static Tensor forward(torch::autograd::AutogradContext* ctx, Tensor send, ProcessGroup* group, CollectiveLog* log,
                        std::vector<int64_t> send_rows, std::vector<int64_t> recv_rows, double grad_scale) {
    ctx->saved_data["group"] = static_cast<int64_t>(reinterpret_cast<intptr_t>(group));
    ctx->saved_data["log"] = static_cast<int64_t>(reinterpret_cast<intptr_t>(log));
    ctx->saved_data["send_rows"] = send_rows;
    ctx->saved_data["recv_rows"] = recv_rows;
    ctx->saved_data["scale"] = grad_scale;
    return exchange(*group, *log, send, send_rows, recv_rows);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto* group = reinterpret_cast<ProcessGroup*>(static_cast<intptr_t>(ctx->saved_data["group"].toInt()));
    const auto send_rows = ctx->saved_data["send_rows"].toIntVector();
    auto* log = reinterpret_cast<CollectiveLog*>(static_cast<intptr_t>(ctx->saved_data["log"].toInt()));
    const auto recv_rows = ctx->saved_data["recv_rows"].toIntVector();
    Tensor back = exchange(*group, *log, grads[0], recv_rows, send_rows);
    back.mul_(ctx->saved_data["scale"].toDouble());
    return {back, Tensor(), Tensor(), Tensor(), Tensor(), Tensor()};
  }
};

// The ids each bag holds, from its start offsets (the last bag runs to the end).
Tensor lengths_of(const Tensor& ids, const Tensor& offsets) {
  return torch::cat({offsets.narrow(0, 1, offsets.size(0) - 1), torch::full({1}, ids.size(0), offsets.options())}) -
         offsets;
}

Tensor starts_of(const Tensor& lengths) { return torch::cumsum(lengths, 0) - lengths; }

std::vector<int64_t> host_values(const Tensor& t) {
  const Tensor c = t.to(torch::kCPU, torch::kInt64).contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

// The return trip needs a tensor that takes gradients on every rank, so
// every rank's backward runs the collective, even one pooling nothing.
Tensor differentiable(Tensor t) { return t.requires_grad() ? t : t.detach().requires_grad_(); }

}  // namespace

std::vector<int> place_tables_by_rows(const std::vector<int64_t>& rows, int ranks) {
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rows[a] > rows[b]; });
  std::vector<int64_t> load(static_cast<size_t>(ranks), 0);
  std::vector<int> owner(rows.size(), 0);
  for (size_t t : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    owner[t] = static_cast<int>(least);
    load[static_cast<size_t>(least)] += rows[t];
  }
  return owner;
}

std::pair<int64_t, int64_t> row_range(int64_t rows, int rank, int ranks) {
  return {rows * rank / ranks, rows * (rank + 1) / ranks};
}

std::vector<std::pair<int64_t, int64_t>> rows_held(const std::vector<int64_t>& rows, EmbeddingSharding how, int rank,
                                                   int ranks) {
  const auto owner = how == EmbeddingSharding::table ? place_tables_by_rows(rows, ranks) : std::vector<int>{};
  std::vector<std::pair<int64_t, int64_t>> held;
  for (size_t t = 0; t < rows.size(); ++t) {
    if (how == EmbeddingSharding::replicate)
      held.emplace_back(0, rows[t]);
    else if (how == EmbeddingSharding::table)
      held.emplace_back(0, owner[t] == rank ? rows[t] : 0);
    else
      held.push_back(row_range(rows[t], rank, ranks));
  }
  return held;
}

int64_t total_rows(const std::vector<std::pair<int64_t, int64_t>>& held) {
  int64_t total = 0;
  for (const auto& [first, end] : held) total += end - first;
  return total;
}

ShardedEmbeddingBagsImpl::ShardedEmbeddingBagsImpl(const nn::DLRMConfig& c, EmbeddingSharding how, ProcessGroup& group)
    : how_(how), group_(group), dim_(c.embedding_dim) {
  if (how == EmbeddingSharding::replicate)
    throw Error("ShardedEmbeddingBags made for --embedding-sharding replicate (a bug in tbd)");
  const int rank = group.rank(), ranks = group.size();
  if (how == EmbeddingSharding::table) owner_ = place_tables_by_rows(c.table_sizes, ranks);
  held_ = tbd::rows_held(c.table_sizes, how, rank, ranks);
  for (size_t t = 0; t < c.table_sizes.size(); ++t) {
    const int64_t rows = c.table_sizes[t];
    const auto held = held_[t];
    local_.emplace_back(nullptr);
    if (held.second == held.first) continue;
    torch::nn::EmbeddingBag bag(torch::nn::EmbeddingBagOptions(held.second - held.first, c.embedding_dim)
                                    .mode(torch::kSum)
                                    .sparse(c.sparse_gradients));
    nn::init_embedding_rows(bag->weight, static_cast<int64_t>(t), rows, held.first, c.table_seed);
    local_.back() = register_module(std::to_string(t), bag);
  }
}

Tensor ShardedEmbeddingBagsImpl::pool(size_t table, const Tensor& ids, const Tensor& offsets) {
  return local_[table]->forward(ids, offsets);
}

std::vector<Tensor> ShardedEmbeddingBagsImpl::pooled(at::TensorList bags) {
  TORCH_CHECK(bags.size() == 2 * held_.size(), "sharded tables take ids and offsets for each of ", held_.size(),
              " tables");
  return how_ == EmbeddingSharding::table ? table_wise(bags) : row_wise(bags);
}

std::vector<Tensor> ShardedEmbeddingBagsImpl::table_wise(at::TensorList bags) {
  const int ranks = group_.size(), rank = group_.rank();
  const size_t tables = held_.size();
  const int64_t batch = bags[1].size(0);
  std::vector<std::vector<size_t>> owned(static_cast<size_t>(ranks));  // by rank, in table order
  for (size_t t = 0; t < tables; ++t) owned[static_cast<size_t>(owner_[t])].push_back(t);
  const auto& mine = owned[static_cast<size_t>(rank)];
  const int64_t m = static_cast<int64_t>(mine.size());

  // 1. Each table's bag lengths, then ids, to its owner.
  std::vector<Tensor> lengths, ids;
  std::vector<int64_t> send_len_rows, recv_len_rows, send_id_rows;
  for (int q = 0; q < ranks; ++q) {
    int64_t id_rows = 0;
    for (size_t t : owned[static_cast<size_t>(q)]) {
      lengths.push_back(lengths_of(bags[2 * t], bags[2 * t + 1]));
      ids.push_back(bags[2 * t]);
      id_rows += bags[2 * t].size(0);
    }
    send_len_rows.push_back(batch * static_cast<int64_t>(owned[static_cast<size_t>(q)].size()));
    recv_len_rows.push_back(batch * m);
    send_id_rows.push_back(id_rows);
  }
  const auto options = bags[1].options();
  const Tensor no_ids = torch::empty({0}, options);
  const Tensor received_lengths =
      exchange(group_, log_, lengths.empty() ? no_ids : torch::cat(lengths), send_len_rows, recv_len_rows);
  // Per source rank and owned table, how many ids come (read on the host: the splits).
  const auto per_bag = host_values(received_lengths.view({ranks, m, batch}).sum(2).reshape({-1}));
  std::vector<int64_t> recv_id_rows;
  for (int q = 0; q < ranks; ++q)
    recv_id_rows.push_back(std::accumulate(per_bag.begin() + q * m, per_bag.begin() + (q + 1) * m, int64_t{0}));
  const Tensor received_ids =
      exchange(group_, log_, ids.empty() ? no_ids : torch::cat(ids), send_id_rows, recv_id_rows);

  // 2. Pool each owned table over the N·B samples of all ranks, source by source.
  const auto pieces = received_ids.split_with_sizes(per_bag);
  const auto length_rows = received_lengths.view({ranks, m, batch});
  std::vector<Tensor> pooled_here;
  for (int64_t k = 0; k < m; ++k) {
    std::vector<Tensor> table_ids, table_lengths;
    for (int q = 0; q < ranks; ++q) {
      table_ids.push_back(pieces[q * m + k]);
      table_lengths.push_back(length_rows[q][k]);
    }
    pooled_here.push_back(pool(mine[k], torch::cat(table_ids), starts_of(torch::cat(table_lengths))));
  }

  // 3. Each rank's B rows back to it: [N, m, B, d] by destination.
  Tensor send = m == 0 ? torch::zeros({0, dim_}, bags[0].options().dtype(torch::kFloat))
                       : torch::stack(pooled_here).view({m, ranks, batch, dim_}).transpose(0, 1).reshape({-1, dim_});
  std::vector<int64_t> send_rows(static_cast<size_t>(ranks), m * batch), recv_rows;
  for (int q = 0; q < ranks; ++q)
    recv_rows.push_back(batch * static_cast<int64_t>(owned[static_cast<size_t>(q)].size()));
  const Tensor received =
      ExchangeRows::apply(differentiable(send), &group_, &log_, send_rows, recv_rows, 1.0 / static_cast<double>(ranks));
  std::vector<Tensor> out(tables);
  int64_t row = 0;
  for (int q = 0; q < ranks; ++q)
    for (size_t t : owned[static_cast<size_t>(q)]) {
      out[t] = received.narrow(0, row, batch);
      row += batch;
    }
  return out;
}

std::vector<Tensor> ShardedEmbeddingBagsImpl::row_wise(at::TensorList bags) {
  const int ranks = group_.size();
  const int64_t tables = static_cast<int64_t>(held_.size());
  const int64_t batch = bags[1].size(0);

  // 1. Every rank's bags (lengths, then ids) to every rank.
  std::vector<Tensor> lengths, ids;
  for (int64_t t = 0; t < tables; ++t) {
    lengths.push_back(lengths_of(bags[2 * t], bags[2 * t + 1]));
    ids.push_back(bags[2 * t]);
  }
  const Tensor all_lengths = torch::cat(lengths), all_ids = torch::cat(ids);
  const std::vector<int64_t> len_rows(static_cast<size_t>(ranks), tables * batch);
  const Tensor received_lengths = exchange(group_, log_, all_lengths.repeat({ranks}), len_rows, len_rows);
  const auto per_bag = host_values(received_lengths.view({ranks, tables, batch}).sum(2).reshape({-1}));
  std::vector<int64_t> recv_id_rows;
  for (int q = 0; q < ranks; ++q)
    recv_id_rows.push_back(
        std::accumulate(per_bag.begin() + q * tables, per_bag.begin() + (q + 1) * tables, int64_t{0}));
  const Tensor received_ids = exchange(group_, log_, all_ids.repeat({ranks}),
                                       std::vector<int64_t>(static_cast<size_t>(ranks), all_ids.size(0)), recv_id_rows);

  // 2. Per table, the partial sums of this rank's rows for all N·B samples.
  const auto pieces = received_ids.split_with_sizes(per_bag);
  const auto length_rows = received_lengths.view({ranks, tables, batch});
  const int64_t samples = ranks * batch;
  std::vector<Tensor> partial;
  for (int64_t t = 0; t < tables; ++t) {
    const auto [first, end] = held_[static_cast<size_t>(t)];
    if (end == first) {
      partial.push_back(torch::zeros({samples, dim_}, bags[0].options().dtype(torch::kFloat)));
      continue;
    }
    std::vector<Tensor> table_ids, table_lengths;
    for (int q = 0; q < ranks; ++q) {
      table_ids.push_back(pieces[q * tables + t]);
      table_lengths.push_back(length_rows[q][t]);
    }
    const Tensor table_all = torch::cat(table_ids), lengths_all = torch::cat(table_lengths);
    const Tensor sample = torch::repeat_interleave(torch::arange(samples, lengths_all.options()), lengths_all);
    const Tensor here = (table_all >= first) & (table_all < end);
    const Tensor local_lengths = torch::bincount(sample.masked_select(here), {}, samples);
    partial.push_back(pool(static_cast<size_t>(t), table_all.masked_select(here) - first, starts_of(local_lengths)));
  }

  // 3. Each rank's B rows of every table to it; it sums the N senders' parts.
  const Tensor send = torch::stack(partial).view({tables, ranks, batch, dim_}).transpose(0, 1).reshape({-1, dim_});
  const Tensor received =
      ExchangeRows::apply(differentiable(send), &group_, &log_, len_rows, len_rows, 1.0 / static_cast<double>(ranks));
  const Tensor summed = received.view({ranks, tables, batch, dim_}).sum(0);
  std::vector<Tensor> out;
  for (int64_t t = 0; t < tables; ++t) out.push_back(summed[t]);
  return out;
}

}  // namespace tbd
