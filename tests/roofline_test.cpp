// The roofline: bytes counted per operator as its definition says, the
// machine's ceilings measured, and the verdicts of operators whose bound is
// known (a large elementwise add is memory-bound, a large GEMM compute-bound,
// a 1-element op overhead-bound) through the probe's own path.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "tbd/measure/machine/ceilings.h"
#include "tbd/measure/machine/peak.h"
#include "tbd/measure/probes/roofline_probe.h"
#include "tbd/nn/layer_scope.h"

namespace tbd {
namespace {

// The units the probe saw while `body` ran, keyed by operator name.
template <class Body>
std::map<std::string, RooflineStats> units_of(RooflineProbe& probe, const Body& body) {
  probe.start();
  probe.set_counting(true);
  body();
  probe.set_counting(false);
  probe.stop();
  std::map<std::string, RooflineStats> by_op;
  for (const auto& [key, s] : probe.stats()) by_op[key.substr(0, key.rfind('|'))] = s;
  return by_op;
}

// dlrm's sparse embedding gradients: reading a sparse tensor's size calls
// operators (_values, _indices) that must not re-enter the observer (it
// recursed until the stack overflowed).
TEST(Roofline, SparseTensorsCountValuesAndIndicesWithoutRecursing) {
  const auto sparse = at::eye(4).to_sparse();  // 4 float values, 2x4 int64 indices
  RooflineProbe probe;
  const auto units = units_of(probe, [&] { at::add(sparse, sparse); });
  double bytes = 0;
  for (const auto& [op, u] : units) bytes += u.bytes;
  EXPECT_GE(bytes, 2 * (4 * 4 + 8 * 8.0));  // both sparse inputs read (values and indices), at least
}

TEST(Roofline, BytesAreInputsReadPlusOutputsWritten) {
  const auto x = at::ones({1000}), y = at::ones({1000}), a = at::ones({64, 32}), b = at::ones({32, 16});
  auto target = at::empty({1000});
  RooflineProbe probe;
  const auto units = units_of(probe, [&] {
    at::add(x, y);    // reads 2 arrays, writes 1
    at::mm(a, b);     // a FLOP-rule unit: 2·64·32·16 FLOPs
    a.t();            // a view: t calls transpose, which calls as_strided; none moves data
    target.copy_(x);  // reads x, writes target (its old contents are not read)
  });
  EXPECT_DOUBLE_EQ(units.at("aten::add").bytes, 3 * 1000 * 4.0);
  EXPECT_DOUBLE_EQ(units.at("aten::mm").bytes, (64 * 32 + 32 * 16 + 64 * 16) * 4.0);
  EXPECT_DOUBLE_EQ(units.at("aten::mm").flops, 2.0 * 64 * 32 * 16);
  EXPECT_EQ(units.count("aten::t"), 0u);  // it calls other operators: they count, it does not
  EXPECT_DOUBLE_EQ(units.at("aten::as_strided").bytes, 0.0);
  EXPECT_DOUBLE_EQ(units.at("aten::copy_").bytes, 2 * 1000 * 4.0);
  // Inside a unit nothing counts twice: linear is one unit, not also its addmm.
  const auto w = at::ones({16, 32}), bias = at::ones({16});
  RooflineProbe again;
  const auto inner = units_of(again, [&] { at::linear(a, w, bias); });
  EXPECT_EQ(inner.count("aten::addmm"), 0u);
  EXPECT_DOUBLE_EQ(inner.at("aten::linear").flops, 2.0 * 64 * 32 * 16);
}

TEST(Roofline, KnownOperatorsGetTheirKnownBounds) {
  // This machine's ceilings, measured the way `tbd env --peak` measures them.
  GemmPeakOptions quick;
  quick.size = 1024;
  quick.min_trials = 3;
  quick.trial_seconds = 0.05;
  const nlohmann::json gemm = measure_gemm_peak(c10::kCPU, "fp32", quick);
  BandwidthOptions bw;
  bw.trial_seconds = 0.05;
  bw.min_trials = 3;
  const nlohmann::json ceilings = {{"compute", gemm},
                                   {"memory_bandwidth", measure_memory_bandwidth(c10::kCPU, bw)},
                                   {"dispatch_overhead", measure_dispatch_overhead(c10::kCPU, 2000)}};
  ASSERT_GT(ceilings["memory_bandwidth"]["bytes_per_s"].get<double>(), 0);
  ASSERT_GT(ceilings["dispatch_overhead"]["seconds_per_op"].get<double>(), 0);

  const auto big = at::ones({int64_t{1} << 24}), other = at::ones({int64_t{1} << 24});
  const auto a = at::randn({1024, 1024}), b = at::randn({1024, 1024});
  const auto one = at::ones({1});
  RooflineProbe probe;
  const auto units = units_of(probe, [&] {
    for (int i = 0; i < 3; ++i) at::add(big, other);  // 192 MiB moved, no FLOP counted
    for (int i = 0; i < 3; ++i) at::mm(a, b);         // 2.1 GFLOP on 12 MiB
    for (int i = 0; i < 200; ++i) at::mul(one, one);  // 12 bytes each
  });
  const auto bound = [&](const char* op) {
    return judge_roofline_unit(op, "", units.at(op), 1, ceilings)["bound"].get<std::string>();
  };
  EXPECT_EQ(bound("aten::add"), "memory");
  EXPECT_EQ(bound("aten::mm"), "compute");
  EXPECT_EQ(bound("aten::mul"), "overhead");
  // The headroom is what lies above the ceiling, never negative.
  const auto judged = judge_roofline_unit("aten::add", "", units.at("aten::add"), 1, ceilings);
  EXPECT_GE(judged["headroom_s"].get<double>(), 0);
  EXPECT_NEAR(judged["seconds"].get<double>(),
              judged["headroom_s"].get<double>() + judged["attainable_s"].get<double>(),
              1e-9 + 1e-6 * judged["seconds"].get<double>());
}

// Each unit also counts in the named layer it ran in (nn::LayerScope).
TEST(Roofline, UnitsAlsoCountInTheirNamedLayer) {
  const auto x = at::ones({1000}), y = at::ones({1000}), a = at::ones({64, 32}), b = at::ones({32, 16});
  RooflineProbe probe;
  probe.start();
  probe.set_counting(true);
  {
    nn::LayerScope layer("stream");
    at::add(x, y);
  }
  {
    nn::LayerScope layer("gemm");
    at::mm(a, b);
  }
  at::mul(x, y);
  probe.set_counting(false);
  probe.stop();
  const auto s = probe.layer_stats();
  ASSERT_TRUE(s.count("stream|aten::add|elementwise"));
  ASSERT_TRUE(s.count("gemm|aten::mm|gemm"));
  ASSERT_TRUE(s.count("(no layer)|aten::mul|elementwise"));
  EXPECT_DOUBLE_EQ(s.at("stream|aten::add|elementwise").bytes, 3 * 1000 * 4.0);
  EXPECT_DOUBLE_EQ(s.at("gemm|aten::mm|gemm").flops, 2.0 * 64 * 32 * 16);
}

TEST(Roofline, WithoutACeilingThereIsNoVerdict) {
  RooflineStats s;
  s.calls = 1, s.seconds = 1e-3, s.bytes = 1e6;
  const auto u = judge_roofline_unit("aten::add", "elementwise", s, 1,
                                     {{"compute", {{"not_available", "x"}}},
                                      {"memory_bandwidth", {{"not_available", "x"}}},
                                      {"dispatch_overhead", {{"not_available", "x"}}}});
  EXPECT_TRUE(u["bound"].is_null());
  EXPECT_TRUE(u["headroom_s"].is_null());
  EXPECT_DOUBLE_EQ(u["achieved_bytes_per_s"].get<double>(), 1e9);
}

}  // namespace
}  // namespace tbd
