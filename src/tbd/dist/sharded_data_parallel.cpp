#include "tbd/dist/sharded_data_parallel.h"

#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <functional>
#include <map>
#include <string>

#include "tbd/core/error.h"

namespace tbd {

namespace {

// Runs after autograd has added a backward's gradient into .grad.
class GradientReadyHook final : public torch::autograd::PostAccumulateGradHook {
 public:
  explicit GradientReadyHook(std::function<void()> ready) : ready_(std::move(ready)) {}
  void operator()(const torch::autograd::Variable&) override { ready_(); }

 private:
  std::function<void()> ready_;
};

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

}  // namespace

ShardedDataParallel::ShardedDataParallel(std::vector<torch::Tensor> parameters,
                                         std::vector<torch::optim::Optimizer*> optimizers, ProcessGroup& group,
                                         int64_t bucket_bytes, bool overlap, Sharding stage)
    : group_(group), overlap_(overlap), stage_(stage) {
  if (stage != Sharding::optimizer && stage != Sharding::gradients)
    throw UsageError(std::string("--sharding ") + to_string(stage) +
                     " is not available yet: this tbd shards the optimizer state (optimizer, ZeRO-1) and the "
                     "gradients (gradients, ZeRO-2); use one of those or none");
  if (optimizers.empty())
    throw UsageError("this workload does not expose its optimizer to sharding; run it with --sharding none");
  std::vector<GradientShape> shapes;
  for (auto& p : parameters) {
    if (!p.requires_grad()) continue;  // frozen: replicated, never stepped
    if (!p.is_non_overlapping_and_dense())
      throw UsageError("a parameter of shape " + c10::str(p.sizes()) +
                       " is not dense in memory, so it cannot be cut into flat shards; run with --sharding none");
    params_.push_back(p);
    flat_params_.push_back(flat_view(p));
    shapes.push_back({.elements = p.numel(),
                      .element_size = static_cast<int64_t>(p.element_size()),
                      .kind = std::string(c10::toString(p.scalar_type())) + "@" + p.device().str()});
  }
  bucket_of_.assign(params_.size(), 0);
  offset_of_.assign(params_.size(), 0);
  std::map<const c10::TensorImpl*, std::vector<size_t>> pieces_of;  // parameter -> its pieces on this rank
  for (auto& layout : shard_buckets(shapes, bucket_bytes, group.size(), group.rank())) {
    const size_t b = buckets_.size();
    for (size_t i = 0; i < layout.members.size(); ++i) {
      bucket_of_[layout.members[i]] = b;
      offset_of_[layout.members[i]] = layout.offsets[i];
    }
    for (const auto& piece : layout.pieces) {
      pieces_of[params_[piece.param].unsafeGetTensorImpl()].push_back(pieces_.size());
      pieces_.push_back({b, piece, flat_params_[piece.param].narrow(0, piece.param_offset, piece.length)});
    }
    buckets_.push_back({.layout = std::move(layout)});
  }
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
    torch::autograd::impl::set_post_acc_grad_hooks(
        params_[k], std::make_unique<GradientReadyHook>([this, k] { on_gradient_ready(k); }));
  hooked_ = true;
}

ShardedDataParallel::~ShardedDataParallel() {
  // Parameters may outlive this object; their hooks must not call into it.
  if (hooked_)
    for (auto& p : params_) torch::autograd::impl::post_acc_grad_hooks(p).reset();
}

void ShardedDataParallel::expect_backward(bool completes_step) {
  std::lock_guard<std::mutex> lock(mutex_);
  reducing_ = completes_step;
}

void ShardedDataParallel::on_gradient_ready(size_t k) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!reducing_ || !overlap_) return;  // an earlier micro-batch, or everything goes after backward
  Bucket& b = buckets_[bucket_of_[k]];
  if (b.launched) return;  // a second backward before the step: not supported, keep the first
  take_gradient(k);
  if (++b.ready == static_cast<int>(b.layout.members.size())) launch(b);
}

void ShardedDataParallel::take_gradient(size_t k) {
  Bucket& b = buckets_[bucket_of_[k]];
  auto& grad = params_[k].mutable_grad();
  if (!b.flat.defined()) b.flat = torch::zeros({b.layout.padded}, params_[k].options().requires_grad(false));
  if (!grad.defined()) return;  // no gradient this step: its slot stays zero
  if (grad.is_sparse())
    throw UsageError("a parameter of shape " + c10::str(params_[k].sizes()) +
                     " has sparse gradients (an embedding table), which sharding does not cut; run with "
                     "--sharding none");
  torch::NoGradGuard no_grad;
  shaped_like(b.flat.narrow(0, offset_of_[k], params_[k].numel()), params_[k]).copy_(grad);
  grad.reset();  // the bucket holds it now
}

