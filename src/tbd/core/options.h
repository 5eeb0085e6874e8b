// Everything `tbd run` can be asked for, after parsing and validation.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace tbd {

enum class Scale { full, small, tiny };
// fp32: exact float32 everywhere (on CUDA tbd turns TF32 off for cuBLAS and
// cuDNN); tf32: float32 storage, tensor-core TF32 matrix products (CUDA);
// bf16 / fp16: autocast, fp16 with loss scaling (CUDA).
enum class Precision { fp32, tf32, bf16, fp16 };

// How optimizers step (src/tbd/optim/fast_optimizers.h): fused: ATen's fused
// kernels where they exist (SGD, Adam, AdamW), the foreach ops otherwise
// (RMSprop); foreach: the multi-tensor _foreach_* ops; loop: LibTorch's own
// per-parameter step. The ablation switch of docs/workloads.md#optimizers.
enum class OptimizerImpl { fused, foreach, loop };

// Layout of resnet50's activations and weights
// (src/tbd/nn/memory_format.h): auto picks the faster for the device
// (channels-last on CUDA; on the CPU as measured, docs/workloads.md#memory-format).
enum class MemoryFormat { automatic, channels_last, contiguous };

// What the C allocator does with freed host memory
// (src/tbd/core/host_allocator.h): retain keeps it for the next iteration,
// system leaves glibc's defaults, which return large blocks to the kernel so
// each iteration faults them in again. An ablation switch.
enum class HostAllocator { retain, system };

// What data-parallel ranks shard instead of replicating
// (src/tbd/dist/sharded_data_parallel.h, docs/distributed.md#sharding):
// none (DDP), optimizer (ZeRO-1), gradients (ZeRO-2, FSDP's
// SHARD_GRAD_OP), full (ZeRO-3, FSDP's FULL_SHARD).
enum class Sharding { none, optimizer, gradients, full };

// Where data-parallel ranks keep embedding tables (the hybrid parallelism of
// DLRM and TorchRec; src/tbd/dist/sharded_embedding_bags.h): replicate (every
// table on every rank, gradients all-reduced), table (each table whole on one
// rank, placed greedily by bytes), row (every table split by rows across the
// ranks). Pooled embeddings travel by all-to-all; the dense layers stay
// data-parallel.
enum class EmbeddingSharding { replicate, table, row };

// Whether the training iteration is captured once in a CUDA graph and
// replayed (src/tbd/measure/cuda_graph_step.h, docs/gpu.md#cuda-graphs): off
// (eager, every op launched from the host), on (refused with the reason where
// a graph would not be correct), automatic (on where it is correct, eager
// elsewhere, the reason recorded).
enum class CudaGraphs { off, on, automatic };

// Which transformer blocks re-run their forward in backward instead of
// keeping their activations (src/tbd/nn/activation_checkpoint.h): none;
// full, every block; selective=K, every K-th block (torchtitan's layer-wise
// selective mode; `selective` alone is K 2). Memory for compute: the
// recomputed FLOPs are counted apart (docs/metrics.md#flops, HFU).
struct ActivationCheckpointing {
  enum class Mode { none, full, selective };
  Mode mode = Mode::none;
  int every = 2;  // selective: the K of every K-th block
  bool enabled() const { return mode != Mode::none; }
  // Whether block `index` (0-based, in forward order) is checkpointed. Under
  // selective=K these are the K-th, 2K-th, ... blocks counting from 1, as
  // torchtitan counts them (its block counter is incremented before the test).
  bool checkpoints(int64_t index) const;
  bool operator==(const ActivationCheckpointing& o) const {
    return mode == o.mode && (mode != Mode::selective || every == o.every);
  }
};

// The most K of selective=K: more blocks than any model has is a typing mistake.
inline constexpr int kMaxCheckpointEvery = 10000;

const char* to_string(Scale s);
const char* to_string(Precision p);
const char* to_string(OptimizerImpl impl);
const char* to_string(MemoryFormat format);
const char* to_string(HostAllocator allocator);
const char* to_string(Sharding sharding);
const char* to_string(EmbeddingSharding sharding);
const char* to_string(CudaGraphs graphs);
Scale parse_scale(const std::string& text);                           // throws UsageError
Precision parse_precision(const std::string& text);                   // throws UsageError
OptimizerImpl parse_optimizer_impl(const std::string& text);          // throws UsageError
MemoryFormat parse_memory_format(const std::string& text);            // throws UsageError
HostAllocator parse_host_allocator(const std::string& text);          // throws UsageError
Sharding parse_sharding(const std::string& text);                     // throws UsageError
EmbeddingSharding parse_embedding_sharding(const std::string& text);  // throws UsageError
CudaGraphs parse_cuda_graphs(const std::string& text);                // throws UsageError

