#include "tbd/dist/process_group.h"

#include "tbd/core/error.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <thread>

#ifdef TBD_WITH_GLOO
#define USE_C10D_GLOO 1
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif
#ifdef TBD_WITH_NCCL  // CUDA builds with NCCL's header; CMake also defines USE_C10D_NCCL
#include <ATen/DeviceAccelerator.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace tbd {

#ifdef TBD_WITH_GLOO
namespace {

// Gone, or a zombie its parent has not reaped yet.
bool process_gone(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, comm, state;
  if (!(stat >> pid_field >> comm >> state)) return false;
  return state == "Z" || state == "X";
}

std::string hostname() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return host;
}

// Which ranks are gone? Every rank registers "host pid" at set-up; a peer on
// this host whose process no longer exists is named. Remote peers cannot be
// checked from here, and if rank 0 (the store's host) is gone the store is too.
std::string lost_ranks(c10d::Store* store, int self, int size) {
  if (!store) return "";
  std::string lost;
  try {
    for (int r = 0; r < size; ++r) {
      if (r == self) continue;
      const std::string key = "tbd/proc/" + std::to_string(r);
      if (!store->check({key})) continue;
      const auto bytes = store->get(key);
      const std::string entry(bytes.begin(), bytes.end());
      const auto space = entry.rfind(' ');
      if (entry.substr(0, space) != hostname()) continue;
      const pid_t pid = static_cast<pid_t>(std::stol(entry.substr(space + 1)));
      if (process_gone(pid)) lost += (lost.empty() ? "" : ", ") + std::to_string(r);
    }
  } catch (const std::exception&) {
    return self == 0 ? "" : "0 (the rendezvous host)";
  }
  return lost;
}

// c10d reports a lost peer as a c10::Error or a std::runtime_error from Gloo.
[[noreturn]] void rethrow_lost_peer(const char* during, c10d::Store* store = nullptr, int self = 0, int size = 0) {
  std::string detail;
  try {
    throw;
  } catch (const c10::Error& e) {
    detail = e.what_without_backtrace();
  } catch (const std::exception& e) {
    detail = e.what();
  }
  // A killed peer's sockets close a moment before its process is gone:
  // look again for up to a second before saying we cannot tell.
  std::string lost;
  for (int attempt = 0; attempt < 20 && lost.empty(); ++attempt) {
    lost = lost_ranks(store, self, size);
    if (lost.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw Error("rank " + std::to_string(self) + ": distributed " + during + " failed: " +
              (lost.empty() ? std::string("a peer rank was lost or timed out")
                            : "lost rank " + lost + " (its process is gone)") +
              " (" + detail + ")");
}

// Gloo completes on its own threads: the completion callback times it.
class GlooPending final : public PendingReduce {
 public:
  GlooPending(c10::intrusive_ptr<c10d::Work> work, c10::intrusive_ptr<c10d::Store> store, int rank, int size)
      : work_(std::move(work)), store_(std::move(store)), rank_(rank), size_(size) {}
  void wait() override {
    try {
      work_->wait();
    } catch (...) {
      rethrow_lost_peer("all-reduce", store_.get(), rank_, size_);
    }
  }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  c10::intrusive_ptr<c10d::Store> store_;
  int rank_, size_;
};

#ifdef TBD_WITH_NCCL
// NCCL runs on its own CUDA stream: work->wait() only orders the current
// stream after it. To time the bucket the host waits for the device here (at
// the end of backward, where the optimizer needs the gradients anyway), then
// reads the collective's CUDA-event duration.
class NcclPending final : public PendingReduce {
 public:
  NcclPending(c10::intrusive_ptr<c10d::Work> work, c10::Device device, std::function<void()> on_done,
              c10::intrusive_ptr<c10d::Store> store, int rank, int size)
      : work_(std::move(work)), device_(device), on_done_(std::move(on_done)), store_(std::move(store)),
        rank_(rank), size_(size) {}
  void wait() override {
    try {
      work_->wait();
      at::accelerator::synchronizeDevice(device_.index());
    } catch (...) {
      rethrow_lost_peer("all-reduce", store_.get(), rank_, size_);
    }
    if (on_done_) on_done_();
    try {
      seconds_ = work_->getDuration() / 1e3;  // milliseconds
    } catch (const std::exception&) {
      seconds_.reset();  // timing not enabled on this backend
    }
  }
  std::optional<double> device_seconds() const override { return seconds_; }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  c10::Device device_;
  std::function<void()> on_done_;
  c10::intrusive_ptr<c10d::Store> store_;
  int rank_, size_;
  std::optional<double> seconds_;
};
#endif

// Either backend behind c10d's Backend interface; `tensor_device` is where
// its tensors live (CPU for Gloo, the rank's GPU for NCCL).
class C10dGroup final : public ProcessGroup {
 public:
  C10dGroup(c10::intrusive_ptr<c10d::Store> store, c10::intrusive_ptr<c10d::Backend> pg, std::string name,
            c10::Device tensor_device, int rank, int size)
      : store_(std::move(store)), pg_(std::move(pg)), name_(std::move(name)), device_(tensor_device),
        rank_(rank), size_(size) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend_name() const override { return name_; }

  void broadcast_from_rank0(std::vector<torch::Tensor>& tensors) override {
    try {
      for (auto& t : tensors) {
        std::vector<at::Tensor> one{t};
        pg_->broadcast(one)->wait();
      }
    } catch (...) {
      rethrow_lost_peer("broadcast", store_.get(), rank_, size_);
    }
  }

  std::shared_ptr<PendingReduce> allreduce_sum(torch::Tensor flat, std::function<void()> on_done) override {
    try {
      std::vector<at::Tensor> one{std::move(flat)};
      auto work = pg_->allreduce(one);
#ifdef TBD_WITH_NCCL
      if (device_.is_cuda())
        return std::make_shared<NcclPending>(std::move(work), device_, std::move(on_done), store_, rank_, size_);
#endif
      if (on_done) work->getFuture()->addCallback([on_done](c10::ivalue::Future&) { on_done(); });
      return std::make_shared<GlooPending>(std::move(work), store_, rank_, size_);
    } catch (...) {
      rethrow_lost_peer("all-reduce", store_.get(), rank_, size_);
    }
  }

  int max_across_ranks(int value) override {
    auto t = torch::full({1}, static_cast<int64_t>(value), torch::TensorOptions(torch::kInt64).device(device_));
    std::vector<at::Tensor> one{t};
    c10d::AllreduceOptions opts;
    opts.reduceOp = c10d::ReduceOp::MAX;
    try {
      pg_->allreduce(one, opts)->wait();
      return static_cast<int>(t.item<int64_t>());  // item() waits for the device
    } catch (...) {
      rethrow_lost_peer("agreement", store_.get(), rank_, size_);
    }
  }

  std::vector<std::string> gather_text(const std::string& key, const std::string& value) override {
    try {
      const std::string prefix = "tbd/" + key + "/";
      store_->set(prefix + std::to_string(rank_), std::vector<uint8_t>(value.begin(), value.end()));
      std::vector<std::string> all;
      if (rank_ == 0)
        for (int r = 0; r < size_; ++r) {
          const auto bytes = store_->get(prefix + std::to_string(r));  // waits up to the timeout
          all.emplace_back(bytes.begin(), bytes.end());
        }
      return all;
    } catch (...) {
      rethrow_lost_peer("result gathering", store_.get(), rank_, size_);
    }
  }

  void barrier() override {
    try {
      pg_->barrier()->wait();
    } catch (...) {
      rethrow_lost_peer("barrier", store_.get(), rank_, size_);
    }
  }

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::Backend> pg_;
  std::string name_;
  c10::Device device_;
  int rank_, size_;
};

c10::intrusive_ptr<c10d::Backend> make_gloo(const c10::intrusive_ptr<c10d::Store>& store, const DistEnvironment& env,
                                            std::chrono::milliseconds timeout) {
  auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
  // The interface that reaches the rendezvous host reaches the peers too.
  const bool loopback = env.master_addr == "127.0.0.1" || env.master_addr == "localhost";
  opts->devices.push_back(loopback ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                   : c10d::ProcessGroupGloo::createDefaultDevice());
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, opts);
}

#ifdef TBD_WITH_NCCL
c10::intrusive_ptr<c10d::Backend> make_nccl(const c10::intrusive_ptr<c10d::Store>& store, const DistEnvironment& env,
                                            std::chrono::milliseconds timeout) {
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  opts->timeout = timeout;
  auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, env.rank, env.world_size, opts);
  pg->enableCollectivesTiming();  // CUDA events around each collective: the comm probe's bucket times
  return pg;
}
#endif

}  // namespace

