// Do the analysis probes reach the timed windows? They should not: flops,
// memory and ops run in instrumented iterations after the windows, so the
// timed median with them should equal the one with time alone (ratio 1.00;
// before the windows were cleaned, dlrm small at batch 128 gave 1.37). Runs
// the same workload alternately with both probe sets (A B A B ..., so drift
// hits both alike) and compares median iteration times, and the process CPU
// time per iteration (from the cpu probe, which both sets run), which other
// processes on a shared machine disturb less than wall time.
//
//   bench_probe_overhead [--workload resnet50] [--scale small] [--batch 8]
//                        [--iters 5] [--pairs 3] [--threads 0] [--probes flops,memory]
// (--probes: what runs besides time and cpu in the second configuration)
#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tbd/core/error.h"
#include "tbd/core/options.h"
#include "tbd/measure/runner.h"
#include "tbd/workloads/registry.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  tbd::RunOptions o;
  o.workload = "resnet50";
  o.scale = tbd::Scale::small;
  o.batch_size = 8;
  o.warmup = 2;
  o.iters = 5;
  o.quiet = true;
  int pairs = 3;
  std::vector<std::string> extra = {"flops", "memory"};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--workload")
      o.workload = v;
    else if (k == "--scale")
      o.scale = tbd::parse_scale(v);
    else if (k == "--batch")
      o.batch_size = std::stoll(v);
    else if (k == "--iters")
      o.iters = std::stoi(v);
    else if (k == "--pairs")
      pairs = std::stoi(v);
    else if (k == "--threads")
      o.threads = std::stoi(v);
    else if (k == "--probes") {
      extra.clear();
      std::stringstream in(v);
      for (std::string part; std::getline(in, part, ',');)
        if (!part.empty()) extra.push_back(part);
    } else {
      std::cerr << "unknown option " << k << "\n";
      return 2;
    }
  }
  const std::vector<std::string> base = {"time", "cpu"};
  std::vector<std::string> probed = base;
  probed.insert(probed.end(), extra.begin(), extra.end());
  std::string probed_name = "time";
  for (const auto& e : extra) probed_name += "+" + e;
  std::vector<double> a, b;          // every measured iteration time of each configuration
  std::vector<double> cpu_a, cpu_b;  // CPU seconds per iteration, one value per run
  try {
    for (int p = 0; p < pairs; ++p) {
      for (int which = 0; which < 2; ++which) {
        const auto workload = tbd::create_workload(o.workload);
        const auto result = tbd::run_benchmark(o, *workload, which == 0 ? base : probed).result;
        for (const auto& t : result.at("iterations")) (which == 0 ? a : b).push_back(t.get<double>());
        const auto& cpu = result.at("cpu");
        (which == 0 ? cpu_a : cpu_b)
            .push_back((cpu.at("user_s").get<double>() + cpu.at("system_s").get<double>()) /
                       static_cast<double>(result.at("iterations").size()));
        std::cerr << fmt::format("pair {}/{} {}: median {:.1f} ms\n", p + 1, pairs,
                                 which == 0 ? std::string("time") : probed_name, 1e3 * median(which == 0 ? a : b));
      }
    }
  } catch (const tbd::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  const double ma = median(a), mb = median(b), ca = median(cpu_a), cb = median(cpu_b);
  // The fastest iteration of each is the least disturbed by other processes.
  const double fa = *std::min_element(a.begin(), a.end()), fb = *std::min_element(b.begin(), b.end());
  std::cout << fmt::format(
      "{{\"benchmark\": \"probe_overhead\", \"probes\": \"{}\", \"workload\": \"{}\", \"scale\": \"{}\", \"batch\": "
      "{}, "
      "\"threads\": {}, \"iterations_each\": {}, \"median_s_time\": {:.6f}, "
      "\"median_s_probed\": {:.6f}, \"ratio\": {:.4f}, \"overhead_percent\": {:.2f}, "
      "\"cpu_s_per_iteration_time\": {:.6f}, \"cpu_s_per_iteration_probed\": {:.6f}, "
      "\"cpu_ratio\": {:.4f}, \"min_s_time\": {:.6f}, \"min_s_probed\": {:.6f}, \"min_ratio\": {:.4f}}}\n",
      probed_name, o.workload, tbd::to_string(o.scale), o.batch_size, at::get_num_threads(), a.size(), ma, mb, mb / ma,
      100 * (mb / ma - 1), ca, cb, cb / ca, fa, fb, fb / fa);
  return 0;
}
