#include "tbd/dist/gradient_reducer.h"

#include <algorithm>

#include "tbd/dist/gradient_buckets.h"
#include "tbd/dist/gradient_ready_hook.h"
#include "tbd/dist/sparse_allreduce.h"

namespace tbd {

namespace {
// A sparse gradient in a bucket (NCCL, or the first iteration) travels densified.
torch::Tensor dense(const torch::Tensor& grad) { return grad.is_sparse() ? grad.to_dense() : grad; }

// A gradient of `g`'s sparse layout (sparse and dense dimensions, sizes)
// with no rows: what a rank without a gradient for the table contributes.
torch::Tensor empty_sparse_like(const torch::Tensor& g) {
  std::vector<int64_t> value_sizes = g.sizes().slice(g.sparse_dim()).vec();
  value_sizes.insert(value_sizes.begin(), 0);
  const auto values = g._values();
  return torch::sparse_coo_tensor(torch::empty({g.sparse_dim(), 0}, values.options().dtype(torch::kLong)),
                                  torch::empty(value_sizes, values.options()), g.sizes());
}

double seconds_of(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}
}  // namespace

GradientReducer::GradientReducer(std::vector<torch::Tensor> parameters, ProcessGroup& group, int64_t bucket_bytes,
                                 bool overlap)
    : bucket_bytes_(bucket_bytes), group_(group), overlap_(overlap) {
  for (auto& p : parameters)
    if (p.requires_grad()) params_.push_back(p);
  has_grad_.assign(params_.size(), false);
  sparse_layout_.resize(params_.size());
  build_buckets(bucket_bytes);
  hooked_ = overlap_;
  if (overlap_)
    for (size_t k = 0; k < params_.size(); ++k) GradientReadyHook::attach(params_[k], [this, k] { on_gradient(k); });
}

void GradientReducer::build_buckets(int64_t bucket_bytes) {
  buckets_.clear();
  bucket_of_.assign(params_.size(), kNoBucket);
  offset_of_.assign(params_.size(), 0);
  std::vector<GradientShape> shapes;
  for (size_t k = 0; k < params_.size(); ++k) {
    const auto& p = params_[k];
    shapes.push_back({.elements = p.numel(),
                      .element_size = static_cast<int64_t>(p.element_size()),
                      .kind = std::string(c10::toString(p.scalar_type())) + "@" + p.device().str(),
                      .sparse = sparse_layout_[k].defined()});
  }
  for (const auto& members : assign_gradient_buckets(shapes, bucket_bytes)) {
    Bucket& b = buckets_.emplace_back();
    for (size_t k : members) {
      bucket_of_[k] = buckets_.size() - 1;
      offset_of_[k] = b.elements;
      b.members.push_back(k);
      b.offsets.push_back(b.elements);
      b.elements += params_[k].numel();
    }
  }
  for (auto& b : buckets_)
    b.flat = torch::zeros({b.elements}, params_[b.members.front()].options().requires_grad(false));
}

GradientReducer::~GradientReducer() {
  // Parameters may outlive the reducer; their hooks must not call into it.
  if (hooked_)
    for (auto& p : params_) GradientReadyHook::detach(p);
}

void GradientReducer::on_gradient(size_t k) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Autograd has added this backward's gradient into .grad: with
  // accumulation, .grad is the sum of every micro-batch so far.
  const torch::Tensor& grad = params_[k].grad();
  if (!grad.defined()) return;
  learn_layout(k, grad);
  if (!reducing_) return;                  // an accumulation micro-batch before the last
  if (bucket_of_[k] == kNoBucket) return;  // sparse: reduced when backward ends
  Bucket& b = buckets_[bucket_of_[k]];
  if (b.launched) return;  // a second backward before the step: not supported, keep the first
  b.flat.narrow(0, offset_of_[k], grad.numel()).copy_(dense(grad).reshape({-1}));
  has_grad_[k] = true;
  if (++b.ready == static_cast<int>(b.members.size())) launch(b);
}

void GradientReducer::launch(Bucket& b) {
  b.launched = true;
  b.launched_at = Clock::now();
  b.done_at = std::make_shared<std::atomic<Clock::rep>>(0);
  b.pending = group_.allreduce_sum(b.flat, [cell = b.done_at] { *cell = Clock::now().time_since_epoch().count(); });
}

