#include "tbd/core/options.h"

#include <algorithm>
#include <thread>

#include "tbd/core/error.h"
#include "tbd/core/number_text.h"
#include "tbd/core/rng.h"
#include "tbd/core/zero_memory.h"

namespace tbd {

const char* to_string(Scale s) {
  switch (s) {
    case Scale::full: return "full";
    case Scale::small: return "small";
    case Scale::tiny: return "tiny";
  }
  return "?";
}

const char* to_string(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
  }
  return "?";
}

Scale parse_scale(const std::string& text) {
  if (text == "full") return Scale::full;
  if (text == "small") return Scale::small;
  if (text == "tiny") return Scale::tiny;
  throw UsageError("--scale must be full, small or tiny, got '" + text + "'");
}

Precision parse_precision(const std::string& text) {
  if (text == "fp32") return Precision::fp32;
  if (text == "tf32") return Precision::tf32;
  if (text == "bf16") return Precision::bf16;
  if (text == "fp16") return Precision::fp16;
  throw UsageError("--precision must be fp32, tf32, bf16 or fp16, got '" + text + "'");
}

const char* to_string(OptimizerImpl impl) {
  switch (impl) {
    case OptimizerImpl::fused: return "fused";
    case OptimizerImpl::foreach: return "foreach";
    case OptimizerImpl::loop: return "loop";
  }
  return "?";
}

OptimizerImpl parse_optimizer_impl(const std::string& text) {
  if (text == "fused") return OptimizerImpl::fused;
  if (text == "foreach") return OptimizerImpl::foreach;
  if (text == "loop") return OptimizerImpl::loop;
  throw UsageError("--optimizer-impl must be fused, foreach or loop, got '" + text + "'");
}

const char* to_string(MemoryFormat format) {
  switch (format) {
    case MemoryFormat::automatic: return "auto";
    case MemoryFormat::channels_last: return "channels_last";
    case MemoryFormat::contiguous: return "contiguous";
  }
  return "?";
}

MemoryFormat parse_memory_format(const std::string& text) {
  if (text == "auto") return MemoryFormat::automatic;
  if (text == "channels_last") return MemoryFormat::channels_last;
  if (text == "contiguous") return MemoryFormat::contiguous;
  throw UsageError("--memory-format must be auto, channels_last or contiguous, got '" + text + "'");
}

const char* to_string(HostAllocator allocator) {
  switch (allocator) {
    case HostAllocator::retain: return "retain";
    case HostAllocator::system: return "system";
  }
  return "?";
}

HostAllocator parse_host_allocator(const std::string& text) {
  if (text == "retain") return HostAllocator::retain;
  if (text == "system") return HostAllocator::system;
  throw UsageError("--host-allocator must be retain or system, got '" + text + "'");
}

const char* to_string(Sharding sharding) {
  switch (sharding) {
    case Sharding::none: return "none";
    case Sharding::optimizer: return "optimizer";
    case Sharding::gradients: return "gradients";
    case Sharding::full: return "full";
  }
  return "?";
}

Sharding parse_sharding(const std::string& text) {
  if (text == "none") return Sharding::none;
  if (text == "optimizer") return Sharding::optimizer;
  if (text == "gradients") return Sharding::gradients;
  if (text == "full") return Sharding::full;
  throw UsageError("--sharding must be none, optimizer (ZeRO-1), gradients (ZeRO-2) or full (ZeRO-3), got '" + text +
                   "'");
}

const char* to_string(EmbeddingSharding sharding) {
  switch (sharding) {
    case EmbeddingSharding::replicate: return "replicate";
    case EmbeddingSharding::table: return "table";
    case EmbeddingSharding::row: return "row";
  }
  return "?";
}

EmbeddingSharding parse_embedding_sharding(const std::string& text) {
  if (text == "replicate") return EmbeddingSharding::replicate;
  if (text == "table") return EmbeddingSharding::table;
  if (text == "row") return EmbeddingSharding::row;
  throw UsageError("--embedding-sharding must be replicate, table or row, got '" + text + "'");
}

const char* to_string(CudaGraphs graphs) {
  switch (graphs) {
    case CudaGraphs::off: return "off";
    case CudaGraphs::on: return "on";
    case CudaGraphs::automatic: return "auto";
  }
  return "?";
}

CudaGraphs parse_cuda_graphs(const std::string& text) {
  if (text == "off") return CudaGraphs::off;
  if (text == "on") return CudaGraphs::on;
  if (text == "auto") return CudaGraphs::automatic;
  throw UsageError("--cuda-graphs must be off, on or auto, got '" + text + "'");
}

bool ActivationCheckpointing::checkpoints(int64_t index) const {
  switch (mode) {
    case Mode::none: return false;
    case Mode::full: return true;
    case Mode::selective: return (index + 1) % every == 0;
  }
  return false;
}

std::string to_string(const ActivationCheckpointing& c) {
  switch (c.mode) {
    case ActivationCheckpointing::Mode::none: return "none";
    case ActivationCheckpointing::Mode::full: return "full";
    case ActivationCheckpointing::Mode::selective: return "selective=" + std::to_string(c.every);
  }
  return "?";
}

