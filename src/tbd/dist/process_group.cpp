#include "tbd/dist/process_group.h"

#include "tbd/core/error.h"
#include "tbd/dist/deadline.h"

#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

// Beyond c10d's own time-outs, before a call without one is given up.
constexpr std::chrono::milliseconds kDeadlineMargin{2000};

// A peer's process as it registered at set-up: "host pid".
struct Peer {
  std::string host;
  pid_t pid = 0;
};
using Peers = std::vector<Peer>;  // indexed by rank

// The state letter of /proc/PID/stat: R, S, D, T (stopped), t (traced), Z
// (zombie), X; '?' when the process is gone.
char process_state(pid_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return '?';
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return '?';
  const auto paren = line.rfind(')');  // the command name may hold spaces and brackets
  return paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : '?';
}

std::string hostname() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return host;
}

// Which peers are gone or frozen? Only peers on this host can be checked
// (from /proc, with the table read at set-up: asking the store here could
// block on a frozen rank 0). Empty when nothing could be told.
std::string lost_ranks(const Peers& peers, int self) {
  const std::string here = hostname();
  std::vector<std::string> gone, stopped;
  for (size_t r = 0; r < peers.size(); ++r) {
    if (static_cast<int>(r) == self || peers[r].host != here || peers[r].pid <= 0) continue;
    const char state = process_state(peers[r].pid);
    const bool is_gone = state == '?' || state == 'Z' || state == 'X';  // a zombie: dead, not yet reaped
    const bool is_stopped = state == 'T' || state == 't';
    if (!is_gone && !is_stopped) continue;
    (is_gone ? gone : stopped).push_back(fmt::format("{} (pid {})", r, peers[r].pid));
  }
  std::string what;
  if (!gone.empty()) what = fmt::format("lost rank {} (its process is gone)", fmt::join(gone, ", "));
  if (!stopped.empty())
    what += fmt::format("{}rank {} is stopped (SIGSTOP, Ctrl-Z or a debugger) and does not answer",
                        what.empty() ? "" : "; ", fmt::join(stopped, ", "));
  return what;
}

