// What the probes that observe every operator through a global
// RecordFunction callback share (ops_probe, roofline_probe): the tally the
// callbacks fill, the steady clock they read, the thread's stack of open
// operators, and the "op|class" keys of their tables.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tbd {

// Operators outside every named layer: the loss, the optimizer, gradient accumulation, ...
inline constexpr const char* kNoLayer = "(no layer)";

// Filled by the callbacks while `counting` (an instrumented iteration);
// `optimizer_phase` puts the optimizer's operators in their own class.
template <class Stats>
struct OpTally {
  std::atomic<bool> counting{false};
  std::atomic<bool> optimizer_phase{false};
  std::mutex mutex;
  std::map<std::string, Stats> by_op;     // "op|class"
  std::map<std::string, Stats> by_layer;  // per named layer (layer_attribution.h), keyed as each probe says
};

// The name of an operator's layer (layer_attribution.h; nullptr: none).
inline std::string layer_name(const std::string* layer) { return layer ? *layer : std::string(kNoLayer); }

inline double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Removes `frame`, and whatever was left open above it, from a thread's stack
// of open operators (they end in reverse order; tolerant anyway).
template <class Frame>
void pop_frame(std::vector<Frame*>& stack, Frame* frame) {
  auto it = std::find(stack.rbegin(), stack.rend(), frame);
  if (it != stack.rend()) stack.erase(std::next(it).base(), stack.end());
}

inline std::pair<std::string, std::string> split_op_key(const std::string& key) {
  const auto bar = key.rfind('|');
  return {key.substr(0, bar), key.substr(bar + 1)};
}

}  // namespace tbd
