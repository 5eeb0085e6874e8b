// The Workload interface: a workload owns its model, optimizer and data; it
// never times itself (the runner owns the clock, probes own the analysis).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "tbd/core/memory_plan.h"
#include "tbd/core/options.h"
#include "tbd/core/parameter_set.h"
#include "tbd/core/phases.h"
#include "tbd/core/settings.h"

namespace torch::nn {
class Module;
}

namespace tbd {

class ProcessGroup;   // tbd/dist/process_group.h
class CollectiveLog;  // tbd/dist/collective_log.h

struct WorkloadInfo {       // shown by `tbd list`, stored in every result
  std::string name;         // "resnet50"
  std::string domain;       // "image classification"
  std::string model;        // "ResNet-50 v1.5 (He et al. 2016)"
  std::string dataset;      // "ImageNet-1k (synthetic, or an image folder)"
  std::string sample_unit;  // what throughput counts: "images", "tokens", ...
  int64_t default_batch = 1;
  std::vector<SettingSpec> settings;  // what `--set` accepts
  // Why data-parallel runs (--nproc N, WORLD_SIZE > 1) make no sense for this
  // workload; empty: supported. A non-empty text is the refusal's explanation.
  std::string data_parallel_refusal{};
  // Why --sharding cannot cut this workload's model state, beyond the above;
  // empty: it can. The refusal's explanation.
  std::string sharding_refusal{};
  // Why --grad-accum N > 1 makes no sense for this workload (it has no single
  // optimizer step per iteration); empty: supported. The refusal's explanation.
  std::string grad_accum_refusal{};
  // Why one captured CUDA graph cannot replay this workload's step
  // (--cuda-graphs; docs/gpu.md#cuda-graphs): a host-side decision inside the
  // step, data-dependent shapes, a learning rate the host changes every step;
  // empty: it can, where the run's options allow (cuda_graph_refusal()).
  std::string cuda_graph_refusal{};
  // What --batch-size counts, when not sample_unit: gpt's batch is
  // "sequences" of 1,024 tokens, seq2seq's "sentence pairs" (batch_unit_of()).
  std::string batch_unit{};
  // Batches differ in shape from one iteration to the next (sentence or
  // utterance lengths), so per-iteration time varies by design and is no
  // sign of a noisy machine (noise_warnings() then judges repetitions only).
  bool variable_shapes = false;
  // The linear learning-rate scaling rule (Goyal et al. 2017) as data: the
  // "lr" setting is the rate at this many samples per batch, and a run at
  // batch B trains at lr * B / lr_reference_batch (scaled_lr()). 0: "lr" is
  // used as given, whatever the batch.
  double lr_reference_batch = 0;
  // The model is a stack of transformer blocks that --activation-checkpointing
  // can re-run in backward (nn/activation_checkpoint.h); false: the option is
  // refused (check_activation_checkpointing_supported, workloads/registry.h).
  bool checkpointable_blocks = false;
  // The model has embedding tables that --embedding-sharding table|row can
  // place across the data-parallel ranks (rank_local_parameters()); false:
  // the option is refused.
  bool shardable_embedding_tables = false;
};

// The learning rate a run at `batch_size` trains with under info's scaling
// rule. Workloads pass RunOptions::step_batch(): the samples one optimizer
// step of the process averages over, micro-batch × --grad-accum.
inline double scaled_lr(const WorkloadInfo& info, double lr, int64_t batch_size) {
  return info.lr_reference_batch > 0 ? lr * static_cast<double>(batch_size) / info.lr_reference_batch : lr;
}

inline const std::string& batch_unit_of(const WorkloadInfo& info) {
  return info.batch_unit.empty() ? info.sample_unit : info.batch_unit;
}

struct Batch {  // tensors already on the device
  std::vector<torch::Tensor> inputs, targets;
  int64_t samples = 0;       // in the workload's sample_unit
  double audio_seconds = 0;  // speech: seconds of audio the batch holds (audio s/s = this / step time)
};

// The shapes the model sees, as one key: each input's sizes, "64x33 64 64x35".
std::string batch_shape(const Batch& batch);

struct StepOutput {
  // The (main) training loss of this iteration, a scalar: with gradient
  // accumulation the mean of its micro-batches' losses.
  torch::Tensor loss;
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual const WorkloadInfo& info() const = 0;
  // Builds model, optimizer and data pipeline. options.batch_size is resolved
  // (never 0) and settings are validated against info().settings.
  virtual void setup(const RunOptions& options, const Settings& settings, torch::Device device) = 0;
  virtual Batch next_batch() = 0;  // from the data pipeline
  // How many distinct batch shapes (batch_shape()) next_batch() hands out,
  // where the workload knows: a synthetic pool's, or a length-bucketed
  // stream's over an epoch. Warm-up goes on until it has run every one
  // (runner.cpp), so no timed window meets a shape for the first time (a GPU
  // plans each new attention, RNN or convolution shape once). 0: not known.
  virtual int64_t distinct_batch_shapes() const { return 0; }
  // One training iteration, one optimizer step: over the --grad-accum
  // micro-batches the runner fetched (one without accumulation; never empty).
  virtual StepOutput step(const std::vector<Batch>& micro_batches, Phases& phases) = 0;
  virtual ParameterSet state() const = 0;  // weights, buffers, optimizer state
  // Every parameter by its module path ("layer3.0.conv2.weight"), so the
  // layers probe can name the convolution or linear layer an operator's
  // weight belongs to (`tbd shapes`); empty: the workload names none.
  virtual std::map<std::string, torch::Tensor> named_weights() const { return {}; }
  // The optimizers that step the weights, for sharded data parallelism
  // (--sharding) to rewrite to this rank's shards before their first step;
  // empty: the workload cannot shard.
  virtual std::vector<torch::optim::Optimizer*> optimizers() { return {}; }
  // The process group of a data-parallel run, given before setup() (never
  // for a single process without one), for a model whose own layers
  // communicate: dlrm's sharded embedding tables exchange ids and pooled
  // embeddings by all-to-all.
  virtual void set_process_group(ProcessGroup* group) {}
  // Parameters each rank holds a different part of (model parallelism: the
  // sharded embedding tables): neither broadcast from rank 0 nor all-reduced.
  virtual std::vector<torch::Tensor> rank_local_parameters() const { return {}; }
  // The collectives the model itself runs in forward and backward (the
  // sharded tables' all-to-alls), logged for the comm probe; null: none.
  virtual CollectiveLog* model_collectives() { return nullptr; }
  // The wrapping units of fully sharded data parallelism (--sharding full,
  // docs/distributed.md#sharding): modules whose forward the model runs
  // through nn::run_unit, so each is gathered just before it computes and
  // freed after. Empty: --sharding full is refused for this workload.
  virtual std::vector<std::shared_ptr<torch::nn::Module>> shard_units() const { return {}; }
  // Parameters of the published (full-scale) model under these settings, for
  // `tbd list`; builds the model on the CPU without data or optimizer.
  virtual int64_t full_scale_parameters(const Settings& settings) const = 0;
  // The same count split by kind where the kinds train differently (dlrm:
  // "embedding" tables with sparse gradients, "dense" layers); empty: no split.
  virtual std::vector<std::pair<std::string, int64_t>> parameter_parts(const Settings& settings) const { return {}; }
  // The model these settings build, for titles and results (resnet50 with
  // depth=101 is "ResNet-101 v1.5 ..."); info().model by default.
  virtual std::string model_title(const Settings& settings) const { return info().model; }
  // What one training step of `options` (batch resolved, never 0) will hold,
  // from the model's shapes, before anything is allocated (`tbd plan`):
  // rank 0's of options.world_size ranks with the run's --sharding and
  // --embedding-sharding; nullopt where the workload has no such model (the
  // memory probe measures every workload).
  virtual std::optional<MemoryPlan> memory_plan(const RunOptions& options, const Settings& settings) const {
    return std::nullopt;
  }
  // Settings whose value setup() resolved from the scale rather than took as
  // declared (a3c's t_max when unset: 5 at small and tiny), so the result
  // records what ran.
  virtual std::map<std::string, std::string> resolved_settings() const { return {}; }
  // Resolved configuration worth recording (input size, classes, ...).
  virtual nlohmann::json configuration() const { return nlohmann::json::object(); }
  // Metrics only the workload can take (A3C: time inside its environments).
  // The runner calls begin_measurement() as the first measured window begins
  // and reads measurement() after the last one ends (before any --trace
  // iterations); a non-null value is stored as the result's
  // "workload_metrics", and its "summary" text, if any, joins the summary.
  virtual void begin_measurement() {}
  virtual nlohmann::json measurement() const { return nullptr; }
};

}  // namespace tbd
