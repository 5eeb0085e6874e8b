#include "tbd/dist/sharded_data_parallel.h"

#include <torch/nn/module.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "tbd/core/error.h"
#include "tbd/core/zero_memory.h"
#include "tbd/dist/gradient_ready_hook.h"

namespace tbd {

namespace {

// The parameter's elements as they lie in memory, as one 1-D view (any
// dense layout: channels-last weights too), detached from autograd.
torch::Tensor flat_view(const torch::Tensor& t) { return t.detach().as_strided({t.numel()}, {1}, t.storage_offset()); }

// `flat` (a slot of numel elements) seen with the parameter's sizes and
// strides, so copying a gradient of any layout into it lands each element
// where the parameter's memory order has it.
torch::Tensor shaped_like(const torch::Tensor& flat, const torch::Tensor& param) {
  return flat.as_strided(param.sizes(), param.strides(), flat.storage_offset());
}

int64_t total_bytes(const std::vector<torch::Tensor>& tensors) {
  int64_t sum = 0;
  for (const auto& t : tensors)
    if (t.defined()) sum += t.numel() * static_cast<int64_t>(t.element_size());
  return sum;
}

// Bytes of optimizer state per parameter element, by the optimizer's kind
// and options (fp32 state): SGD's momentum buffer, Adam's two moments (a
// third with amsgrad), RMSprop's square average (and momentum, and the
// centred mean). -1: an optimizer this table does not know.
double state_bytes_per_element(const torch::optim::Optimizer& o) {
  const auto& options = o.param_groups().front().options();
  if (const auto* sgd = dynamic_cast<const torch::optim::SGDOptions*>(&options)) return sgd->momentum() > 0 ? 4 : 0;
  if (const auto* adam = dynamic_cast<const torch::optim::AdamOptions*>(&options)) return adam->amsgrad() ? 12 : 8;
  if (const auto* adamw = dynamic_cast<const torch::optim::AdamWOptions*>(&options)) return adamw->amsgrad() ? 12 : 8;
  if (const auto* rms = dynamic_cast<const torch::optim::RMSpropOptions*>(&options))
    return 4 + (rms->momentum() > 0 ? 4 : 0) + (rms->centered() ? 4 : 0);
  return -1;
}

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A tensor's memory, freed or made again in place: every view of its
// storage (the parameters, and the views of them autograd saved in forward)
// sees the change, as FSDP's storage resize does.
void free_storage(const torch::Tensor& t) {
  c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
  storage->set_data_ptr_noswap(c10::DataPtr(nullptr, storage->device()));
  storage->set_nbytes(0);
}

void allocate_storage(const torch::Tensor& t) {
  c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
  const size_t bytes = t.nbytes();
  storage->set_data_ptr_noswap(storage->allocator()->allocate(bytes));
  storage->set_nbytes(bytes);
}

}  // namespace

ShardedDataParallel::ShardedDataParallel(std::vector<torch::Tensor> parameters,
                                         std::vector<torch::optim::Optimizer*> optimizers,
                                         std::vector<std::shared_ptr<torch::nn::Module>> units, ProcessGroup& group,
                                         int64_t bucket_bytes, bool overlap, Sharding stage,
                                         c10::ScalarType run_precision)
    : run_precision_(run_precision), group_(group), overlap_(overlap), stage_(stage) {
  if (stage == Sharding::none) throw Error("ShardedDataParallel made for --sharding none (a bug in tbd)");
  if (optimizers.empty())
    throw UsageError("this workload does not expose its optimizer to sharding; run it with --sharding none");
  if (stage == Sharding::full && units.empty())
    throw UsageError(
        "--sharding full gathers each wrapping unit of the model just before it computes, and this workload's "
        "model declares none; use --sharding gradients (ZeRO-2) or none");
  // Full under mixed precision: what autocast casts is gathered in the run's precision.
  std::set<const c10::TensorImpl*> cast;
  if (stage == Sharding::full)
    for (const auto& unit : units)
      for (const auto& p : nn::parameters_cast_by_autocast(*unit)) cast.insert(p.unsafeGetTensorImpl());
  std::vector<GradientShape> shapes;
  for (auto& p : parameters) {
    if (!p.requires_grad()) continue;  // frozen: replicated, never stepped
    if (!p.is_non_overlapping_and_dense())
      throw UsageError("a parameter of shape " + c10::str(p.sizes()) +
                       " is not dense in memory, so it cannot be cut into flat shards; run with --sharding none");
    const bool low = cast.contains(p.unsafeGetTensorImpl()) && p.is_floating_point() &&
                     static_cast<int64_t>(c10::elementSize(run_precision)) < static_cast<int64_t>(p.element_size());
    params_.push_back(p);
    flat_params_.push_back(flat_view(p));
    gathered_in_run_precision_.push_back(low);
    // Parameters gathered in another precision make another bucket of the unit.
    shapes.push_back({.elements = p.numel(),
                      .element_size = static_cast<int64_t>(p.element_size()),
                      .kind = std::string(c10::toString(p.scalar_type())) + "@" + p.device().str() +
                              (low ? std::string(" gathered as ") + c10::toString(run_precision) : "")});
  }
  bucket_of_.assign(params_.size(), 0);
  offset_of_.assign(params_.size(), 0);
  unit_of_.assign(params_.size(), -1);
  if (stage == Sharding::full) set_up_units(units, bucket_bytes, shapes);
  std::vector<size_t> root;
  for (size_t k = 0; k < params_.size(); ++k)
    if (unit_of_[k] < 0) root.push_back(k);
  add_buckets(root, shapes, bucket_bytes, -1);
  std::map<const c10::TensorImpl*, std::vector<size_t>> pieces_of;  // parameter -> its pieces on this rank
  for (size_t k = 0; k < pieces_.size(); ++k)
    pieces_of[params_[pieces_[k].layout.param].unsafeGetTensorImpl()].push_back(k);
  // Each optimizer now steps this rank's pieces of its parameters, with the
  // same groups and options; its state is made lazily, for the pieces.
  for (auto* o : optimizers) {
    if (!o->state().empty()) throw Error("sharding was set up after the optimizer's first step (a bug in tbd)");
    for (auto& g : o->param_groups()) {
      std::vector<torch::Tensor> mine;
      for (const auto& p : g.params()) {
        const auto it = pieces_of.find(p.unsafeGetTensorImpl());
        if (it == pieces_of.end()) {
          bool known = false;
          for (const auto& q : params_) known = known || q.is_same(p);
          if (!known)
            throw Error(
                "an optimizer steps a tensor that is not among the model's trainable parameters, so it "
                "cannot be sharded (a bug in tbd)");
          continue;  // a parameter wholly on other ranks
        }
        for (size_t k : it->second) mine.push_back(pieces_[k].tensor);
      }
      g.params() = std::move(mine);
    }
    optimizers_.push_back(o);
  }
  for (size_t k = 0; k < params_.size(); ++k)
    GradientReadyHook::attach(params_[k], [this, k] { on_gradient_ready(k); });
  hooked_ = true;
  if (!units_.empty()) nn::attach_unit_sharder(this);
}

void ShardedDataParallel::set_up_units(const std::vector<std::shared_ptr<torch::nn::Module>>& units,
                                       int64_t bucket_bytes, const std::vector<GradientShape>& shapes) {
  std::map<const c10::TensorImpl*, size_t> index;
  for (size_t k = 0; k < params_.size(); ++k) index[params_[k].unsafeGetTensorImpl()] = k;
  for (const auto& module : units) {
    std::vector<size_t> members;
    for (const auto& p : module->parameters()) {
      const auto it = index.find(p.unsafeGetTensorImpl());
      if (it == index.end() || unit_of_[it->second] >= 0) continue;  // frozen, or in an earlier unit
      unit_of_[it->second] = static_cast<int>(units_.size());
      members.push_back(it->second);
    }
    if (members.empty()) continue;  // nothing trainable to shard
    std::set<std::string> kinds;
    for (size_t k : members)
      kinds.insert(std::string(c10::toString(params_[k].scalar_type())) + "@" + params_[k].device().str());
    if (kinds.size() != 1)
      throw UsageError(
          "a wrapping unit of this model mixes parameters of different types or devices, which one "
          "flat shard cannot hold; run with --sharding gradients");
    const size_t u = units_.size();
    unit_of_module_[module.get()] = u;
    units_.emplace_back();
    add_buckets(members, shapes, bucket_bytes, static_cast<int>(u));
    // Whole as made: freed now, until its first use.
    units_[u].parameters = members.size();
    units_[u].gathered = true;
    for (size_t b : units_[u].buckets) gathered_bytes_ += static_cast<int64_t>(buckets_[b].whole.nbytes());
    release(u);
  }
}

void ShardedDataParallel::add_buckets(const std::vector<size_t>& members, const std::vector<GradientShape>& shapes,
                                      int64_t bucket_bytes, int unit) {
  if (members.empty()) return;
  std::vector<GradientShape> subset;
  for (size_t k : members) subset.push_back(shapes[k]);
  // A unit is one bucket per gathered precision: its parameters are gathered and freed together.
  auto layouts = shard_buckets(subset, unit < 0 ? bucket_bytes : std::numeric_limits<int64_t>::max(), group_.size(),
                               group_.rank());
  for (auto& layout : layouts) {
    for (auto& m : layout.members) m = members[m];  // indices into params_ from here on
    for (auto& piece : layout.pieces) piece.param = members[piece.param];
    const size_t b = buckets_.size();
    for (size_t i = 0; i < layout.members.size(); ++i) {
      bucket_of_[layout.members[i]] = b;
      offset_of_[layout.members[i]] = layout.offsets[i];
    }
    Bucket bucket;
    bucket.unit = unit;
    if (unit >= 0) {
      units_[static_cast<size_t>(unit)].buckets.push_back(b);
      const size_t first = layout.members.front();
      torch::NoGradGuard no_grad;
      // The exact values, of which this rank keeps its slice; the whole
      // buffer is their cast when gathered in the run's precision.
      auto master = torch::zeros({layout.padded}, params_[first].options().requires_grad(false));
      for (size_t i = 0; i < layout.members.size(); ++i) {
        const auto& p = params_[layout.members[i]];
        shaped_like(master.narrow(0, layout.offsets[i], p.numel()), p).copy_(p.detach());
      }
      bucket.shard = master.narrow(0, group_.rank() * layout.shard, layout.shard).clone();
      bucket.whole = gathered_in_run_precision_[first] ? master.to(run_precision_) : master;
      for (size_t i = 0; i < layout.members.size(); ++i) {
        auto& p = params_[layout.members[i]];
        p.set_data(shaped_like(bucket.whole.narrow(0, layout.offsets[i], p.numel()), p));  // a view of the buffer
        flat_params_[layout.members[i]] = flat_view(p);
      }
    }
    pieces_of_bucket_.resize(b + 1);
    for (const auto& piece : layout.pieces) {
      torch::Tensor view = unit >= 0 ? bucket.shard.narrow(0, piece.shard_offset, piece.length)
                                     : flat_params_[piece.param].narrow(0, piece.param_offset, piece.length);
      pieces_of_bucket_[b].push_back(pieces_.size());
      pieces_.push_back({b, piece, view});
    }
    bucket.layout = std::move(layout);
    buckets_.push_back(std::move(bucket));
  }
}

ShardedDataParallel::~ShardedDataParallel() {
  // Parameters may outlive this object; their hooks must not call into it.
  if (!units_.empty()) nn::attach_unit_sharder(nullptr);
  if (hooked_)
    for (auto& p : params_) GradientReadyHook::detach(p);
}

void ShardedDataParallel::expect_backward(bool completes_step) {
  std::lock_guard<std::mutex> lock(mutex_);
  reducing_ = completes_step;
}

void ShardedDataParallel::on_gradient_ready(size_t k) {
  std::lock_guard<std::mutex> lock(mutex_);
  notice_completions();
  const int unit = unit_of_[k];
  if (reducing_ && overlap_) {
    Bucket& b = buckets_[bucket_of_[k]];
    if (!b.launched) {  // launched: a second backward before the step, not supported; keep the first
      take_gradient(k);
      if (++b.ready == static_cast<int>(b.layout.members.size())) launch(b);
    }
  } else if (gathered_in_run_precision_[k]) {
    // A bf16 .grad would add up the micro-batches in bf16: into fp32 now.
    take_gradient(k);
  }
  // Every use of a parameter in backward is done when autograd accumulates
  // its gradient; when all of a unit's are, its parameters can go.
  if (unit >= 0) {
    Unit& u = units_[static_cast<size_t>(unit)];
    if (++u.gradients_ready == u.parameters) release(static_cast<size_t>(unit));
  }
}

void ShardedDataParallel::take_gradient(size_t k) {
  Bucket& b = buckets_[bucket_of_[k]];
  auto& grad = params_[k].mutable_grad();
  // fp32 (the shard's type) whatever the precision the unit was gathered in.
  if (!b.flat.defined())
    b.flat = torch::zeros({b.layout.padded}, params_[k]
                                                 .options()
                                                 .dtype(b.unit >= 0 ? b.shard.scalar_type() : params_[k].scalar_type())
                                                 .requires_grad(false));
  if (!grad.defined()) return;  // no gradient this step: its slot stays zero
  if (grad.is_sparse())
    throw UsageError("a parameter of shape " + c10::str(params_[k].sizes()) +
                     " has sparse gradients (an embedding table), which sharding does not cut; run with "
                     "--sharding none");
  torch::NoGradGuard no_grad;
  // Added: earlier micro-batches may be there already (gathered in the run's precision).
  shaped_like(b.flat.narrow(0, offset_of_[k], params_[k].numel()), params_[k]).add_(grad);
  grad.reset();  // the bucket holds it now
}

void ShardedDataParallel::launch(Bucket& b) {
  b.launched = true;
  if (stage_ != Sharding::optimizer) {
    b.slice = torch::empty({b.layout.shard}, b.flat.options());
    b.pending = record("reduce-scatter", static_cast<int64_t>(b.flat.nbytes()),
                       [&](std::function<void()> done) { return group_.reduce_scatter_sum(b.slice, b.flat, done); });
    // A bucket whose reduce-scatter has ended needs its whole flat no more:
    // only the slice stays. And at most kFlatsInFlight whole flats wait on
    // the wire: beyond that the oldest is awaited (the rate limit FSDP puts
    // on its all-gathers), or, where the collectives fall behind backward
    // (Gloo on a busy CPU), every bucket's flat would pile up at once.
    reducing_order_.push_back(static_cast<size_t>(&b - buckets_.data()));
    std::erase_if(reducing_order_, [this](size_t k) {
      if (!buckets_[k].pending->done()) return false;
      finish_reduce_scatter(buckets_[k]);
      return true;
    });
    while (reducing_order_.size() > kFlatsInFlight) {
      finish_reduce_scatter(buckets_[reducing_order_.front()]);
      reducing_order_.erase(reducing_order_.begin());
    }
  } else {
    b.pending = record("all-reduce", static_cast<int64_t>(b.flat.nbytes()),
                       [&](std::function<void()> done) { return group_.allreduce_sum(b.flat, done); });
  }
}

void ShardedDataParallel::finish_reduce_scatter(Bucket& b) {
  wait(*b.pending);
  // The collective's work object holds its input too: both go, the slice stays.
  b.pending.reset();
  b.flat = torch::Tensor();
}

void ShardedDataParallel::synchronize() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& b : buckets_) {
      if (b.launched) continue;
      // Overlap off, or a parameter that got no gradient in this backward:
      // take what .grad holds (the hooked ones already gave theirs).
      for (size_t k : b.layout.members) take_gradient(k);
      launch(b);
    }
  }
  for (auto& b : buckets_)
    if (b.pending) wait(*b.pending);  // null: finished during backward
  reducing_order_.clear();
  torch::NoGradGuard no_grad;
  const double scale = 1.0 / group_.size();
  for (auto& b : buckets_) {
    if (stage_ != Sharding::optimizer) {
      b.flat = torch::Tensor();  // the reduce-scatter has read it
    } else {
      b.slice = b.flat.narrow(0, group_.rank() * b.layout.shard, b.layout.shard);
    }
    b.slice.mul_(scale);
    b.pending.reset();
    b.ready = 0;
    b.launched = false;
  }
  for (auto& piece : pieces_)
    piece.tensor.mutable_grad() =
        buckets_[piece.bucket].slice.narrow(0, piece.layout.shard_offset, piece.layout.length);
  // Units gathered but not freed by their gradients (a parameter that got
  // none, a prefetch nothing used) go now; the next forward learns its order.
  for (size_t u = 0; u < units_.size(); ++u) release(u);
  order_known_ = order_known_ || !forward_order_.empty();
}

