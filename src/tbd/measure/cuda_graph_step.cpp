#include "tbd/measure/cuda_graph_step.h"

#include <chrono>

#include "tbd/core/error.h"

#ifdef TBD_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace tbd {

std::string cuda_graph_refusal(const WorkloadInfo& info, const RunOptions& o, const c10::Device& device,
                               bool data_parallel) {
  if (!device.is_cuda())
    return "a CUDA graph replays GPU work and this run is on the " + device.str() + " (use --device cuda)";
  if (!info.cuda_graph_refusal.empty()) return info.name + " " + info.cuda_graph_refusal;
  if (info.variable_shapes)
    return info.name +
           "'s batches change shape from one iteration to the next (sentence or utterance lengths, bucketed or "
           "not), and a graph replays the one shape it captured";
  if (data_parallel)
    return "data-parallel runs stay eager: their collectives start from backward hooks as gradient buckets fill, "
           "and tbd does not capture NCCL calls into the graph (docs/gpu.md#cuda-graphs)";
  if (o.precision == Precision::fp16)
    return "fp16 loss scaling decides on the host, every step, whether the gradients were finite and the step is "
           "taken; use --precision bf16 (no loss scaling)";
  if (o.optimizer_impl != OptimizerImpl::fused)
    return std::string("--optimizer-impl ") + to_string(o.optimizer_impl) +
           ": tbd captures the fused optimizer step only (the foreach and loop steps of Adam, AdamW and Adagrad "
           "compute bias corrections on the host from the step count, which a graph would freeze at the captured "
           "step's); use --optimizer-impl fused, whose kernels read the step count from the device";
  if (o.activation_checkpointing.enabled())
    return "--activation-checkpointing saves and restores the random generators' state on the host around each "
           "re-run block, which a graph cannot capture";
  return "";
}

CudaGraphDecision decide_cuda_graphs(const WorkloadInfo& info, const RunOptions& o, const c10::Device& device,
                                     bool data_parallel) {
  if (o.cuda_graphs == CudaGraphs::off) return {};
  std::string why = cuda_graph_refusal(info, o, device, data_parallel);
  if (why.empty()) return {.use = true, .reason = ""};
  if (o.cuda_graphs == CudaGraphs::on)
    throw UsageError("--cuda-graphs on: " + why +
                     "; run with --cuda-graphs off (or auto, which runs eagerly where a graph would not be correct "
                     "and records why)");
  return {.use = false, .reason = std::move(why)};
}

#ifdef TBD_WITH_CUDA

namespace {

bool same_layout(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].defined() != b[i].defined()) return false;
    if (!a[i].defined()) continue;
    if (a[i].sizes() != b[i].sizes() || a[i].scalar_type() != b[i].scalar_type() || a[i].device() != b[i].device())
      return false;
  }
  return true;
}

std::vector<torch::Tensor> clones(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) out.push_back(t.defined() ? t.clone() : t);
  return out;
}

void copy_into(std::vector<torch::Tensor>& statics, const std::vector<torch::Tensor>& batch) {
  for (size_t i = 0; i < statics.size(); ++i)
    if (statics[i].defined()) statics[i].copy_(batch[i], /*non_blocking=*/true);
}

}  // namespace

struct CudaGraphStep::State {
  explicit State(c10::Device d) : device(d), side(at::cuda::getStreamFromPool(false, d.index())) {}
  c10::Device device;
  at::cuda::CUDAStream side;
  std::unique_ptr<at::cuda::CUDAGraph> graph;
  std::vector<Batch> statics;  // the captured step's input buffers
  StepOutput output;           // the captured step's outputs, rewritten by each replay
  int64_t eager = 0, replays = 0, eager_other_shape = 0;
  double capture_ms = 0;

  bool fits(const std::vector<Batch>& batches) const {
    if (batches.size() != statics.size()) return false;
    for (size_t i = 0; i < batches.size(); ++i)
      if (!same_layout(batches[i].inputs, statics[i].inputs) || !same_layout(batches[i].targets, statics[i].targets))
        return false;
    return true;
  }

