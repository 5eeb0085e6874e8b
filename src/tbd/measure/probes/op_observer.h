// The lifecycle every probe that observes each operator shares (ops,
// roofline, flops): a global RecordFunction callback (FUNCTION scope)
// installed for the instrumented iterations and removed after them, the
// state its callbacks count into, one active observer of a kind at a time,
// and layer attribution while it runs. A probe supplies only its tally and
// the two callbacks that record each operator into it.
//
// Callbacks are plain function pointers with no user data, so they reach
// the active tally through a slot per tally type (a function-local static
// of the template): two observers of one kind would count into one slot, so
// the second is refused, while observers of different kinds (ops, roofline
// and flops in one run) run side by side.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/record_function.h>

#include "tbd/core/error.h"
#include "tbd/measure/ops/layer_attribution.h"
#include "tbd/measure/probes/probe.h"

namespace tbd {

inline double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// What the callbacks read besides the recorder's own tables, set by the
// probe: whether this is an instrumented iteration, and the phase open now.
struct ObserverState {
  std::atomic<bool> counting{false};
  std::atomic<int> phase{static_cast<int>(kOutsidePhases)};  // phase_index(), or kOutsidePhases
  mutable std::mutex mutex;                                  // guards the recorder's tables
  bool in_optimizer() const {
    return phase.load(std::memory_order_relaxed) == static_cast<int>(phase_index(Phase::optimizer));
  }
};

// The tables of the recorders that key their figures by operator (ops, roofline).
template <class Stats>
struct OpTally : ObserverState {
  std::map<std::string, Stats> by_op;     // "op|class"
  std::map<std::string, Stats> by_layer;  // per named layer (layer_attribution.h), keyed as each probe says
};

// What an observer asks of RecordFunction besides the operator's name.
struct ObserverNeeds {
  bool inputs = false;   // the operator's arguments (shapes, tensors)
  bool outputs = false;  // its results
  bool layers = false;   // the named layer it runs in (layer_attribution.h)
};

// Installs and removes one kind of observer's callback; the tally outlives
// it, so what was counted can be read after stop().
template <class Tally>
class OpObserver {
 public:
  // `tally` is the active observer's (null when none is).
  using StartCallback = std::unique_ptr<at::ObserverContext> (*)(const at::RecordFunction& fn, Tally* tally);
  using EndCallback = void (*)(const at::RecordFunction& fn, at::ObserverContext* ctx, Tally* tally);

  OpObserver() = default;
  ~OpObserver() { stop(); }
  OpObserver(const OpObserver&) = delete;
  OpObserver& operator=(const OpObserver&) = delete;

  // Throws when another observer of this kind is active; `what` names it.
  template <StartCallback on_start, EndCallback on_end>
  void start(ObserverNeeds needs, const char* what) {
    if (handle_) return;
    Tally* expected = nullptr;
    if (!active().compare_exchange_strong(expected, &tally_))
      throw Error(std::string("only one ") + what + " can be active in a process at a time");
    if (needs.layers) layers_.emplace();
    const auto begin = [](const at::RecordFunction& fn) {
      return on_start(fn, active().load(std::memory_order_acquire));
    };
    const auto end = [](const at::RecordFunction& fn, at::ObserverContext* ctx) {
      on_end(fn, ctx, active().load(std::memory_order_acquire));
    };
    handle_ = at::addGlobalCallback(at::RecordFunctionCallback(begin, end)
                                        .needsInputs(needs.inputs)
                                        .needsOutputs(needs.outputs)
                                        .scopes({at::RecordScope::FUNCTION}));
  }

  void stop() {
    if (!handle_) return;
    at::removeCallback(handle_);
    handle_ = 0;
    layers_.reset();
    active().store(nullptr);
  }

  bool attributes_layers() const { return layers_.has_value(); }
  Tally& tally() { return tally_; }
  const Tally& tally() const { return tally_; }