double ShardedDataParallel::clip_global_norm(double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> grads;
  for (const auto& piece : pieces_)
    if (piece.tensor.grad().defined()) grads.push_back(piece.tensor.grad());
  const auto options = params_.empty() ? torch::TensorOptions() : params_.front().options().requires_grad(false);
  auto squares = grads.empty() ? torch::zeros({1}, options.dtype(torch::kFloat))
                               : torch::stack(at::_foreach_norm(grads, 2)).pow(2).sum().reshape({1}).to(torch::kFloat);
  wait(*record("all-reduce", static_cast<int64_t>(squares.nbytes()),
               [&](std::function<void()> done) { return group_.allreduce_sum(squares, done); }));
  const torch::Tensor total = squares.sqrt().squeeze();
  // torch.nn.utils.clip_grad_norm_'s rule, as clip_gradients applies it.
  const torch::Tensor coefficient = (max_norm / (total + 1e-6)).clamp_max(1.0);
  if (!grads.empty()) at::_foreach_mul_(grads, coefficient);
  return total.item<double>();
}

void ShardedDataParallel::after_optimizer_step() {
  torch::NoGradGuard no_grad;
  for (auto& piece : pieces_) piece.tensor.mutable_grad().reset();
  for (auto& p : params_) p.mutable_grad().reset();
  for (auto& bucket : buckets_) {
    bucket.flat = torch::Tensor();  // the gradients' memory goes back
    bucket.slice = torch::Tensor();
  }
  // The whole parameters' buckets (a unit's shard was updated in place; its
  // next use gathers it): each rank's updated slice all-gathered back into
  // the parameters, kFlatsInFlight buckets at a time, so the gathered copies
  // add at most that many buckets to the memory, not a second set of weights.
  struct InFlight {
    size_t bucket;
    torch::Tensor sent, gathered;
    std::shared_ptr<PendingReduce> pending;
  };
  std::vector<InFlight> in_flight;
  const auto finish = [&](InFlight& f) {
    wait(*f.pending);
    const auto& layout = buckets_[f.bucket].layout;
    for (size_t i = 0; i < layout.members.size(); ++i) {
      const size_t k = layout.members[i];
      flat_params_[k].copy_(f.gathered.narrow(0, layout.offsets[i], params_[k].numel()));
    }
  };
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const Bucket& bucket = buckets_[b];
    if (bucket.unit >= 0) continue;
    const auto options = params_[bucket.layout.members.front()].options().requires_grad(false);
    InFlight f{b, torch::zeros({bucket.layout.shard}, options), torch::empty({bucket.layout.padded}, options), nullptr};
    for (size_t k : pieces_of_bucket_[b])
      f.sent.narrow(0, pieces_[k].layout.shard_offset, pieces_[k].layout.length).copy_(pieces_[k].tensor);
    f.pending = record("all-gather", static_cast<int64_t>(f.gathered.nbytes()),
                       [&](std::function<void()> done) { return group_.allgather_into(f.gathered, f.sent, done); });
    in_flight.push_back(std::move(f));
    if (in_flight.size() > kFlatsInFlight) {
      finish(in_flight.front());
      in_flight.erase(in_flight.begin());
    }
  }
  for (auto& f : in_flight) finish(f);
}