  void capture(Workload& workload, const std::vector<Batch>& batches, Phases& phases) {
    statics.clear();
    for (const Batch& b : batches) statics.push_back({clones(b.inputs), clones(b.targets), b.samples, b.audio_seconds});
    // What the eager steps left queued ends first: a capture records, it does not wait.
    c10::cuda::device_synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    graph = std::make_unique<at::cuda::CUDAGraph>();
    // Thread-local: only this thread's unsafe CUDA calls (a synchronisation
    // inside the step) fail the capture; the data pipeline's threads go on
    // copying batches to the device meanwhile.
    graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
    try {
      output = workload.step(statics, phases);
    } catch (const std::exception& e) {
      const std::string what = error_message(e);
      try {
        graph->capture_end();  // leaves the stream's capture mode
      } catch (const std::exception&) {
      }
      graph.reset();
      (void)cudaGetLastError();
      throw Error("--cuda-graphs: " + workload.info().name + "'s step could not be captured in a CUDA graph (" + what +
                  "); run it with --cuda-graphs off, and report it: the workload should refuse graphs with the "
                  "reason (WorkloadInfo::cuda_graph_refusal)");
    }
    graph->capture_end();
    capture_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
};

CudaGraphStep::CudaGraphStep(c10::Device device) : state_(std::make_unique<State>(device)) {}
CudaGraphStep::~CudaGraphStep() = default;

bool CudaGraphStep::captured() const { return state_->graph != nullptr; }

StepOutput CudaGraphStep::run(Workload& workload, const std::vector<Batch>& micro_batches, Phases& phases) {
  State& s = *state_;
  const at::cuda::CUDAStream main = at::cuda::getCurrentCUDAStream(s.device.index());
  // The side stream starts after what the main one queued (the batch's
  // copy to the device), and the main one goes on after the step.
  at::cuda::CUDAEvent queued;
  queued.record(main);
  queued.block(s.side);
  StepOutput out;
  {
    c10::cuda::CUDAStreamGuard on_side(s.side);
    if (s.eager < kEagerIterations) {
      out = workload.step(micro_batches, phases);
      ++s.eager;
    } else if (!s.graph) {
      s.capture(workload, micro_batches, phases);
      s.graph->replay();  // the capture recorded this iteration's step; the replay runs it
      ++s.replays;
      out = s.output;
    } else if (s.fits(micro_batches)) {
      for (size_t i = 0; i < micro_batches.size(); ++i) {
        copy_into(s.statics[i].inputs, micro_batches[i].inputs);
        copy_into(s.statics[i].targets, micro_batches[i].targets);
      }
      s.graph->replay();
      ++s.replays;
      out = s.output;
    } else {
      out = workload.step(micro_batches, phases);
      ++s.eager_other_shape;
    }
  }
  at::cuda::CUDAEvent done;
  done.record(s.side);
  done.block(main);
  return out;
}

nlohmann::json CudaGraphStep::describe() const {
  const State& s = *state_;
  nlohmann::json shape = nullptr;
  if (!s.statics.empty()) {
    std::string text;
    for (const Batch& b : s.statics) text += (text.empty() ? "" : " | ") + batch_shape(b);
    shape = text;
  }
  return {{"captured", s.graph != nullptr},
          {"eager_iterations_before_capture", s.eager},
          {"replays", s.replays},
          {"eager_iterations_of_other_shapes", s.eager_other_shape},
          {"capture_ms", s.graph ? nlohmann::json(s.capture_ms) : nlohmann::json(nullptr)},
          {"captured_shape", shape}};
}

#else  // a build without CUDA: nothing to capture (decide_cuda_graphs refuses the CPU first)

struct CudaGraphStep::State {};

CudaGraphStep::CudaGraphStep(c10::Device) {
  throw Error("--cuda-graphs: this tbd was built without CUDA; build it against a CUDA LibTorch (docs/gpu.md)");
}
CudaGraphStep::~CudaGraphStep() = default;
bool CudaGraphStep::captured() const { return false; }
StepOutput CudaGraphStep::run(Workload& workload, const std::vector<Batch>& micro_batches, Phases& phases) {
  return workload.step(micro_batches, phases);
}
nlohmann::json CudaGraphStep::describe() const { return {{"captured", false}}; }

#endif

}  // namespace tbd