void GradientReducer::expect_backward(bool completes_step) {
  std::lock_guard<std::mutex> lock(mutex_);
  reducing_ = completes_step;
}

void GradientReducer::synchronize() {
  const auto wait_begin = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t k = 0; k < params_.size(); ++k) {
      const auto& g = params_[k].grad();
      if (!overlap_ && g.defined()) learn_layout(k, g);
      if (bucket_of_[k] == kNoBucket) continue;
      Bucket& b = buckets_[bucket_of_[k]];
      if (b.launched || (overlap_ && has_grad_[k])) continue;
      // Overlap off, or a parameter that got no gradient: fill from .grad (or zeros).
      auto slot = b.flat.narrow(0, offset_of_[k], params_[k].numel());
      if (g.defined()) {
        slot.copy_(dense(g).reshape({-1}));
        has_grad_[k] = true;
      } else {
        slot.zero_();
      }
    }
    for (auto& b : buckets_)
      if (!b.launched) launch(b);
  }
  const double scale = 1.0 / group_.size();
  CommIteration it;
  reduce_sparse(it, scale);
  for (auto& b : buckets_) b.pending->wait();
  const auto wait_end = Clock::now();

  it.backward_end_s = seconds_of(wait_begin);
  it.wait_end_s = seconds_of(wait_end);
  for (auto& b : buckets_) {
    b.flat.mul_(scale);
    for (size_t i = 0; i < b.members.size(); ++i) {
      const size_t k = b.members[i];
      if (!has_grad_[k]) continue;
      auto avg = b.flat.narrow(0, b.offsets[i], params_[k].numel()).view(params_[k].sizes());
      auto& grad = params_[k].mutable_grad();
      if (grad.defined() && !grad.is_sparse()) {
        grad.copy_(avg);
      } else {
        grad = avg.clone();  // a sparse gradient comes back dense
      }
    }
    // The completion callback may trail wait() by a moment: fall back to the wait's end.
    const Clock::rep done_rep = b.done_at->load();
    const auto done = done_rep != 0 ? std::max(Clock::time_point(Clock::duration(done_rep)), b.launched_at) : wait_end;
    it.buckets.push_back({.bytes = b.flat.numel() * static_cast<int64_t>(b.flat.element_size()),
                          .launched_s = seconds_of(b.launched_at),
                          .done_s = seconds_of(done),
                          .device_seconds = b.pending->device_seconds()});
    b.ready = 0;
    b.launched = false;
    b.pending.reset();
  }
  std::fill(has_grad_.begin(), has_grad_.end(), false);
  std::lock_guard<std::mutex> lock(mutex_);
  if (rebuild_) {
    build_buckets(bucket_bytes_);
    rebuild_ = false;
  }
  history_.push_back(std::move(it));
}

void GradientReducer::learn_layout(size_t k, const torch::Tensor& grad) {
  if (!grad.is_sparse() || !group_.sums_sparse() || sparse_layout_[k].defined()) return;
  // Learned now; reduced densified this once, on its own from the next iteration.
  sparse_layout_[k] = empty_sparse_like(grad);
  rebuild_ = true;
}

void GradientReducer::reduce_sparse(CommIteration& it, double scale) {
  std::vector<torch::Tensor*> gradients;
  for (size_t k = 0; k < params_.size(); ++k) {
    if (bucket_of_[k] != kNoBucket) continue;  // only sparse gradients have no bucket
    auto& grad = params_[k].mutable_grad();
    if (!grad.defined()) grad = sparse_layout_[k].clone();  // every rank joins every collective
    gradients.push_back(&grad);
  }
  if (gradients.empty()) return;
  const auto launched = Clock::now();
  const int64_t bytes = allreduce_sparse_gradients(group_, gradients);
  for (auto* g : gradients) g->mul_(scale);
  // Gloo runs them on its threads; the call returns when they have ended.
  it.buckets.push_back({.bytes = bytes,
                        .launched_s = seconds_of(launched),
                        .done_s = seconds_of(Clock::now()),
                        .device_seconds = std::nullopt,
                        .sparse = true});
}

std::vector<CommIteration> GradientReducer::take_history() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(history_, {});
}

}  // namespace tbd