bool ShardedDataParallel::holds(const torch::nn::Module& unit) const {
  return !unsharded_ && unit_of_module_.contains(&unit);
}

void ShardedDataParallel::before_forward(const torch::nn::Module& module) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t u = unit_of_module_.at(&module);
  if (!order_known_ && std::find(forward_order_.begin(), forward_order_.end(), u) == forward_order_.end())
    forward_order_.push_back(u);
  wait_gathered(u);
  units_[u].gradients_ready = 0;
  const int next = neighbour_in_forward(u, +1);
  if (next >= 0) gather(static_cast<size_t>(next));  // prefetched while this unit computes
}

torch::Tensor ShardedDataParallel::after_forward(const torch::nn::Module& module, const torch::Tensor& output) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t u = unit_of_module_.at(&module);
  release(u);
  if (!torch::GradMode::is_enabled() || !output.requires_grad()) return output;
  // Runs when the gradient of the unit's output arrives, before the unit's
  // own backward (its recomputation too, with activation checkpointing).
  output.register_hook([this, u](const torch::Tensor&) { before_backward(u); });
  return output;
}

void ShardedDataParallel::before_backward(size_t u) {
  std::lock_guard<std::mutex> lock(mutex_);
  wait_gathered(u);
  const int previous = neighbour_in_forward(u, -1);
  if (previous >= 0) gather(static_cast<size_t>(previous));  // the next unit backward reaches
}

