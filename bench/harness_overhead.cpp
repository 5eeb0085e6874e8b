// What does tbd's harness add to the step it times? For each workload,
// alternates in one process a default `tbd run` (the real runner: default
// plan of repetitions, default probes, whose analysis probes run after the
// timed windows) and a bare LibTorch loop of the same step: the workload's
// own next_batch() and step() with no probe, no Phases listener and a plain
// steady clock, the loss read back as tbd does. Prints each round's median
// iteration times and the median ratio tbd / bare (budget: 1.01).
//
//   bench_harness_overhead [rounds=5] [workloads=resnet50,dlrm,ncf,gpt,seq2seq] [threads=0]
#include <ATen/Parallel.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tbd/core/phases.h"
#include "tbd/core/rng.h"
#include "tbd/core/statistics.h"
#include "tbd/measure/probes/probe.h"
#include "tbd/measure/runner.h"
#include "tbd/workloads/registry.h"

namespace {

struct Plan {
  std::string workload;
  int64_t batch = 0;  // 0: the workload's default
};

// Small scale, batch sizes that keep one step in the 10–300 ms range here.
tbd::RunOptions options_for(const Plan& p) {
  tbd::RunOptions o;  // the default plan: warm-up, repetitions, iterations
  o.workload = p.workload;
  o.scale = tbd::Scale::small;
  o.batch_size = p.batch;
  o.quiet = true;
  return o;
}

double tbd_median(const Plan& p) {
  const auto options = options_for(p);
  const auto workload = tbd::create_workload(options.workload);
  const auto result = tbd::run_benchmark(options, *workload, tbd::default_probes()).result;
  return result["summary"]["median_s"].get<double>();
}

// The same step with nothing around it: as many warm-up and timed
// iterations as the default run has.
double bare_median(const Plan& p) {
  const tbd::RunOptions o = options_for(p);
  auto w = tbd::create_workload(o.workload);
  tbd::RunOptions resolved = o;
  if (resolved.batch_size == 0) resolved.batch_size = w->info().default_batch;
  resolved.threads = at::get_num_threads();
  const tbd::Settings settings(w->info().settings, {}, w->info().name);
  tbd::seed_everything(o.seed);
  w->setup(resolved, settings, c10::Device(c10::kCPU));
  tbd::Phases phases(c10::Device(c10::kCPU), c10::ScalarType::Float);
  std::vector<double> times;
  const int total = o.warmup + o.repeat * o.iters;
  for (int i = 0; i < total; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = w->step({w->next_batch()}, phases);
    (void)out.loss.item<double>();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i >= o.warmup) times.push_back(s);
  }
  return tbd::percentile(times, 0.5);
}

std::vector<Plan> parse_plans(const std::string& list) {
  std::vector<Plan> plans;
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    Plan p{name, 0};
    if (name == "resnet50") p.batch = 8;
    if (name == "gpt") p.batch = 2;
    if (name == "seq2seq") p.batch = 32;
    plans.push_back(p);
  }
  return plans;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const auto plans = parse_plans(argc > 2 ? argv[2] : "resnet50,dlrm,ncf,gpt,seq2seq");
  if (argc > 3 && std::atoi(argv[3]) > 0) at::set_num_threads(std::atoi(argv[3]));
  if (rounds < 1 || plans.empty()) {
    std::fprintf(stderr, "usage: bench_harness_overhead [rounds>=1] [workloads] [threads]\n");
    return 2;
  }
  std::printf("default tbd run against a bare loop of the same step, small scale, %d threads, %d rounds\n",
              at::get_num_threads(), rounds);
  std::printf("%-10s %6s %12s %12s %8s\n", "workload", "round", "tbd ms", "bare ms", "ratio");
  std::vector<std::pair<std::string, double>> summary;
  for (const auto& plan : plans) {
    std::vector<double> ratios;
    for (int r = 0; r < rounds; ++r) {
      double t = 0, b = 0;
      if (r % 2 == 0) {  // alternate the order so drift cancels
        t = tbd_median(plan);
        b = bare_median(plan);
      } else {
        b = bare_median(plan);
        t = tbd_median(plan);
      }
      ratios.push_back(t / b);
      std::printf("%-10s %6d %12.3f %12.3f %8.4f\n", plan.workload.c_str(), r, t * 1e3, b * 1e3, t / b);
      std::fflush(stdout);
    }
    summary.push_back({plan.workload, tbd::percentile(ratios, 0.5)});
  }
  std::printf("\n%-10s %14s\n", "workload", "median ratio");
  for (const auto& [w, ratio] : summary) std::printf("%-10s %14.4f\n", w.c_str(), ratio);
  std::printf("budget: 1.01\n");
  return 0;
}
