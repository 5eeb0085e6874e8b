#include "tbd/measure/probes/gradient_probe.h"

#include <algorithm>

#include "tbd/core/workload.h"

namespace tbd {

void GradientProbe::on_run_start(const RunContext& ctx) {
  refusal_ = ctx.info.data_parallel_refusal;
  watch(ctx.workload.state().weights);
}

void GradientProbe::watch(const std::vector<torch::Tensor>& parameters) {
  params_.clear();
  for (const auto& p : parameters)
    if (p.requires_grad()) params_.push_back(p);
  sparse_entries_.assign(params_.size(), 0.0);
  sparse_seen_.assign(params_.size(), 0);
}

void GradientProbe::on_window_begin(int) {
  if (!refusal_.empty()) return;
  for (size_t k = 0; k < params_.size(); ++k)
    hooks_.push_back(params_[k].register_hook([this, k](const torch::Tensor& g) { on_gradient(k, g); }));
}

void GradientProbe::on_window_end(int) {
  for (size_t k = 0; k < hooks_.size(); ++k) params_[k].remove_hook(hooks_[k]);
  hooks_.clear();
}

void GradientProbe::on_iteration_begin(bool measured) {
  std::lock_guard<std::mutex> lock(mutex_);
  counting_ = measured;
  current_.clear();
}

void GradientProbe::on_iteration_end(const IterationRecord& r) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (counting_ && r.measured && !current_.empty()) iterations_.push_back(std::move(current_));
  counting_ = false;
  current_.clear();
}

void GradientProbe::on_phase_begin(Phase p) {
  if (p != Phase::backward) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!counting_) return;
  in_backward_ = true;
  current_.push_back({0, std::vector<double>(params_.size(), -1.0)});
  pass_begin_ = Clock::now();
}

void GradientProbe::on_phase_end(Phase p) {
  if (p != Phase::backward) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!in_backward_) return;
  in_backward_ = false;
  current_.back().seconds = std::chrono::duration<double>(Clock::now() - pass_begin_).count();
}

void GradientProbe::on_gradient(size_t k, const torch::Tensor& grad) {
  const auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!in_backward_) return;  // a backward outside the phase (none in tbd's workloads)
  if (grad.is_sparse()) sparse_entries_[k] += static_cast<double>(grad._nnz()), ++sparse_seen_[k];
  // The last call is the gradient's delivery to .grad, when data-parallel
  // reduction takes it; an activation-checkpointed block's re-run calls
  // the hook once before, from inside its own gradient computation.
  current_.back().ready_s[k] = std::chrono::duration<double>(now - pass_begin_).count();
}

void GradientProbe::contribute(nlohmann::json& result) const {
  if (!refusal_.empty()) {
    result["gradients"] = {{"not_available", "this workload does not run data-parallel: " + refusal_}};
    return;
  }
  // Iterations with the usual number of backward passes (the first one's).
  std::vector<const std::vector<Pass>*> usable;
  for (const auto& it : iterations_)
    if (it.size() == iterations_.front().size()) usable.push_back(&it);
  if (usable.empty()) {
    result["gradients"] = {{"not_available", "no instrumented iteration ran a backward phase"}};
    return;
  }
  nlohmann::json elements = nlohmann::json::array(), element_size = nlohmann::json::array(),
                 kind = nlohmann::json::array(), sparse = nlohmann::json::array();
  for (size_t k = 0; k < params_.size(); ++k) {
    const auto& p = params_[k];
    elements.push_back(p.numel());
    element_size.push_back(p.element_size());
    kind.push_back(std::string(c10::toString(p.scalar_type())) + "@" + p.device().str());
    if (sparse_seen_[k] > 0)
      sparse.push_back({{"rows", p.size(0)}, {"entries", sparse_entries_[k] / sparse_seen_[k]}});
    else
      sparse.push_back(nullptr);
  }
  // Per pass: its share of the iteration's backward time, and each
  // parameter's mean ready time as a fraction of the pass (null: no gradient).
  const size_t passes = usable.front()->size();
  double total = 0;
  std::vector<double> pass_seconds(passes, 0.0);
  for (const auto* it : usable)
    for (size_t j = 0; j < passes; ++j) pass_seconds[j] += (*it)[j].seconds, total += (*it)[j].seconds;
  nlohmann::json out = nlohmann::json::array();
  for (size_t j = 0; j < passes; ++j) {
    nlohmann::json ready = nlohmann::json::array();
    for (size_t k = 0; k < params_.size(); ++k) {
      double sum = 0;
      int n = 0;
      for (const auto* it : usable) {
        const Pass& pass = (*it)[j];
        if (pass.ready_s[k] >= 0 && pass.seconds > 0) sum += std::min(1.0, pass.ready_s[k] / pass.seconds), ++n;
      }
      ready.push_back(n > 0 ? nlohmann::json(sum / n) : nlohmann::json(nullptr));
    }
    out.push_back(
        {{"share_of_backward", total > 0 ? pass_seconds[j] / total : 1.0 / passes}, {"ready_fraction", ready}});
  }
  result["gradients"] = {
      {"definition",
       "per backward phase of an iteration (wgan has six): its share of the iteration's backward time, and when each "
       "trainable parameter's gradient was ready, as a fraction of that phase's time (mean over the instrumented "
       "iterations; null: no gradient in that phase); parameters in the workload's order. sparse: for a parameter "
       "whose gradient is a sparse tensor (an embedding table's), its rows and the mean entries (looked-up rows, "
       "repeats included) of its gradient; null: dense"},
      {"iterations", usable.size()},
      {"elements", elements},
      {"element_size", element_size},
      {"kind", kind},
      {"sparse", sparse},
      {"backward_passes", out}};
}

}  // namespace tbd