int ShardedDataParallel::neighbour_in_forward(size_t u, int step) const {
  const auto it = std::find(forward_order_.begin(), forward_order_.end(), u);
  if (it == forward_order_.end()) return -1;
  const auto i = (it - forward_order_.begin()) + step;
  return i >= 0 && i < static_cast<std::ptrdiff_t>(forward_order_.size()) ? static_cast<int>(forward_order_[i]) : -1;
}

std::shared_ptr<PendingReduce> ShardedDataParallel::record(
    const char* kind, int64_t bytes,
    const std::function<std::shared_ptr<PendingReduce>(std::function<void()>)>& start) {
  if (!recording_) return start(nullptr);
  auto c = std::make_shared<Collective>();
  c->kind = kind;
  c->bytes = bytes;
  c->launched_s = seconds_now();
  // Weak: the backend keeps the callback until the collective completes.
  auto pending = start([weak = std::weak_ptr<Collective>(c)] {
    if (auto alive = weak.lock()) alive->done_s.store(seconds_now());
  });
  c->pending = pending;
  notice_completions();
  history_.collectives.push_back(c);
  return pending;
}

void ShardedDataParallel::record_history() {
  std::lock_guard<std::mutex> lock(mutex_);
  recording_ = true;
}

void ShardedDataParallel::notice_completions() {
  const double now = seconds_now();
  for (auto& c : history_.collectives)
    if (c->done_s.load() < 0)
      if (const auto pending = c->pending.lock(); pending && pending->done()) c->done_s.store(now);
}