// c10d reports a lost peer as a c10::Error or a std::runtime_error from Gloo.
[[noreturn]] void rethrow_lost_peer(const std::string& during, const Peers& peers = {}, int self = 0) {
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
    lost = lost_ranks(peers, self);
    if (lost.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw Error("rank " + std::to_string(self) + ": distributed " + during + " failed: " +
              (lost.empty() ? std::string("a peer rank was lost or timed out") : lost) + " (" + detail + ")");
}

// Gloo completes on its own threads: the completion callback times it.
class GlooPending final : public PendingReduce {
 public:
  GlooPending(c10::intrusive_ptr<c10d::Work> work, std::shared_ptr<const Peers> peers, int rank,
              std::string during = "all-reduce")
      : work_(std::move(work)), peers_(std::move(peers)), rank_(rank), during_(std::move(during)) {}
  void wait() override {
    try {
      work_->wait();
    } catch (...) {
      rethrow_lost_peer(during_, *peers_, rank_);
    }
  }
  bool done() const override { return work_->isCompleted(); }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  std::shared_ptr<const Peers> peers_;
  int rank_;
  std::string during_;
};

// A reduce-scatter done as an all-reduce in place: when awaited, this
// rank's slice of the sum goes to the output.
class SliceOfAllReduce final : public PendingReduce {
 public:
  SliceOfAllReduce(std::shared_ptr<PendingReduce> all_reduce, torch::Tensor output, torch::Tensor slice)
      : all_reduce_(std::move(all_reduce)), output_(std::move(output)), slice_(std::move(slice)) {}
  void wait() override {
    all_reduce_->wait();
    if (slice_.defined()) {
      output_.copy_(slice_);
      slice_ = torch::Tensor();  // copied once; the input may go
    }
  }
  bool done() const override { return all_reduce_->done(); }

 private:
  std::shared_ptr<PendingReduce> all_reduce_;
  torch::Tensor output_, slice_;
};

#ifdef TBD_WITH_NCCL
// NCCL runs on its own CUDA stream: work->wait() only orders the current
// stream after it. To time the bucket the host waits for the device here (at
// the end of backward, where the optimizer needs the gradients anyway), then
// reads the collective's CUDA-event duration.
class NcclPending final : public PendingReduce {
 public:
  NcclPending(c10::intrusive_ptr<c10d::Work> work, c10::Device device, std::function<void()> on_done,
              std::shared_ptr<const Peers> peers, int rank, std::string during = "all-reduce")
      : work_(std::move(work)),
        device_(device),
        on_done_(std::move(on_done)),
        peers_(std::move(peers)),
        rank_(rank),
        during_(std::move(during)) {}
  void wait() override {
    try {
      work_->wait();
      at::accelerator::synchronizeDevice(device_.index());
    } catch (...) {
      rethrow_lost_peer(during_, *peers_, rank_);
    }
    if (on_done_) on_done_();
    try {
      seconds_ = work_->getDuration() / 1e3;  // milliseconds
    } catch (const std::exception&) {
      seconds_.reset();  // timing not enabled on this backend
    }
  }
  std::optional<double> device_seconds() const override { return seconds_; }
  bool done() const override { return work_->isCompleted(); }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  c10::Device device_;
  std::function<void()> on_done_;
  std::shared_ptr<const Peers> peers_;
  int rank_;
  std::string during_;
  std::optional<double> seconds_;
};
#endif

// Either backend behind c10d's Backend interface; `tensor_device` is where
// its tensors live (CPU for Gloo, the rank's GPU for NCCL).
class C10dGroup final : public ProcessGroup {
 public:
  C10dGroup(c10::intrusive_ptr<c10d::Store> store, c10::intrusive_ptr<c10d::Backend> pg, std::string name,
            c10::Device tensor_device, int rank, int size, Peers peers, std::chrono::milliseconds timeout)
      : store_(std::move(store)),
        pg_(std::move(pg)),
        name_(std::move(name)),
        device_(tensor_device),
        rank_(rank),
        size_(size),
        peers_(std::make_shared<const Peers>(std::move(peers))),
        timeout_(timeout) {}

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
      rethrow_lost_peer("broadcast", *peers_, rank_);
    }
  }

  std::shared_ptr<PendingReduce> allreduce_sum(torch::Tensor flat, std::function<void()> on_done) override {
    try {
      std::vector<at::Tensor> one{std::move(flat)};
      auto work = pg_->allreduce(one);
#ifdef TBD_WITH_NCCL
      if (device_.is_cuda())
        return std::make_shared<NcclPending>(std::move(work), device_, std::move(on_done), peers_, rank_);
#endif
      if (on_done) work->getFuture()->addCallback([on_done](c10::ivalue::Future&) { on_done(); });
      return std::make_shared<GlooPending>(std::move(work), peers_, rank_);
    } catch (...) {
      rethrow_lost_peer("all-reduce", *peers_, rank_);
    }
  }

  std::shared_ptr<PendingReduce> reduce_scatter_sum(torch::Tensor output, torch::Tensor input,
                                                    std::function<void()> on_done) override {
    if (!device_.is_cuda()) return gloo_reduce_scatter(std::move(output), std::move(input), std::move(on_done));
    return pending(
        [&] {
          at::Tensor out = output, in = input;
          return pg_->_reduce_scatter_base(out, in);
        },
        "reduce-scatter", std::move(on_done));
  }

  std::shared_ptr<PendingReduce> allgather_into(torch::Tensor output, torch::Tensor input,
                                                std::function<void()> on_done) override {
    return pending(
        [&] {
          at::Tensor out = output, in = input;
          return pg_->_allgather_base(out, in);
        },
        "all-gather", std::move(on_done));
  }

  std::shared_ptr<PendingReduce> all_to_all(torch::Tensor output, torch::Tensor input,
                                            std::vector<int64_t> output_splits,
                                            std::vector<int64_t> input_splits) override {
    return pending(
        [&] {
          at::Tensor out = output, in = input;
          return pg_->alltoall_base(out, in, output_splits, input_splits);
        },
        "all-to-all");
  }

  // c10d's Gloo reduce-scatter clones `input` whole and all-reduces the
  // clone (ProcessGroupGloo::reduce_scatter_tensor_coalesced): one more
  // whole bucket alive per collective in flight, which put resnet50's ZeRO-2
  // peak above the replicated run's. All-reducing `input` in place moves the
  // same bytes without the copy and reports its completion; this rank's
  // slice is copied out when the collective is awaited.
  std::shared_ptr<PendingReduce> gloo_reduce_scatter(torch::Tensor output, torch::Tensor input,
                                                     std::function<void()> on_done) {
    try {
      const auto mine = input.narrow(0, rank_ * output.size(0), output.size(0));
      std::vector<at::Tensor> one{std::move(input)};
      auto work = pg_->allreduce(one);
      if (on_done) work->getFuture()->addCallback([on_done](c10::ivalue::Future&) { on_done(); });
      return std::make_shared<SliceOfAllReduce>(
          std::make_shared<GlooPending>(std::move(work), peers_, rank_, "reduce-scatter"), std::move(output), mine);
    } catch (...) {
      rethrow_lost_peer("reduce-scatter", *peers_, rank_);
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
      rethrow_lost_peer("agreement", *peers_, rank_);
    }
  }

  std::vector<std::string> gather_text(const std::string& key, const std::string& value) override {
    try {
      // The store's get waits up to the timeout; the deadline also covers a
      // frozen store host.
      return within_deadline(timeout_ + kDeadlineMargin, "gathering '" + key + "' from the store",
                             [store = store_, key, value, rank = rank_, size = size_] {
                               const std::string prefix = "tbd/" + key + "/";
                               store->set(prefix + std::to_string(rank),
                                          std::vector<uint8_t>(value.begin(), value.end()));
                               std::vector<std::string> all;
                               if (rank == 0)
                                 for (int r = 0; r < size; ++r) {
                                   const auto bytes = store->get(prefix + std::to_string(r));
                                   all.emplace_back(bytes.begin(), bytes.end());
                                 }
                               return all;
                             });
    } catch (...) {
      rethrow_lost_peer("result gathering", *peers_, rank_);
    }
  }

  void barrier() override {
    try {
      pg_->barrier()->wait();
    } catch (...) {
      rethrow_lost_peer("barrier", *peers_, rank_);
    }
  }

 private:
  // A collective launched by `launch`, awaited as the backend needs.
  template <class Launch>
  std::shared_ptr<PendingReduce> pending(Launch launch, const std::string& during,
                                         std::function<void()> on_done = nullptr) {
    try {
      auto work = launch();
#ifdef TBD_WITH_NCCL
      if (device_.is_cuda())
        return std::make_shared<NcclPending>(std::move(work), device_, std::move(on_done), peers_, rank_, during);
#endif
      if (on_done) {
        try {
          work->getFuture()->addCallback([on_done](c10::ivalue::Future&) { on_done(); });
        } catch (const std::exception&) {
          // Gloo's reduce-scatter and all-gather have no future: on_done
          // does not run; the caller sees completion through done().
        }
      }
      return std::make_shared<GlooPending>(std::move(work), peers_, rank_, during);
    } catch (...) {
      rethrow_lost_peer(during, *peers_, rank_);
    }
  }

  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::Backend> pg_;
  std::string name_;
  c10::Device device_;
  int rank_, size_;
  std::shared_ptr<const Peers> peers_;  // shared with pending reductions, which may outlive a call
  std::chrono::milliseconds timeout_;
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