bool ProcessGroup::available() { return true; }

bool ProcessGroup::nccl_available() {
#ifdef TBD_WITH_NCCL
  return true;
#else
  return false;
#endif
}

std::unique_ptr<ProcessGroup> ProcessGroup::connect(const DistEnvironment& env, c10::Device device,
                                                   std::chrono::milliseconds timeout) {
  if (device.is_cuda() && !nccl_available())
    throw UsageError("distributed runs on CUDA need the NCCL backend, which this build does not include (a CPU "
                     "LibTorch, or NCCL's header nccl.h was not found at configure time: set NCCL_INCLUDE_DIR); "
                     "run distributed on --device cpu (Gloo)");
  c10::intrusive_ptr<c10d::Store> store;
  const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
  try {
    c10d::TCPStoreOptions so;
    so.port = static_cast<std::uint16_t>(env.master_port);
    so.isServer = env.rank == 0;
    so.numWorkers = env.world_size;
    so.waitWorkers = true;
    so.timeout = timeout;
    store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (auto* c = dynamic_cast<const c10::Error*>(&e)) what = c->what_without_backtrace();
    throw Error("rank " + std::to_string(env.rank) + " could not join the rendezvous at " + where + " within " +
                std::to_string(timeout.count() / 1000) + " s: " + what +
                ". Check MASTER_ADDR/MASTER_PORT, that rank 0 is running, and that all " +
                std::to_string(env.world_size) + " ranks were started");
  }
  try {
    c10::intrusive_ptr<c10d::Backend> pg;
    std::string name = "gloo";
    c10::Device tensor_device(c10::kCPU);
#ifdef TBD_WITH_NCCL
    if (device.is_cuda()) {
      pg = make_nccl(store, env, timeout);
      name = "nccl";
      tensor_device = device;
    }
#endif
    if (!pg) pg = make_gloo(store, env, timeout);
    const std::string me = hostname() + " " + std::to_string(getpid());
    store->set("tbd/proc/" + std::to_string(env.rank), std::vector<uint8_t>(me.begin(), me.end()));
    return std::make_unique<C10dGroup>(store, pg, name, tensor_device, env.rank, env.world_size);
  } catch (...) {
    rethrow_lost_peer("set-up", store.get(), env.rank, env.world_size);
  }
}

#else  // no Gloo headers at build time

bool ProcessGroup::available() { return false; }
bool ProcessGroup::nccl_available() { return false; }

std::unique_ptr<ProcessGroup> ProcessGroup::connect(const DistEnvironment&, c10::Device,
                                                   std::chrono::milliseconds) {
  throw UsageError("this tbd was built without Gloo's headers, so it cannot run distributed; install "
                   "libgloo-dev (scripts/setup does) and rebuild");
}

#endif

}  // namespace tbd