ActivationCheckpointing parse_activation_checkpointing(const std::string& text) {
  using Mode = ActivationCheckpointing::Mode;
  ActivationCheckpointing c;
  if (text == "none") return c;
  if (text == "full") {
    c.mode = Mode::full;
    return c;
  }
  const std::string selective = "selective";
  if (text == selective) {
    c.mode = Mode::selective;
    return c;
  }
  const std::string hint =
      "--activation-checkpointing must be none, full, selective or selective=K (K a whole number in [1, " +
      std::to_string(kMaxCheckpointEvery) + "]: every K-th transformer block), got '" + text + "'";
  if (text.rfind(selective + "=", 0) != 0) throw UsageError(hint);
  const auto k = unsigned_from_text(text.substr(selective.size() + 1));
  if (!k || *k < 1 || *k > static_cast<unsigned long long>(kMaxCheckpointEvery)) throw UsageError(hint);
  c.mode = Mode::selective;
  c.every = static_cast<int>(*k);
  return c;
}

int max_threads() {
  const unsigned cpus = std::thread::hardware_concurrency();
  return std::max(64, 4 * static_cast<int>(cpus));
}

void validate(const RunOptions& o) {
  if (o.batch_size < 0)
    throw UsageError("--batch-size must be a positive integer (or omitted for the default), got " +
                     std::to_string(o.batch_size));
  if (o.batch_size > kMaxBatchSize)
    throw UsageError("--batch-size must be at most " + std::to_string(kMaxBatchSize) + ", got " +
                     std::to_string(o.batch_size));
  if (o.grad_accum < 1 || o.grad_accum > kMaxGradAccum)
    throw UsageError("--grad-accum must be a whole number of micro-batches in [1, " + std::to_string(kMaxGradAccum) +
                     "], got " + std::to_string(o.grad_accum));
  if (o.batch_size > 0 && o.batch_size * o.grad_accum > kMaxBatchSize)
    throw UsageError("--batch-size " + std::to_string(o.batch_size) + " × --grad-accum " +
                     std::to_string(o.grad_accum) + " is more than " + std::to_string(kMaxBatchSize) +
                     " samples per optimizer step: lower one of them");
  if (o.threads < 0) throw UsageError("--threads must be positive, got " + std::to_string(o.threads));
  if (o.threads > max_threads())
    throw UsageError("--threads " + std::to_string(o.threads) + " is more than this machine can use: at most " +
                     std::to_string(max_threads()) +
                     " (4 per CPU, at least 64); more threads only queue for the "
                     "same cores, and thousands exhaust memory for their stacks");
  if (o.data_workers < 1 || o.data_workers > 256)
    throw UsageError("--data-workers must be in [1, 256], got " + std::to_string(o.data_workers));
  if (o.warmup < 0) throw UsageError("--warmup must be a count >= 0 or 'auto', got " + std::to_string(o.warmup));
  if (o.iters < 1) throw UsageError("--iters must be at least 1, got " + std::to_string(o.iters));
  if (!(o.min_time >= 0) || o.min_time > 1e6) throw UsageError("--min-time must be a number of seconds in [0, 1e6]");
  if (o.repeat < 1) throw UsageError("--repeat must be at least 1, got " + std::to_string(o.repeat));
  if (o.repeat > 100000) throw UsageError("--repeat must be at most 100000, got " + std::to_string(o.repeat));
  if (o.instrument_iters < 0 || o.instrument_iters > 100000)
    throw UsageError("--instrument-iters must be in [1, 100000] (or omitted), got " +
                     std::to_string(o.instrument_iters));
  const bool cuda = o.device.rfind("cuda", 0) == 0;
  if (o.device != "cpu" && !cuda) throw UsageError("--device must be cpu, cuda or cuda:N, got '" + o.device + "'");
  // The most ranks a plan or a prediction speaks of (tbd plan's fewest
  // ranks that fit searches as far); the local launcher starts at most 1024.
  if (o.nproc < 1 || o.nproc > kMostRanks)
    throw UsageError("--nproc must be in [1, " + std::to_string(kMostRanks) + "], got " + std::to_string(o.nproc));
  if (!(o.bucket_mb > 0) || o.bucket_mb > 1e5) throw UsageError("--bucket-mb must be a positive number of megabytes");
  if (!(o.dist_timeout_s > 0) || o.dist_timeout_s > 86400)
    throw UsageError("--dist-timeout must be a number of seconds in (0, 86400]");
  if (o.precision == Precision::fp16 && !cuda)
    throw UsageError(
        "--precision fp16 needs a CUDA device: CPU autocast has no float16 path; "
        "use --precision bf16 on the CPU");
  if (o.precision == Precision::tf32 && !cuda)
    throw UsageError(
        "--precision tf32 needs a CUDA device: TF32 is a tensor-core mode of NVIDIA GPUs; "
        "use --precision fp32 or bf16 on the CPU");
}

uint64_t RunOptions::data_seed() const {
  const int stream = data_stream_rank >= 0 ? data_stream_rank : rank;
  return derive_seed(seed, 0xda7a0000ULL + static_cast<uint64_t>(stream));
}

}  // namespace tbd