void ShardedDataParallel::wait(PendingReduce& pending) {
  const double begin = seconds_now();
  pending.wait();
  const double end = seconds_now();
  history_.blocked_s += end - begin;
  // Gloo's all-gathers report no completion: the first moment they are
  // seen done stands for it (an upper bound).
  for (auto& c : history_.collectives)
    if (c->pending.lock().get() == &pending) {
      if (c->done_s.load() < 0) c->done_s.store(end);
      c->device_seconds = pending.device_seconds();
    }
  notice_completions();
}

ShardedDataParallel::CommHistory ShardedDataParallel::take_history() {
  std::lock_guard<std::mutex> lock(mutex_);
  CommHistory taken = std::move(history_);
  history_ = CommHistory();
  return taken;
}

void ShardedDataParallel::gather(size_t u) {
  Unit& unit = units_[u];
  if (unit.gathered || gathering(unit)) return;
  for (size_t b : unit.buckets) {
    Bucket& bucket = buckets_[b];
    allocate_storage(bucket.whole);
    gathered_bytes_ += static_cast<int64_t>(bucket.whole.nbytes());
    if (gather_observer_) gather_observer_(bucket.whole);
    bucket.sent = bucket.shard.to(bucket.whole.scalar_type());  // the shard itself when they agree
    bucket.gathering =
        record("all-gather", static_cast<int64_t>(bucket.whole.nbytes()),
               [&](std::function<void()> done) { return group_.allgather_into(bucket.whole, bucket.sent, done); });
  }
  peak_gathered_bytes_ = std::max(peak_gathered_bytes_, gathered_bytes_);
}