// Every rank publishes "host pid" and reads everyone's, once, while all are
// alive: a failure later is diagnosed from this table, not from the store.
Peers exchange_peers(c10d::Store& store, int self, int size) {
  const std::string me = hostname() + " " + std::to_string(getpid());
  store.set("tbd/proc/" + std::to_string(self), std::vector<uint8_t>(me.begin(), me.end()));
  Peers peers(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    const auto bytes = store.get("tbd/proc/" + std::to_string(r));  // waits up to the store's timeout
    const std::string entry(bytes.begin(), bytes.end());
    const auto space = entry.rfind(' ');
    if (space == std::string::npos) continue;
    peers[static_cast<size_t>(r)] = {entry.substr(0, space), static_cast<pid_t>(std::atol(entry.c_str() + space + 1))};
  }
  return peers;
}

// An unresolvable MASTER_ADDR fails at once with its own message, not after
// the store's connection retries (each lookup can take seconds).
void resolve_rendezvous_host(const DistEnvironment& env, std::chrono::milliseconds timeout) {
  const std::string host = env.master_addr;
  int rc = 0;
  try {
    rc = within_deadline(timeout, "resolving MASTER_ADDR", [host] {
      addrinfo hints{};
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* found = nullptr;
      const int status = getaddrinfo(host.c_str(), nullptr, &hints, &found);
      if (found) freeaddrinfo(found);
      return status;
    });
  } catch (const DeadlineExceeded& e) {
    throw Error("rank " + std::to_string(env.rank) + ": MASTER_ADDR '" + host + "' could not be resolved: " + e.what() +
                " (the name service does not answer); give rank 0's IP address instead");
  }
  if (rc != 0)
    throw Error("rank " + std::to_string(env.rank) + ": MASTER_ADDR '" + host + "' does not resolve to an address (" +
                gai_strerror(rc) + "); set it to the host name or IP address of rank 0's machine");
}

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
    throw UsageError(
        "distributed runs on CUDA need the NCCL backend, which this build does not include (a CPU "
        "LibTorch, or NCCL's header nccl.h was not found at configure time: set NCCL_INCLUDE_DIR); "
        "run distributed on --device cpu (Gloo)");
  const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
  const std::string rank = "rank " + std::to_string(env.rank);
  const auto seconds = std::to_string(timeout.count() / 1000) + " s";
  // A peer that dies makes this rank's next write to its socket fail. With
  // SIGPIPE's default action that write killed the rank ("rank 0 of 2 was
  // killed by signal 13", tests/cli/distributed_test.sh, now and then);
  // ignored, the write returns EPIPE, Gloo raises it, and the run ends with
  // the error that names the lost rank.
  ::signal(SIGPIPE, SIG_IGN);
  resolve_rendezvous_host(env, timeout);
  c10::intrusive_ptr<c10d::Store> store;
  try {
    c10d::TCPStoreOptions so;
    so.port = static_cast<std::uint16_t>(env.master_port);
    so.isServer = env.rank == 0;
    so.numWorkers = env.world_size;
    so.waitWorkers = true;
    so.timeout = timeout;  // connecting, waiting for the workers, get and wait
    // The constructor's handshake (validate, ping) has no time-out of its own.
    store = within_deadline(timeout + kDeadlineMargin, "the rendezvous handshake", [addr = env.master_addr, so] {
      return c10::intrusive_ptr<c10d::Store>(c10::make_intrusive<c10d::TCPStore>(addr, so));
    });
  } catch (const DeadlineExceeded& e) {
    // Nobody listening, or something that accepts the connection and never
    // answers: c10d cannot tell us which.
    throw Error(rank + " could not join the rendezvous at " + where + ": " + e.what() +
                ". Rank 0 is not running, "
                "is frozen (stopped, or under a debugger), or MASTER_PORT belongs to another service; check "
                "MASTER_ADDR/MASTER_PORT and that all " +
                std::to_string(env.world_size) + " ranks were started");
  } catch (const std::exception& e) {
    throw Error(rank + " could not join the rendezvous at " + where + " within " + seconds + ": " + error_message(e) +
                ". Check MASTER_ADDR/MASTER_PORT, that rank 0 is running, and that all " +
                std::to_string(env.world_size) + " ranks were started");
  }
  Peers peers;
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
    // Gloo's rendezvous reads the store; a frozen store host must not hang it.
    if (!pg)
      pg = within_deadline(timeout + kDeadlineMargin, "setting up Gloo",
                           [store, env, timeout] { return make_gloo(store, env, timeout); });
    peers =
        within_deadline(timeout + kDeadlineMargin, "exchanging process ids",
                        [store, rank = env.rank, size = env.world_size] { return exchange_peers(*store, rank, size); });
    return std::make_unique<C10dGroup>(store, pg, name, tensor_device, env.rank, env.world_size, std::move(peers),
                                       timeout);
  } catch (...) {
    rethrow_lost_peer("set-up", peers, env.rank);
  }
}

