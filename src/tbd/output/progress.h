// Progress of a study (suite, sweep): on a terminal a bar with elapsed and
// estimated remaining time, redrawn every second; otherwise one plain line
// per finished item, so logs and pipes stay readable. Written to stderr:
// stdout keeps the tables (and JSON) a command prints.
#pragma once

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace tbd {

// "1m02s", "45s", "1h03m"
std::string format_duration(double seconds);

class StudyProgress {
 public:
  // `total` items; `terminal` decides bars or lines (normally isatty(stderr)).
  StudyProgress(std::string what, int total, bool terminal, std::FILE* out = stderr);
  StudyProgress(const std::string& what, int total);  // terminal = isatty(stderr)
  ~StudyProgress();
  StudyProgress(const StudyProgress&) = delete;
  StudyProgress& operator=(const StudyProgress&) = delete;

  void begin(const std::string& item);                           // item starts running
  void end(const std::string& item, const std::string& status);  // item done (ok, failed: ..., skipped)
  void set_total(int total);                                     // auto sweeps learn it as they go
  void finish();                                                 // clears the bar

 private:
  void draw_locked();
  std::string what_;
  int total_, done_ = 0;
  bool terminal_;
  std::FILE* out_;
  double t0_;
  std::string current_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread ticker_;
};

}  // namespace tbd