void ShardedDataParallel::finish_gathers(Unit& unit) {
  for (size_t b : unit.buckets) {
    Bucket& bucket = buckets_[b];
    if (!bucket.gathering) continue;
    wait(*bucket.gathering);
    bucket.gathering.reset();
    bucket.sent = torch::Tensor();
  }
}

bool ShardedDataParallel::gathering(const Unit& unit) const {
  return std::any_of(unit.buckets.begin(), unit.buckets.end(), [this](size_t b) { return buckets_[b].gathering; });
}

void ShardedDataParallel::wait_gathered(size_t u) {
  Unit& unit = units_[u];
  gather(u);
  finish_gathers(unit);
  unit.gathered = true;
}

void ShardedDataParallel::release(size_t u) {
  Unit& unit = units_[u];
  unit.gradients_ready = 0;
  if (unsharded_ || (!unit.gathered && !gathering(unit))) return;
  finish_gathers(unit);  // memory being written: let the collectives end first
  for (size_t b : unit.buckets) {
    free_storage(buckets_[b].whole);
    gathered_bytes_ -= static_cast<int64_t>(buckets_[b].whole.nbytes());
  }
  unit.gathered = false;
}

void ShardedDataParallel::unshard() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (units_.empty() || unsharded_) return;
  // What follows training reads the exact weights: the buckets gathered in
  // the run's precision become fp32 buffers, of which the parameters are views.
  for (size_t u = 0; u < units_.size(); ++u) release(u);
  for (auto& bucket : buckets_) {
    if (bucket.unit < 0 || bucket.whole.scalar_type() == bucket.shard.scalar_type()) continue;
    torch::NoGradGuard no_grad;
    bucket.whole = torch::empty({bucket.layout.padded}, bucket.shard.options());
    for (size_t i = 0; i < bucket.layout.members.size(); ++i) {
      const size_t k = bucket.layout.members[i];
      params_[k].set_data(
          shaped_like(bucket.whole.narrow(0, bucket.layout.offsets[i], params_[k].numel()), params_[k]));
      flat_params_[k] = flat_view(params_[k]);
    }
    free_storage(bucket.whole);  // gather allocates it
  }
  for (size_t u = 0; u < units_.size(); ++u) gather(u);
  for (size_t u = 0; u < units_.size(); ++u) wait_gathered(u);
  unsharded_ = true;
  nn::attach_unit_sharder(nullptr);
}

