#include "tbd/measure/ops/layer_attribution.h"

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "tbd/nn/layer_scope.h"

namespace tbd {

namespace {

std::mutex g_mutex;  // guards everything below but the thread-locals
int g_users = 0;
at::CallbackHandle g_handle = 0;
// Layer paths, interned: operators carry pointers into this set, which only grows.
std::set<std::string> g_paths;
// (forward thread, sequence number) of an autograd node -> its forward op's layer.
std::map<std::pair<uint64_t, int64_t>, const std::string*> g_nodes;

thread_local std::vector<const std::string*> t_layers;  // layers open on this thread, innermost last
thread_local std::vector<const std::string*> t_nodes;   // backward nodes running on this thread: their layers

struct ScopeFrame : at::ObserverContext {
  bool layer = false;  // a layer scope (else an autograd node)
};

std::unique_ptr<at::ObserverContext> on_scope_start(const at::RecordFunction& fn) {
  auto frame = std::make_unique<ScopeFrame>();
  if (fn.scope() == at::RecordScope::USER_SCOPE) {
    std::string_view name = fn.name();
    const std::string_view prefix = nn::kLayerScopePrefix;
    if (name.substr(0, prefix.size()) != prefix) return nullptr;  // a phase or step scope
    name.remove_prefix(prefix.size());
    std::string path = t_layers.empty() ? std::string(name) : *t_layers.back() + "." + std::string(name);
    std::lock_guard<std::mutex> lock(g_mutex);
    t_layers.push_back(&*g_paths.insert(std::move(path)).first);
    frame->layer = true;
    return frame;
  }
  const std::string* layer = nullptr;  // BACKWARD_FUNCTION: an autograd node runs
  if (fn.seqNr() >= 0) {
    std::lock_guard<std::mutex> lock(g_mutex);
    const auto it = g_nodes.find({fn.forwardThreadId(), fn.seqNr()});
    if (it != g_nodes.end()) layer = it->second;
  }
  t_nodes.push_back(layer);
  return frame;
}

void on_scope_end(const at::RecordFunction&, at::ObserverContext* ctx) {
  if (!ctx) return;  // a scope that is not a layer, or opened before the callback was
  auto& stack = static_cast<ScopeFrame*>(ctx)->layer ? t_layers : t_nodes;
  if (!stack.empty()) stack.pop_back();
}

}  // namespace

LayerAttribution::LayerAttribution() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_users++ == 0)
    g_handle = at::addGlobalCallback(at::RecordFunctionCallback(on_scope_start, on_scope_end)
                                         .scopes({at::RecordScope::USER_SCOPE, at::RecordScope::BACKWARD_FUNCTION}));
}

LayerAttribution::~LayerAttribution() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (--g_users == 0) {
    at::removeCallback(g_handle);
    g_handle = 0;
    g_nodes.clear();
  }
}

LayerOfOp LayerAttribution::on_op_start(const at::RecordFunction& fn) {
  if (!t_layers.empty()) {
    const std::string* layer = t_layers.back();
    if (fn.seqNr() >= 0) {
      std::lock_guard<std::mutex> lock(g_mutex);
      g_nodes[{at::RecordFunction::currentThreadId(), fn.seqNr()}] = layer;
    }
    return {layer, false};
  }
  if (!t_nodes.empty()) return {t_nodes.back(), true};
  return {};
}

void LayerAttribution::clear_nodes() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_nodes.clear();
}

}  // namespace tbd
