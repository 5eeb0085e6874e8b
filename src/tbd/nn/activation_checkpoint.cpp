#include "tbd/nn/activation_checkpoint.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <mutex>
#include <optional>
#include <utility>

#include "tbd/core/recomputation.h"

namespace tbd::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The saved data of a checkpoint's context are IValues; the block's forward
// (a std::function) travels in a capsule, IValue's holder for an opaque
// C++ object (the one way LibTorch's C++ Function can carry one to backward).
struct ForwardHolder : torch::CustomClassHolder {
  explicit ForwardHolder(BlockForward f) : forward(std::move(f)) {}
  BlockForward forward;
};

// The random state dropout draws from: the CPU generator, and the default
// generator of each CUDA device the inputs are on (where CUDA dropout
// draws). Taken before the first forward and put back for the second, so
// both draw the same masks.
struct RandomState {
  struct Saved {
    at::Generator generator;
    at::Tensor state;
  };
  std::vector<Saved> saved;

  static RandomState take(const std::vector<at::Tensor>& inputs) {
    RandomState r;
    r.add(at::globalContext().defaultGenerator(at::Device(at::kCPU)));
    for (const auto& t : inputs)
      if (t.is_cuda()) r.add(at::globalContext().defaultGenerator(t.device()));
    return r;
  }
  void restore() const {
    for (const auto& s : saved) {
      at::Generator g = s.generator;
      std::lock_guard<std::mutex> lock(g.mutex());
      g.set_state(s.state);
    }
  }

 private:
  void add(const at::Generator& g) {
    for (const auto& s : saved)
      if (s.generator == g) return;  // two inputs on one device
    at::Generator copy = g;
    std::lock_guard<std::mutex> lock(copy.mutex());
    saved.push_back({copy, copy.get_state()});
  }
};

// Autocast as the first forward saw it, for the CPU and CUDA (where tbd
// runs autocast, core/phases.cpp). Backward runs with autocast off, so the
// recomputation must switch it on again to compute what the forward did.
struct AutocastState {
  struct Device {
    at::DeviceType type;
    bool enabled;
    at::ScalarType dtype;
  };
  std::vector<Device> devices;

  static AutocastState current() {
    AutocastState s;
    for (auto type : {at::kCPU, at::kCUDA})
      s.devices.push_back({type, at::autocast::is_autocast_enabled(type), at::autocast::get_autocast_dtype(type)});
    return s;
  }
  void apply() const {
    for (const auto& d : devices) {
      at::autocast::set_autocast_enabled(d.type, d.enabled);
      at::autocast::set_autocast_dtype(d.type, d.dtype);
    }
  }
};

// Sets `state` for its lifetime and puts back what was there; an autocast
// region of its own, so the weights it casts are dropped when it ends, as
// when Phases' forward region ends.
class AutocastRegion {
 public:
  explicit AutocastRegion(AutocastState state) : before_(AutocastState::current()) {
    state.apply();
    at::autocast::increment_nesting();
  }
  ~AutocastRegion() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    before_.apply();
  }
  AutocastRegion(const AutocastRegion&) = delete;
  AutocastRegion& operator=(const AutocastRegion&) = delete;

 private:
  AutocastState before_;
};

// Saved-data keys.
constexpr const char* kForward = "forward";
constexpr const char* kInputs = "inputs";             // how many of the saved variables are inputs
constexpr const char* kRandomState = "random_state";  // the generators' states, in RandomState's order
constexpr const char* kAutocast = "autocast";         // enabled, dtype per device, in AutocastState's order