#else  // no Gloo headers at build time

bool ProcessGroup::available() { return false; }
bool ProcessGroup::nccl_available() { return false; }

std::unique_ptr<ProcessGroup> ProcessGroup::connect(const DistEnvironment&, c10::Device, std::chrono::milliseconds) {
  throw UsageError(
      "this tbd was built without Gloo's headers, so it cannot run distributed; install "
      "libgloo-dev (scripts/setup does) and rebuild");
}

#endif

std::shared_ptr<PendingReduce> ProcessGroup::reduce_scatter_sum(torch::Tensor, torch::Tensor, std::function<void()>) {
  throw UsageError("the " + backend_name() +
                   " process group has no reduce-scatter; sharded data parallelism needs one");
}

std::shared_ptr<PendingReduce> ProcessGroup::all_to_all(torch::Tensor, torch::Tensor, std::vector<int64_t>,
                                                        std::vector<int64_t>) {
  throw UsageError("the " + backend_name() + " process group has no all-to-all; sharded embedding tables need one");
}

std::shared_ptr<PendingReduce> ProcessGroup::allgather_into(torch::Tensor, torch::Tensor, std::function<void()>) {
  throw UsageError("the " + backend_name() + " process group has no all-gather; sharded data parallelism needs one");
}

}  // namespace tbd
