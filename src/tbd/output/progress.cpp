#include "tbd/output/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>

namespace tbd {
namespace {
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const auto total = static_cast<long long>(std::llround(s));
  if (total < 60) return fmt::format("{}s", total);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}h{:02}m", total / 3600, (total % 3600) / 60);
}

StudyProgress::StudyProgress(std::string what, int total, bool terminal, std::FILE* out)
    : what_(std::move(what)), total_(total), terminal_(terminal), out_(out), t0_(now_s()) {
  if (terminal_)
    ticker_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      while (!stop_) {
        draw_locked();
        wake_.wait_for(lock, std::chrono::seconds(1));
      }
    });
}

StudyProgress::StudyProgress(const std::string& what, int total)
    : StudyProgress(what, total, isatty(STDERR_FILENO) != 0) {}

StudyProgress::~StudyProgress() { finish(); }

void StudyProgress::draw_locked() {
  const double elapsed = now_s() - t0_;
  const int width = 24;
  const int filled = total_ > 0 ? width * done_ / total_ : 0;
  std::string bar(static_cast<size_t>(filled), '#');
  bar += std::string(static_cast<size_t>(width - filled), '.');
  const std::string left = done_ > 0 && total_ > done_
                               ? fmt::format("~{}", format_duration(elapsed / done_ * (total_ - done_)))
                               : (done_ >= total_ ? "0s" : "?");
  std::string line = fmt::format("\r\033[K{} [{}] {}/{}  elapsed {}  left {}", what_, bar, done_, total_,
                                 format_duration(elapsed), left);
  if (!current_.empty()) line += "  running " + current_;
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
}

void StudyProgress::begin(const std::string& item) {
  std::lock_guard<std::mutex> lock(mutex_);
  current_ = item;
  if (terminal_) draw_locked();
}

void StudyProgress::end(const std::string& item, const std::string& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  current_.clear();
  const std::string line =
      fmt::format("[{}/{}] {}: {} (elapsed {})", done_, total_, item, status, format_duration(now_s() - t0_));
  if (terminal_) {
    std::fprintf(out_, "\r\033[K%s\n", line.c_str());
    draw_locked();
  } else {
    std::fprintf(out_, "%s %s\n", what_.c_str(), line.c_str());
    std::fflush(out_);
  }
}

void StudyProgress::set_total(int total) {
  std::lock_guard<std::mutex> lock(mutex_);
  total_ = total;
}

void StudyProgress::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_) return;
    stop_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  if (terminal_) {
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
  }
}

}  // namespace tbd
