#include "tbd/measure/machine/rapl.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>

namespace tbd {
namespace {
namespace fs = std::filesystem;

bool read_u64(const std::string& path, uint64_t& out) {
  std::ifstream in(path);
  return static_cast<bool>(in >> out);
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}
}  // namespace

uint64_t counter_delta(uint64_t before, uint64_t after, uint64_t max_range) {
  if (after >= before) return after - before;
  return max_range > before ? (max_range - before) + after : after;  // wrapped once
}

Rapl::Rapl(std::string root) {
  if (root.empty()) {
    const char* env = std::getenv("TBD_POWERCAP_DIR");
    root = env && *env ? env : "/sys/class/powercap";
  }
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    why_ = root + " does not exist (no powercap/RAPL driver)";
    return;
  }
  // Package zones only ("intel-rapl:N"); their sub-zones (core, uncore, dram
  // "intel-rapl:N:M") are parts of the package and would count twice.
  static const std::regex package("intel-rapl:[0-9]+");
  std::string unreadable;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, package)) continue;
    Zone z;
    z.path = entry.path().string();
    z.name = read_line(z.path + "/name");
    uint64_t value = 0;
    if (!read_u64(z.path + "/energy_uj", value)) {
      unreadable = z.path + "/energy_uj";
      continue;
    }
    if (!read_u64(z.path + "/max_energy_range_uj", z.max_range_uj)) z.max_range_uj = 0;
    zones_.push_back(z);
  }
  if (zones_.empty())
    why_ = unreadable.empty() ? "no RAPL package zone under " + root
                              : "cannot read " + unreadable + " (root-only on most kernels since 2020)";
}

std::vector<std::string> Rapl::zone_names() const {
  std::vector<std::string> n;
  for (const auto& z : zones_) n.push_back(z.name.empty() ? z.path : z.name);
  return n;
}

void Rapl::sample() {
  for (auto& z : zones_) {
    uint64_t v = 0;
    if (!read_u64(z.path + "/energy_uj", v)) continue;
    if (z.seen) joules_ += static_cast<double>(counter_delta(z.last_uj, v, z.max_range_uj)) * 1e-6;
    z.last_uj = v;
    z.seen = true;
  }
}

}  // namespace tbd
