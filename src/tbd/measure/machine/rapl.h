// RAPL package energy through the Linux powercap interface
// (/sys/class/powercap/intel-rapl:N/energy_uj; AMD CPUs use the same names).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tbd {

class Rapl {
 public:
  // `root`: the powercap directory; empty → $TBD_POWERCAP_DIR, else /sys/class/powercap.
  explicit Rapl(std::string root = "");
  bool available() const { return !zones_.empty(); }
  const std::string& why() const { return why_; }
  std::vector<std::string> zone_names() const;
  // Reads every counter; call at least once per wrap period of the counter.
  void sample();
  // Joules since the first sample(), counter wrap-around included.
  double joules() const { return joules_; }

 private:
  struct Zone {
    std::string path, name;
    uint64_t max_range_uj = 0, last_uj = 0;
    bool seen = false;
  };
  std::vector<Zone> zones_;
  std::string why_;
  double joules_ = 0;
};

// Energy between two readings of a counter that wraps at `max_range`.
uint64_t counter_delta(uint64_t before, uint64_t after, uint64_t max_range);

}  // namespace tbd
