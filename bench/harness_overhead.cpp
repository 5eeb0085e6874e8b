// How much does tbd's harness add to a training iteration? Alternates, in one
// process, `tbd run resnet50 --scale small` (through the real runner, with its
// default probes) and a bare LibTorch loop of the same model, batch, threads
// and optimizer, and reports the median ratio of their median iteration times.
//
//   bench_harness_overhead [rounds=6] [iters=5] [batch=8] [threads=0]
#include <ATen/Parallel.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tbd/measure/runner.h"
#include "tbd/measure/statistics.h"
#include "tbd/nn/resnet.h"

namespace {

double tbd_median(int iters, int64_t batch) {
  tbd::RunOptions o;
  o.workload = "resnet50";
  o.scale = tbd::Scale::small;
  o.batch_size = batch;
  o.iters = iters;
  o.warmup = 1;
  o.quiet = true;
  const auto result = tbd::run_benchmark(o, {"data", "cpu"}).result;
  return result["summary"]["median_s"].get<double>();
}

// The same work as resnet50 at scale small: ResNet-50, 112×112 inputs, 1000
// classes, SGD momentum 0.9, weight decay 1e-4, lr 0.1·B/256, zero_grad to None.
double bare_median(int iters, int64_t batch) {
  tbd::nn::ResNet model{tbd::nn::ResNetConfig{}};
  model->train();
  torch::optim::SGD opt(model->parameters(),
                        torch::optim::SGDOptions(0.1 * batch / 256.0).momentum(0.9).weight_decay(1e-4));
  const auto x = torch::randn({batch, 3, 112, 112});
  const auto y = torch::randint(1000, {batch}, torch::kInt64);
  std::vector<double> times;
  for (int i = 0; i < iters + 1; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
    opt.zero_grad(true);
    (void)loss.item<double>();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i > 0) times.push_back(s);  // the first is warm-up, as in the tbd run
  }
  return tbd::percentile(times, 0.5);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 6;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 5;
  const int64_t batch = argc > 3 ? std::atoll(argv[3]) : 8;
  if (argc > 4 && std::atoi(argv[4]) > 0) at::set_num_threads(std::atoi(argv[4]));
  if (rounds < 1 || iters < 1 || batch < 1) {
    std::fprintf(stderr, "usage: bench_harness_overhead [rounds>=1] [iters>=1] [batch>=1] [threads]\n");
    return 2;
  }
  std::printf("resnet50 small, batch %lld, %d threads, %d rounds of %d iterations\n",
              static_cast<long long>(batch), at::get_num_threads(), rounds, iters);
  std::printf("%6s %12s %12s %8s\n", "round", "tbd ms", "bare ms", "ratio");
  std::vector<double> ratios, tbd_ms, bare_ms;
  for (int r = 0; r < rounds; ++r) {
    double t, b;
    if (r % 2 == 0) {  // alternate the order so drift cancels
      t = tbd_median(iters, batch);
      b = bare_median(iters, batch);
    } else {
      b = bare_median(iters, batch);
      t = tbd_median(iters, batch);
    }
    ratios.push_back(t / b);
    tbd_ms.push_back(t * 1e3);
    bare_ms.push_back(b * 1e3);
    std::printf("%6d %12.2f %12.2f %8.4f\n", r, t * 1e3, b * 1e3, t / b);
  }
  std::printf("median: tbd %.2f ms, bare %.2f ms, ratio %.4f (budget: 1.01)\n", tbd::percentile(tbd_ms, 0.5),
              tbd::percentile(bare_ms, 0.5), tbd::percentile(ratios, 0.5));
  return 0;
}