void ShardedDataParallel::launch(Bucket& b) {
  b.launched = true;
  if (stage_ == Sharding::gradients) {
    b.slice = torch::empty({b.layout.shard}, b.flat.options());
    b.pending = group_.reduce_scatter_sum(b.slice, b.flat);
  } else {
    b.pending = group_.allreduce_sum(b.flat, nullptr);
  }
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
  for (auto& b : buckets_) b.pending->wait();
  torch::NoGradGuard no_grad;
  const double scale = 1.0 / group_.size();
  for (auto& b : buckets_) {
    if (stage_ == Sharding::gradients) {
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
}

double ShardedDataParallel::clip_global_norm(double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> grads;
  for (const auto& piece : pieces_)
    if (piece.tensor.grad().defined()) grads.push_back(piece.tensor.grad());
  const auto options = params_.empty() ? torch::TensorOptions() : params_.front().options().requires_grad(false);
  auto squares = grads.empty() ? torch::zeros({1}, options.dtype(torch::kFloat))
                               : torch::stack(at::_foreach_norm(grads, 2)).pow(2).sum().reshape({1}).to(torch::kFloat);
  group_.allreduce_sum(squares, nullptr)->wait();
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
  std::vector<torch::Tensor> gathered(buckets_.size());
  std::vector<torch::Tensor> sent(buckets_.size());
  std::vector<std::shared_ptr<PendingReduce>> pending;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    Bucket& bucket = buckets_[b];
    bucket.flat = torch::Tensor();  // the gradients' memory goes back
    bucket.slice = torch::Tensor();
    const auto options = params_[bucket.layout.members.front()].options().requires_grad(false);
    sent[b] = torch::zeros({bucket.layout.shard}, options);
    gathered[b] = torch::empty({bucket.layout.padded}, options);
  }
  for (const auto& piece : pieces_)
    sent[piece.bucket].narrow(0, piece.layout.shard_offset, piece.layout.length).copy_(piece.tensor);
  for (size_t b = 0; b < buckets_.size(); ++b) pending.push_back(group_.allgather_into(gathered[b], sent[b]));
  for (auto& p : pending) p->wait();
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const auto& layout = buckets_[b].layout;
    for (size_t i = 0; i < layout.members.size(); ++i) {
      const size_t k = layout.members[i];
      flat_params_[k].copy_(gathered[b].narrow(0, layout.offsets[i], params_[k].numel()));
    }
  }
}

std::vector<torch::Tensor> ShardedDataParallel::gradient_buffers() const {
  std::vector<torch::Tensor> all;
  for (const auto& b : buckets_) {
    if (b.flat.defined()) all.push_back(b.flat);
    if (stage_ == Sharding::gradients && b.slice.defined()) all.push_back(b.slice);
  }
  return all;
}

nlohmann::json ShardedDataParallel::describe(const std::vector<torch::Tensor>& optimizer_state) const {
  const int n = group_.size();
  int64_t elements = 0, padded = 0, shard = 0, weight_bytes = 0;
  for (const auto& p : params_) weight_bytes += p.numel() * static_cast<int64_t>(p.element_size());
  for (const auto& b : buckets_) {
    elements += b.layout.elements;
    padded += b.layout.padded;
    shard += b.layout.shard;
  }
  // What the rank holds from backward to the step: the padded buckets
  // (all-reduce) or its slices of them (reduce-scatter), fp32.
  const int64_t gradient_bytes = 4 * (stage_ == Sharding::gradients ? shard : padded);
  const int64_t state_bytes = total_bytes(optimizer_state);
  double per_element = -1;
  for (const auto* o : optimizers_) per_element = std::max(per_element, state_bytes_per_element(*o));
  const double psi = static_cast<double>(elements);
  nlohmann::json formula = {
      {"weights", 4 * psi},
      {"gradients", stage_ == Sharding::gradients ? 4 * psi / n : 4 * psi},
      {"optimizer_state", per_element >= 0 ? nlohmann::json(per_element * psi / n) : nlohmann::json()},
  };
  const int64_t total = weight_bytes + gradient_bytes + state_bytes;
  return {
      {"strategy", to_string(stage_)},
      {"zero_stage", stage_ == Sharding::gradients ? 2 : 1},
      {"fsdp_name", stage_ == Sharding::gradients ? nlohmann::json("SHARD_GRAD_OP") : nlohmann::json()},
      {"ranks", n},
      {"buckets", buckets_.size()},
      {"trainable_elements", elements},
      {"padding_elements", padded - elements},
      {"gradient_collective", stage_ == Sharding::gradients ? "reduce-scatter" : "all-reduce"},
      {"parameter_collective", "all-gather"},
      {"model_state_bytes_per_rank",
       {{"weights", weight_bytes}, {"gradients", gradient_bytes}, {"optimizer_state", state_bytes}, {"total", total}}},
      {"formula_bytes_per_rank", formula},
      {"definition",
       "bytes this rank holds: whole weights, the gradient buckets between backward and the optimizer "
       "step (optimizer: every bucket, all-reduced; gradients: this rank's slice of each, reduce-"
       "scattered), and the optimizer state measured from its tensors; the formula is ZeRO's for Ψ "
       "trainable fp32 elements on N ranks: 4Ψ weights, 4Ψ (ZeRO-1) or 4Ψ/N (ZeRO-2) gradients, KΨ/N "
       "optimizer state with K bytes per element of the optimizer's state (8 for Adam)"}};
}

}  // namespace tbd