// The custom autograd function. Its tensor arguments are the block's inputs
// and then its parameters, so the autograd graph has an edge to each
// parameter: backward computes the parameters' gradients with
// torch::autograd::grad over the recomputed graph and returns them through
// the checkpoint like the inputs' gradients, and the engine running the
// outer backward accumulates them (and runs the hooks that data-parallel
// reduction and the probes put on the parameters) exactly as for an
// unchecked block. The alternative, calling backward() on the recomputed
// output, would accumulate into .grad from inside a nested backward,
// outside the outer engine's order, and would also fill .grad during a
// torch::autograd::grad call that asked for the inputs' gradients only.
struct Checkpoint : torch::autograd::Function<Checkpoint> {
  static at::Tensor forward(AutogradContext* ctx, const BlockForward& block_forward, at::TensorList inputs,
                            at::TensorList parameters) {
    std::vector<at::Tensor> in(inputs.begin(), inputs.end());
    const RandomState random = RandomState::take(in);
    const AutocastState autocast = AutocastState::current();
    // Function::apply runs this with gradients off: nothing inside the block is kept.
    at::Tensor out = block_forward(in);

    ctx->saved_data[kForward] = at::IValue::make_capsule(c10::make_intrusive<ForwardHolder>(block_forward));
    ctx->saved_data[kInputs] = static_cast<int64_t>(in.size());
    c10::List<at::Tensor> states;
    for (const auto& s : random.saved) states.push_back(s.state);
    ctx->saved_data[kRandomState] = states;
    c10::List<int64_t> modes;
    for (const auto& d : autocast.devices) {
      modes.push_back(d.enabled ? 1 : 0);
      modes.push_back(static_cast<int64_t>(d.dtype));
    }
    ctx->saved_data[kAutocast] = modes;
    std::vector<at::Tensor> to_save = in;
    to_save.insert(to_save.end(), parameters.begin(), parameters.end());
    ctx->save_for_backward(to_save);
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const auto n_inputs = static_cast<size_t>(ctx->saved_data[kInputs].toInt());
    const auto holder = ctx->saved_data[kForward].toCapsule();
    const BlockForward& block_forward = static_cast<ForwardHolder*>(holder.get())->forward;

    // The inputs as leaves of the recomputed graph; those whose gradient
    // the outer graph wants require it.
    std::vector<at::Tensor> inputs, wanted;
    std::vector<size_t> wanted_index;  // position of each wanted tensor among the saved
    for (size_t i = 0; i < n_inputs; ++i) {
      inputs.push_back(saved[i].detach());
      if (ctx->needs_input_grad(i)) {
        inputs.back().requires_grad_(true);
        wanted.push_back(inputs.back());
        wanted_index.push_back(i);
      }
    }
    for (size_t i = n_inputs; i < saved.size(); ++i)
      if (ctx->needs_input_grad(i)) {
        wanted.push_back(saved[i]);  // the parameter itself: its use in the recomputed graph
        wanted_index.push_back(i);
      }

    // The first forward's random and autocast state, then back to what
    // backward had: the rest of the run draws as if no block had re-run.
    RandomState current = RandomState::take(inputs);
    RandomState first = current;
    const auto states = ctx->saved_data[kRandomState].toTensorList();
    for (size_t i = 0; i < first.saved.size(); ++i) first.saved[i].state = states.get(i);
    AutocastState autocast = AutocastState::current();
    const auto modes = ctx->saved_data[kAutocast].toIntList();
    for (size_t i = 0; i < autocast.devices.size(); ++i) {
      autocast.devices[i].enabled = modes.get(2 * i) != 0;
      autocast.devices[i].dtype = static_cast<at::ScalarType>(modes.get(2 * i + 1));
    }

    at::Tensor out;
    first.restore();
    {
      RecomputationScope recomputing;  // the flops probe counts these operators as recomputation
      AutocastRegion region(autocast);
      torch::AutoGradMode grad_on(true);
      out = block_forward(inputs);
    }
    current.restore();

    variable_list grads(1 + saved.size());  // the BlockForward argument first: no gradient
    if (wanted.empty() || !out.requires_grad()) return grads;
    const auto computed = torch::autograd::grad({out}, wanted, {grad_outputs[0]}, /*retain_graph=*/false,
                                                /*create_graph=*/false, /*allow_unused=*/true);
    for (size_t k = 0; k < computed.size(); ++k) grads[1 + wanted_index[k]] = computed[k];
    return grads;
  }
};

}  // namespace

at::Tensor checkpointed(const torch::nn::Module& block, BlockForward forward, std::vector<at::Tensor> inputs) {
  // Without gradients (evaluation) nothing is kept anyway, and there is no backward to re-run it.
  if (!at::GradMode::is_enabled()) return forward(inputs);
  const std::vector<at::Tensor> parameters = block.parameters();
  return Checkpoint::apply(forward, at::TensorList(inputs), at::TensorList(parameters));
}

}  // namespace tbd::nn