std::string to_string(const ActivationCheckpointing& c);  // none, full, selective=K
// Throws UsageError naming the accepted values.
ActivationCheckpointing parse_activation_checkpointing(const std::string& text);

// Larger batches are typing mistakes, not workloads (and overflow sizes).
inline constexpr int64_t kMaxBatchSize = int64_t{1} << 30;
// Micro-batches per optimizer step: past this, a typing mistake too.
inline constexpr int64_t kMaxGradAccum = int64_t{1} << 16;

struct RunOptions {
  std::string workload;
  std::string device = "cpu";  // cpu | cuda | cuda:N
  int64_t batch_size = 0;      // 0: the workload's default; the micro-batch when grad_accum > 1
  // Gradient accumulation: micro-batches of batch_size per optimizer step
  // (one iteration). The step's batch is batch_size × grad_accum per
  // process, the global batch that × world_size.
  int64_t grad_accum = 1;
  Precision precision = Precision::fp32;
  OptimizerImpl optimizer_impl = OptimizerImpl::fused;  // the fastest correct step on CPU and CUDA
  MemoryFormat memory_format = MemoryFormat::automatic;
  HostAllocator host_allocator = HostAllocator::retain;
  // Off by default until a GPU check has graded `automatic` on every
  // workload (docs/gpu.md#cuda-graphs).
  CudaGraphs cuda_graphs = CudaGraphs::off;
  // Workloads with transformer blocks only (WorkloadInfo::checkpointable_blocks).
  ActivationCheckpointing activation_checkpointing;
  int threads = 0;  // intra-op threads; 0: LibTorch's default
  Scale scale = Scale::full;
  std::map<std::string, std::string> settings;  // --set key=value, validated by the workload
  std::string data_path;                        // empty: synthetic data
  int data_workers = 2;                         // threads of the prefetching pipeline
  int warmup = 5;                               // warm-up iterations ...
  bool warmup_auto = false;                     // ... or until iteration times settle
  // Five repetitions of four iterations: the repetition is the statistical
  // unit of throughput CIs and of `tbd compare`, and five give a comparison
  // the power to see a 10% change at this machine's run-to-run noise
  // (docs/metrics.md#repetitions).
  int iters = 4;        // timed iterations per repetition (at least)
  double min_time = 0;  // seconds per repetition (at least)
  int repeat = 5;       // repetitions of the timed window
  // Instrumented iterations for the analysis probes (flops, memory, ops),
  // after the timed windows; 0: as many as were timed, at most 5.
  int instrument_iters = 0;
  uint64_t seed = 42;
  std::string out;  // result JSON file; empty: none
  bool json = false;
  bool quiet = false;

  // Data parallelism (src/tbd/dist). nproc > 1 asks `tbd run` to start that
  // many local workers; rank and world_size are filled in by the runner from
  // the launcher's environment (RANK/WORLD_SIZE, or Slurm's).
  int nproc = 1;
  double bucket_mb = 25;     // gradient all-reduce bucket size
  bool dist_overlap = true;  // launch all-reduces during backward
  Sharding sharding = Sharding::none;
  EmbeddingSharding embedding_sharding = EmbeddingSharding::replicate;
  long long memory_limit_bytes = 0;  // --memory-limit: what one rank may use; 0: no limit given
  bool nproc_given = false;          // --nproc was on the command line (--nproc 1 --sharding runs one rank)
  double dist_timeout_s = 300;       // rendezvous and collective timeout
  int rank = 0, world_size = 1;
  // A single process that draws rank R's data stream instead of its own: a
  // co-located copy standing in for rank R (tbd predict); -1: its own rank's.
  int data_stream_rank = -1;

  // Seed of this rank's data stream: ranks read distinct shards.
  uint64_t data_seed() const;
  // Samples (in the workload's batch unit) one optimizer step of this process averages over.
  int64_t step_batch() const { return batch_size * grad_accum; }
  // Samples one optimizer step averages over across every rank.
  int64_t global_batch() const { return step_batch() * world_size; }
};

// Range checks shared by every entry point (CLI, benchmarks, tests).
// Throws UsageError naming the option and the accepted values.
void validate(const RunOptions& options);

// The most --threads accepted: 4 per CPU, at least 64.
int max_threads();

// The options as a result records them (workload.options): core/run_option_table.h.
nlohmann::json to_json(const RunOptions& options);

}  // namespace tbd
