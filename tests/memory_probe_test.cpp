// The memory probe on a small MLP with known shapes, and on resnet50 tiny.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tbd/core/phases.h"
#include "tbd/core/workload.h"
#include "tbd/measure/probes/memory_probe.h"
#include "tbd/measure/probes/memory_tracker.h"
#include "tbd/measure/probes/trace_probe.h"
#include "tbd/measure/runner.h"
#include "test_util.h"

#include <unistd.h>

#include <filesystem>
#include <map>

namespace tbd {
namespace {

constexpr int64_t B = 8, IN = 32, HIDDEN = 64, OUT = 16;

int64_t bytes_of(const std::vector<at::Tensor>& ts) {
  int64_t n = 0;
  for (const auto& t : ts) n += t.numel() * static_cast<int64_t>(t.element_size());
  return n;
}

int64_t at_category(const MemoryPoint& p, MemoryCategory c) { return p.bytes[static_cast<int>(c)]; }

// Two measured iterations of a 32-64-16 MLP with SGD momentum; returns the
// timeline points of the second one (momentum exists by then).
struct MlpRun {
  std::vector<MemoryPoint> points;  // of iteration 2
  int64_t param_bytes = 0, input_bytes = 0, peak = 0;
  int64_t loss_storage_bytes = 0;  // mse_loss returns its scalar in the storage of its unreduced buffer
  MemoryBreakdown peak_breakdown{};
};

MlpRun run_mlp() {
  torch::manual_seed(0);
  torch::nn::Linear l1(IN, HIDDEN), l2(HIDDEN, OUT);
  std::vector<at::Tensor> params = l1->parameters();
  for (auto& p : l2->parameters()) params.push_back(p);
  torch::optim::SGD sgd(params, torch::optim::SGDOptions(0.01).momentum(0.9));
  MemoryProbe probe([&] {
    ParameterSet s;
    s.weights = params;
    s.add(sgd);
    return s;
  });
  Phases phases(c10::kCPU, c10::kFloat, {&probe});
  Batch batch;
  batch.inputs = {torch::randn({B, IN})};
  batch.targets = {torch::randn({B, OUT})};
  batch.samples = B;
  probe.on_window_begin(0);  // tracking starts with the weights (SGD has no momentum yet)
  int64_t loss_storage = 0;
  for (int i = 0; i < 2; ++i) {
    probe.on_iteration_begin(true);
    probe.on_batch(batch);
    auto f = phases.forward();
    auto y = l2(torch::relu(l1(batch.inputs[0])));
    auto loss = torch::mse_loss(y, batch.targets[0]);
    f.end();
    phases.backward(loss);
    phases.optimizer_step(sgd);
    probe.on_iteration_end({});
    loss_storage = static_cast<int64_t>(loss.storage().nbytes());
  }
  probe.on_window_end(0);
  MlpRun r;
  for (const auto& p : probe.tracker().timeline())
    if (p.iteration == 2 && p.event != "peak") r.points.push_back(p);
  r.param_bytes = bytes_of(params);
  r.input_bytes = bytes_of({batch.inputs[0], batch.targets[0]});
  r.peak = probe.tracker().peak();
  r.loss_storage_bytes = loss_storage;
  r.peak_breakdown = probe.tracker().peak_breakdown();
  return r;
}

const MemoryPoint& point(const MlpRun& r, const std::string& event) {
  for (const auto& p : r.points)
    if (p.event == event) return p;
  throw std::runtime_error("no timeline point " + event);
}

// The tracker alone, told of blocks by hand: a block freed inside forward
// is workspace, one that outlives forward a feature map, and the peak
// breakdown is the live set at the maximum, categorised once known.
TEST(MemoryTracker, CategoriesFollowThePhaseThatAllocatedAndTheBlocksFate) {
  MemoryTracker t;
  char a = 0, b = 0, c = 0;  // their addresses stand for blocks
  t.set_measuring(true);
  t.phase_begin(Phase::forward);
  t.report(&a, 100);
  t.report(&b, 50);
  t.report(&b, -50);  // freed inside forward
  t.phase_end(Phase::forward);
  t.point_after_phase(Phase::forward);
  t.phase_begin(Phase::backward);
  t.report(&c, 30);
  t.phase_end(Phase::backward);
  t.set_measuring(false);
  EXPECT_EQ(t.peak(), 150);
  const MemoryBreakdown at_peak = t.peak_breakdown();
  EXPECT_EQ(at_peak[static_cast<int>(MemoryCategory::feature_maps)], 100);
  EXPECT_EQ(at_peak[static_cast<int>(MemoryCategory::workspace)], 50);
  EXPECT_EQ(t.phase_peaks()[phase_index(Phase::forward)], 150);
  EXPECT_EQ(t.phase_peaks()[phase_index(Phase::backward)], 130);
  std::map<std::string, MemoryPoint> points;
  for (const auto& p : t.timeline()) points[p.event] = p;
  ASSERT_TRUE(points.count("forward_end") && points.count("backward_begin") && points.count("peak"));
  EXPECT_EQ(at_category(points["forward_end"], MemoryCategory::feature_maps), 100);
  EXPECT_EQ(at_category(points["forward_end"], MemoryCategory::workspace), 0);
}

TEST(MemoryProbe, MlpWeightsGradientsAndMomentumEqualParameterBytes) {
  const MlpRun r = run_mlp();
  ASSERT_EQ(r.param_bytes, 4 * (IN * HIDDEN + HIDDEN + HIDDEN * OUT + OUT));
  for (const auto& p : r.points) {
    EXPECT_EQ(at_category(p, MemoryCategory::weights), r.param_bytes) << p.event;
    EXPECT_EQ(at_category(p, MemoryCategory::optimizer_state), r.param_bytes) << p.event;
    EXPECT_EQ(at_category(p, MemoryCategory::inputs), r.input_bytes) << p.event;
  }
  EXPECT_EQ(at_category(point(r, "backward_end"), MemoryCategory::weight_gradients), r.param_bytes);
  // zero_grad(set_to_none) in the optimizer phase frees them again.
  EXPECT_EQ(at_category(point(r, "optimizer_end"), MemoryCategory::weight_gradients), 0);
}

TEST(MemoryProbe, MlpFeatureMapsAreWhatAutogradSaves) {
  const MlpRun r = run_mlp();
  // Autograd keeps relu's output (saved by relu and by the second addmm) and
  // the second linear's output (saved by mse_loss); the loss itself is alive
  // too. The first linear's output is freed inside forward (relu is not in
  // place): workspace, which is no longer live at the end of forward.
  const auto& fe = point(r, "forward_end");
  EXPECT_EQ(at_category(fe, MemoryCategory::feature_maps), 4 * (B * HIDDEN + B * OUT) + r.loss_storage_bytes);
  EXPECT_EQ(at_category(fe, MemoryCategory::workspace), 0);
  // Backward frees what autograd saved; the step still holds y and the loss.
  EXPECT_EQ(at_category(point(r, "backward_end"), MemoryCategory::feature_maps), 4 * B * OUT + r.loss_storage_bytes);
}

TEST(MemoryProbe, MlpPeakBreakdownSumsToPeak) {
  const MlpRun r = run_mlp();
  int64_t sum = 0;
  for (int64_t b : r.peak_breakdown) sum += b;
  EXPECT_EQ(sum, r.peak);
  EXPECT_GE(r.peak, 2 * r.param_bytes + r.param_bytes + r.input_bytes);  // weights, grads, momentum, batch
}

TEST(MemoryProbe, ResNet50TinyCategoriesSumToPeak) {
  RunOptions o;
  o.workload = "resnet50";
  o.scale = Scale::tiny;
  o.batch_size = 4;
  o.warmup = 1;
  o.iters = 2;
  o.threads = 1;
  o.quiet = true;
  const auto result = testing::run_registered(o, {"memory"}).result;
  const auto& m = result.at("memory");
  ASSERT_TRUE(m.at("peak_bytes").is_number()) << m.dump();
  int64_t sum = 0;
  for (const auto& [k, v] : m.at("breakdown").items()) sum += v.get<int64_t>();
  EXPECT_EQ(sum, m.at("peak_bytes").get<int64_t>());
  EXPECT_EQ(m.at("breakdown").at("weights").get<int64_t>(), 4 * result.at("model").at("parameters").get<int64_t>());
  EXPECT_GT(m.at("breakdown").at("feature_maps").get<int64_t>(), 0);
  EXPECT_EQ(m.at("breakdown").at("inputs").get<int64_t>(), 4 * (4 * 3 * 32 * 32) + 8 * 4);
  EXPECT_GE(m.at("phase_peak_bytes").at("backward").get<int64_t>(),
            m.at("phase_peak_bytes").at("forward").get<int64_t>());
  const auto& tl = m.at("timeline");
  EXPECT_EQ(tl.at("t_s").size(), tl.at("bytes").at("weights").size());
}

// Sparse gradients (dlrm's tables) are weight gradients too: after backward
// they hold one row per lookup (uncoalesced), here 32 tables × 16 samples ×
// 120 lookups × dimension 8 × 4 bytes of values, besides their indices.
TEST(MemoryProbe, SparseEmbeddingGradientsCountAsWeightGradients) {
  RunOptions o;
  o.workload = "dlrm";
  o.scale = Scale::tiny;
  o.settings = {{"config", "rm2"}};
  o.batch_size = 16;
  o.warmup = 1;
  o.iters = 2;
  o.threads = 1;
  o.quiet = true;
  const auto result = testing::run_registered(o, {"memory"}).result;
  const auto& breakdown = result.at("memory").at("breakdown");
  EXPECT_GE(breakdown.at("weight_gradients").get<int64_t>(), int64_t{32} * 16 * 120 * 8 * 4) << breakdown.dump();
}

TEST(MemoryProbe, LeavesTheProfilerStateAsItFoundIt) {
  MemoryProbe probe([] { return ParameterSet{}; });
  probe.on_window_begin(0);
  // Installed, it reports no profiler as running ...
  EXPECT_FALSE(torch::profiler::impl::profilerEnabled());
  probe.on_window_end(0);
  // ... and once stopped, Kineto starts and stops normally on this thread.
  const auto file = std::filesystem::temp_directory_path() / ("tbd_mem_kineto_" + std::to_string(getpid()) + ".json");
  TraceRecorder recorder(file.string(), c10::kCPU);
  recorder.start();
  torch::mm(torch::randn({4, 4}), torch::randn({4, 4}));
  EXPECT_NO_THROW(recorder.stop_and_save());
  EXPECT_TRUE(std::filesystem::exists(file));
  std::filesystem::remove(file);
}

TEST(MemoryProbe, NotAvailableWhenAnotherProfilerHoldsTheState) {
  const auto file = std::filesystem::temp_directory_path() / ("tbd_mem_kineto2_" + std::to_string(getpid()) + ".json");
  TraceRecorder recorder(file.string(), c10::kCPU);
  recorder.start();
  MemoryProbe probe([] { return ParameterSet{}; });
  probe.on_window_begin(0);  // steps aside instead of displacing Kineto
  nlohmann::json result;
  probe.contribute(result);
  EXPECT_TRUE(result["memory"]["peak_bytes"].is_null());
  EXPECT_NE(result["memory"]["not_available"].get<std::string>().find("another profiler"), std::string::npos);
  probe.on_window_end(0);
  EXPECT_NO_THROW(recorder.stop_and_save());
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace tbd
