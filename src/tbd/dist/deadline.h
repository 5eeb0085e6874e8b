// A deadline for calls that have none of their own. c10d's TCPStore blocks
// without a limit in a few places (the handshake in its constructor: validate
// and ping; check): a frozen rank 0, or a MASTER_PORT that accepts but never
// answers, would hang the process forever. within_deadline() runs such a call
// on a helper thread and stops waiting when the deadline passes; the helper
// is then abandoned (detached, still blocked), which is acceptable because
// the caller turns the time-out into an error that ends the process.
#pragma once

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <type_traits>

#include "tbd/core/error.h"

namespace tbd {

// What within_deadline throws when `limit` passes first.
class DeadlineExceeded : public Error {
 public:
  using Error::Error;
};

// Runs `work` (which must own everything it uses: capture by value) and
// returns its result, rethrows its exception, or throws DeadlineExceeded
// naming `what` after `limit`.
template <class Work>
auto within_deadline(std::chrono::milliseconds limit, const std::string& what, Work work)
    -> std::invoke_result_t<Work> {
  using Result = std::invoke_result_t<Work>;
  std::packaged_task<Result()> task(std::move(work));
  std::future<Result> result = task.get_future();
  std::thread helper(std::move(task));
  if (result.wait_for(limit) != std::future_status::ready) {
    helper.detach();  // blocked in a call we cannot cancel; the shared state outlives either side
    const auto tenths = (limit.count() + 50) / 100;
    throw DeadlineExceeded(what + " did not finish within " + std::to_string(tenths / 10) +
                           (tenths % 10 ? "." + std::to_string(tenths % 10) : "") + " s");
  }
  helper.join();
  return result.get();
}

}  // namespace tbd