void ShardedDataParallel::set_gather_observer(std::function<void(const torch::Tensor&)> observer) {
  std::lock_guard<std::mutex> lock(mutex_);
  gather_observer_ = std::move(observer);
}

std::vector<torch::Tensor> ShardedDataParallel::parameter_shards() const {
  std::vector<torch::Tensor> all;
  for (const auto& b : buckets_)
    if (b.unit >= 0) all.push_back(b.shard);
  return all;
}

std::vector<torch::Tensor> ShardedDataParallel::gathered_parameters() const {
  std::vector<torch::Tensor> all;
  for (const auto& u : units_)
    if (u.gathered || gathering(u))
      for (size_t b : u.buckets) all.push_back(buckets_[b].whole);
  return all;
}

std::vector<torch::Tensor> ShardedDataParallel::gradient_buffers() const {
  std::vector<torch::Tensor> all;
  for (const auto& b : buckets_) {
    if (b.flat.defined()) all.push_back(b.flat);
    if (stage_ != Sharding::optimizer && b.slice.defined()) all.push_back(b.slice);
  }
  return all;
}

nlohmann::json ShardedDataParallel::describe(const std::vector<torch::Tensor>& optimizer_state) const {
  const int n = group_.size();
  const bool full = stage_ == Sharding::full;
  const int zero = zero_stage(stage_);
  int64_t elements = 0, padded = 0, shard = 0, weight_bytes = 0, root_elements = 0, largest_unit_bytes = 0;
  for (size_t k = 0; k < params_.size(); ++k)
    if (unit_of_[k] < 0) {
      weight_bytes += params_[k].numel() * static_cast<int64_t>(params_[k].element_size());
      root_elements += params_[k].numel();
    }
  int64_t gathered_in_run_precision = 0, gathered_in_fp32 = 0;
  for (const auto& u : units_) {
    int64_t unit_bytes = 0;
    for (size_t b : u.buckets) {
      const Bucket& bucket = buckets_[b];
      weight_bytes += static_cast<int64_t>(bucket.shard.nbytes());
      unit_bytes += static_cast<int64_t>(bucket.whole.nbytes());
      (bucket.whole.scalar_type() == bucket.shard.scalar_type() ? gathered_in_fp32 : gathered_in_run_precision) +=
          bucket.layout.elements;
    }
    largest_unit_bytes = std::max(largest_unit_bytes, unit_bytes);
  }
  for (const auto& b : buckets_) {
    elements += b.layout.elements;
    padded += b.layout.padded;
    shard += b.layout.shard;
  }
  // What the rank holds from backward to the step: the padded buckets
  // (all-reduce) or its slices of them (reduce-scatter), fp32.
  const int64_t gradient_bytes = 4 * (zero >= 2 ? shard : padded);
  const int64_t state_bytes = total_bytes(optimizer_state);
  double per_element = -1;
  for (const auto* o : optimizers_) per_element = std::max(per_element, state_bytes_per_element(*o));
  const double psi = static_cast<double>(elements), root = static_cast<double>(root_elements);
  nlohmann::json formula = {
      {"weights", full ? 4 * root + 4 * (psi - root) / n : 4 * psi},
      {"gradients", zero >= 2 ? 4 * psi / n : 4 * psi},
      {"optimizer_state", per_element >= 0 ? nlohmann::json(per_element * psi / n) : nlohmann::json()},
  };
  const int64_t total = weight_bytes + gradient_bytes + state_bytes;
  nlohmann::json out = {
      {"strategy", to_string(stage_)},
      {"zero_stage", zero},
      {"fsdp_name", full        ? nlohmann::json("FULL_SHARD")
                    : zero == 2 ? nlohmann::json("SHARD_GRAD_OP")
                                : nlohmann::json()},
      {"ranks", n},
      {"buckets", buckets_.size()},
      {"trainable_elements", elements},
      {"padding_elements", padded - elements},
      {"gradient_collective", zero >= 2 ? "reduce-scatter" : "all-reduce"},
      {"parameter_collective", "all-gather"},
      {"model_state_bytes_per_rank",
       {{"weights", weight_bytes}, {"gradients", gradient_bytes}, {"optimizer_state", state_bytes}, {"total", total}}},
      {"formula_bytes_per_rank", formula},
      {"definition",
       "bytes this rank holds between steps: the weights (whole; with full, the shards of the wrapping "
       "units' parameters and the root's whole), the gradient buckets between backward and the optimizer "
       "step (optimizer: every bucket, all-reduced; gradients and full: this rank's slice of each, reduce-"
       "scattered), and the optimizer state measured from its tensors; the formula is ZeRO's for Ψ "
       "trainable fp32 elements on N ranks: 4Ψ weights (full: 4Ψ_root + 4(Ψ − Ψ_root)/N, Ψ_root the "
       "elements outside every unit), 4Ψ (ZeRO-1) or 4Ψ/N (ZeRO-2, 3) gradients, KΨ/N optimizer state "
       "with K bytes per element of the optimizer's state (8 for Adam)"}};
  if (full)
    out["units"] = {
        {"count", units_.size()},
        {"root_elements", root_elements},
        {"largest_unit_bytes", largest_unit_bytes},
        {"peak_gathered_bytes", peak_gathered_bytes_},
        {"gathered_precision", c10::toString(gathered_in_run_precision > 0 ? run_precision_ : c10::ScalarType::Float)},
        {"elements_gathered_in_run_precision", gathered_in_run_precision},
        {"elements_gathered_in_fp32", gathered_in_fp32},
        {"gradient_reduce_precision", "Float"},
        {"definition",
         "units: the wrapping units whose parameters are sharded between uses; root_elements: trainable "
         "elements outside every unit, kept whole; largest_unit_bytes: the largest unit gathered; "
         "peak_gathered_bytes: the most memory gathered units held at once in this run (the unit computing, "
         "the one prefetched, the last one freed only when its gradients are all in); gathered_precision: "
         "the type the units' linear and convolution weights are gathered in (the run's precision "
         "under autocast, as FSDP's MixedPrecision param_dtype; the other elements_gathered_in_fp32 stay "
         "fp32); gradients are reduce-scattered in fp32 (reduce_dtype)"}};
  return out;
}

}  // namespace tbd