 private:
  static std::atomic<Tally*>& active() {
    static std::atomic<Tally*> slot{nullptr};
    return slot;
  }

  Tally tally_;
  at::CallbackHandle handle_ = 0;
  std::optional<LayerAttribution> layers_;  // while the callback runs, if asked for
};

// The analysis-probe side of an observer: the callback runs for the
// instrumented window, counts only inside measured iterations, and follows
// the phases. A probe installs its callbacks in start() and adds its
// figures (contribute, summary_lines).
template <class Tally>
class OpObserverProbe : public Probe {
 public:
  void on_window_begin(int) override { start(); }
  void on_window_end(int) override { stop(); }
  void on_iteration_begin(bool measured) override {
    if (observer_.attributes_layers()) LayerAttribution::clear_nodes();
    set_counting(measured);
  }
  void on_iteration_end(const IterationRecord& r) override {
    set_counting(false);
    if (!r.measured) return;
    ++iterations_;
    samples_ += static_cast<double>(r.samples);
    seconds_ += r.seconds;
  }
  void on_phase_begin(Phase p) override { observer_.tally().phase = static_cast<int>(phase_index(p)); }
  void on_phase_end(Phase) override { observer_.tally().phase = static_cast<int>(kOutsidePhases); }

  // Installs the probe's callbacks (observer_.start with them). With the
  // three below, the window's hooks without a runner, for tests; stats()
  // and layer_stats() copy the tables so far (safe while callbacks run).
  virtual void start() = 0;
  void stop() { observer_.stop(); }
  void set_counting(bool on) { observer_.tally().counting = on; }
  auto stats() const {
    std::lock_guard<std::mutex> lock(observer_.tally().mutex);
    return observer_.tally().by_op;
  }
  auto layer_stats() const {
    std::lock_guard<std::mutex> lock(observer_.tally().mutex);
    return observer_.tally().by_layer;
  }

 protected:
  OpObserver<Tally> observer_;
  int64_t iterations_ = 0;  // instrumented iterations that completed
  double samples_ = 0;      // their samples
  double seconds_ = 0;      // their wall time
};

// An operator open on a thread, for callbacks that time operators and
// attribute them to phases and layers (ops, roofline): their frames derive
// from it.
struct OpFrame : at::ObserverContext {
  double start = 0;        // when the operator began (after the callback's own work)
  bool optimizer = false;  // it runs in the optimizer phase
  LayerOfOp layer;         // nullptr layer: none, or not asked for
};

// The operators open on one thread, innermost last (a thread_local per kind
// of callback).
template <class Frame>
class OpStack {
 public:
  // A frame for `fn`, not yet open: its phase and layer.
  static std::unique_ptr<Frame> make(const at::RecordFunction& fn, const ObserverState* state) {
    auto f = std::make_unique<Frame>();
    f->optimizer = state && state->in_optimizer();
    f->layer = LayerAttribution::on_op_start(fn);
    return f;
  }
  Frame* top() const { return frames_.empty() ? nullptr : frames_.back(); }
  // Pushes `f` and starts its clock last, so the callback's own work is not timed.
  std::unique_ptr<at::ObserverContext> open(std::unique_ptr<Frame> f) {
    frames_.push_back(f.get());
    f->start = steady_seconds();
    return f;
  }
  // Pops `ctx`'s frame, and whatever was left open above it (they end in
  // reverse order; tolerant anyway); null when there is no frame.
  Frame* close(at::ObserverContext* ctx) {
    auto* f = static_cast<Frame*>(ctx);
    if (!f) return nullptr;
    auto it = std::find(frames_.rbegin(), frames_.rend(), f);
    if (it != frames_.rend()) frames_.erase(std::next(it).base(), frames_.end());
    return f;
  }

 private:
  std::vector<Frame*> frames_;
};

inline std::pair<std::string, std::string> split_op_key(const std::string& key) {
  const auto bar = key.rfind('|');
  return {key.substr(0, bar), key.substr(bar + 1)};
}

}  // namespace tbd
