// Box operations of Faster R-CNN checked against hand cases and against a
// direct, point-by-point RoIAlign written here from the definition.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tbd/data/detection_batch.h"
#include "tbd/nn/detection/anchor_generator.h"
#include "tbd/nn/detection/balanced_sampler.h"
#include "tbd/nn/detection/box_coder.h"
#include "tbd/nn/detection/boxes.h"
#include "tbd/nn/detection/matcher.h"
#include "tbd/nn/detection/multi_scale_roi_align.h"
#include "tbd/nn/detection/nms.h"
#include "tbd/nn/detection/roi_align.h"

namespace tbd {
namespace {
using torch::indexing::Slice;

// RoIAlign (aligned=false) one sampling point at a time, from the definition:
// the value at (y, x) is the bilinear mix of the four pixels around it, zero
// beyond one pixel outside the map, coordinates clamped at the borders.
// Built from autograd-tracked selections, so its gradient is the reference too.
torch::Tensor direct_roi_align(const torch::Tensor& f, const torch::Tensor& rois, double scale, int64_t P, int64_t G) {
  const int64_t C = f.size(1), H = f.size(2), W = f.size(3);
  std::vector<torch::Tensor> outputs;
  for (int64_t r = 0; r < rois.size(0); ++r) {
    const auto roi = rois[r];
    const int64_t b = roi[0].item<int64_t>();
    const double x1 = roi[1].item<double>() * scale, y1 = roi[2].item<double>() * scale;
    const double w = std::max(roi[3].item<double>() * scale - x1, 1.0);
    const double h = std::max(roi[4].item<double>() * scale - y1, 1.0);
    auto out = torch::zeros({C, P, P}, f.options());
    for (int64_t py = 0; py < P; ++py) {
      for (int64_t px = 0; px < P; ++px) {
        auto acc = torch::zeros({C}, f.options());
        for (int64_t gy = 0; gy < G; ++gy) {
          for (int64_t gx = 0; gx < G; ++gx) {
            double y = y1 + py * h / P + (gy + 0.5) * h / P / G;
            double x = x1 + px * w / P + (gx + 0.5) * w / P / G;
            if (y < -1.0 || y > H || x < -1.0 || x > W) continue;
            y = std::max(y, 0.0), x = std::max(x, 0.0);
            int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1i, x1i;
            if (y0 >= H - 1) {
              y1i = y0 = H - 1;
              y = static_cast<double>(y0);
            } else {
              y1i = y0 + 1;
            }
            if (x0 >= W - 1) {
              x1i = x0 = W - 1;
              x = static_cast<double>(x0);
            } else {
              x1i = x0 + 1;
            }
            const double ly = y - y0, lx = x - x0, hy = 1 - ly, hx = 1 - lx;
            acc = acc + hy * hx * f.index({b, Slice(), y0, x0}) + hy * lx * f.index({b, Slice(), y0, x1i}) +
                  ly * hx * f.index({b, Slice(), y1i, x0}) + ly * lx * f.index({b, Slice(), y1i, x1i});
          }
        }
        out.index_put_({Slice(), py, px}, acc / static_cast<double>(G * G));
      }
    }
    outputs.push_back(out);
  }
  return torch::stack(outputs);
}

TEST(RoIAlign, MatchesTheDirectBilinearComputationAndItsGradient) {
  torch::manual_seed(3);
  auto features = torch::randn({2, 3, 9, 11}, torch::kDouble).requires_grad_(true);
  // Inside, crossing the border, partly beyond one pixel outside, thinner than a pixel, on image 1.
  const auto rois = torch::tensor({{0.0, 4.0, 2.0, 30.0, 20.0},
                                   {1.0, -6.0, -3.0, 10.0, 12.0},
                                   {0.0, 30.0, 25.0, 60.0, 50.0},
                                   {1.0, 8.0, 8.0, 8.5, 9.0},
                                   {1.0, 0.0, 0.0, 44.0, 36.0}},
                                  torch::kDouble);
  for (const auto& [scale, P, G] :
       {std::tuple{0.25, int64_t{7}, int64_t{2}}, std::tuple{0.5, int64_t{3}, int64_t{1}}}) {
    const auto ours = nn::roi_align(features, rois, scale, P, G);
    const auto direct = direct_roi_align(features, rois, scale, P, G);
    ASSERT_EQ(ours.sizes(), direct.sizes());
    EXPECT_TRUE(torch::allclose(ours, direct, 1e-9, 1e-12)) << (ours - direct).abs().max();

    const auto weights = torch::randn_like(ours);
    const auto grad_ours = torch::autograd::grad({(ours * weights).sum()}, {features})[0];
    const auto grad_direct = torch::autograd::grad({(direct * weights).sum()}, {features})[0];
    EXPECT_TRUE(torch::allclose(grad_ours, grad_direct, 1e-9, 1e-12));
    EXPECT_GT(grad_ours.abs().sum().item<double>(), 0);
  }
}

TEST(RoIAlign, AveragesTheSamplingPointsOfEachBinOnARamp) {
  // On f(y, x) = x every bilinear read returns x exactly, so each output is
  // the mean x of its bin's sampling points: the bin centre.
  const auto ramp = torch::arange(20, torch::kDouble).view({1, 1, 1, 20}).expand({1, 1, 20, 20}).contiguous();
  const auto out = nn::roi_align(ramp, torch::tensor({{0.0, 2.0, 3.0, 14.0, 9.0}}, torch::kDouble), 1.0, 4, 2);
  for (int64_t q = 0; q < 4; ++q) EXPECT_NEAR(out[0][0][1][q].item<double>(), 2.0 + (q + 0.5) * 3.0, 1e-12);
}

TEST(RoIAlign, FiniteDifferencesAgreeWithTheGradient) {
  torch::manual_seed(5);
  auto features = torch::randn({1, 2, 6, 7}, torch::kDouble).requires_grad_(true);
  const auto rois = torch::tensor({{0.0, 1.3, 0.7, 5.1, 4.9}, {0.0, -0.5, 2.2, 6.8, 5.5}}, torch::kDouble);
  const auto weights = torch::randn({2, 2, 3, 3}, torch::kDouble);
  const auto objective = [&](const torch::Tensor& f) { return (nn::roi_align(f, rois, 1.0, 3, 2) * weights).sum(); };
  const auto grad = torch::autograd::grad({objective(features)}, {features})[0];
  torch::NoGradGuard no_grad;
  const double eps = 1e-6;
  for (int64_t k : {0, 5, 13, 20, 41, 60, 83}) {
    auto plus = features.detach().clone(), minus = features.detach().clone();
    plus.view({-1})[k] += eps;
    minus.view({-1})[k] -= eps;
    const double numeric = (objective(plus).item<double>() - objective(minus).item<double>()) / (2 * eps);
    EXPECT_NEAR(grad.reshape({-1})[k].item<double>(), numeric, 1e-6) << "element " << k;
  }
}

TEST(RoIAlign, MultiScaleUsesTheFpnLevelOfEachBox) {
  const auto boxes = torch::tensor({{0.f, 0.f, 224.f, 224.f},
                                    {0.f, 0.f, 112.f, 112.f},
                                    {0.f, 0.f, 10.f, 10.f},
                                    {0.f, 0.f, 1000.f, 1000.f},
                                    {0.f, 0.f, 448.f, 448.f}});
  const auto levels = nn::map_boxes_to_levels(boxes, 2, 5);
  EXPECT_TRUE(torch::equal(levels, torch::tensor({2, 1, 0, 3, 3}, torch::kInt64))) << levels;

  // Levels whose values are the level index: each box reads its own level.
  std::vector<torch::Tensor> features;
  for (int64_t l = 0; l < 4; ++l) features.push_back(torch::full({1, 1, 256 >> l, 256 >> l}, static_cast<float>(l)));
  nn::MultiScaleRoIAlign pool(2, 2);
  const auto out = pool(features, {boxes.slice(0, 0, 3)}, 1024);
  EXPECT_FLOAT_EQ(out[0].mean().item<float>(), 2.0f);
  EXPECT_FLOAT_EQ(out[1].mean().item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(out[2].mean().item<float>(), 0.0f);
}

TEST(Nms, KeepsTheBestOfEachOverlappingGroup) {
  const auto boxes = torch::tensor({{0.f, 0.f, 10.f, 10.f},      // 0
                                    {1.f, 1.f, 11.f, 11.f},      // 1: IoU 81/119 ≈ 0.68 with 0
                                    {20.f, 20.f, 30.f, 30.f},    // 2: apart
                                    {0.f, 0.f, 10.f, 10.f},      // 3: duplicate of 0, best score
                                    {20.f, 20.f, 30.f, 25.f}});  // 4: inside 2, IoU 0.5
  const auto scores = torch::tensor({0.9f, 0.8f, 0.7f, 0.95f, 0.6f});
  const auto as_vector = [](const torch::Tensor& t) {
    return std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
  };
  EXPECT_EQ(as_vector(nn::nms(boxes, scores, 0.5)), (std::vector<int64_t>{3, 2, 4}));  // 0.5 is not above 0.5
  EXPECT_EQ(as_vector(nn::nms(boxes, scores, 0.4)), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(as_vector(nn::nms(boxes, scores, 0.7)), (std::vector<int64_t>{3, 1, 2, 4}));
  // In different groups nothing suppresses anything.
  const auto groups = torch::tensor({0, 1, 0, 2, 1}, torch::kInt64);
  EXPECT_EQ(as_vector(nn::batched_nms(boxes, scores, groups, 0.3)), (std::vector<int64_t>{3, 0, 1, 2, 4}));
  EXPECT_EQ(nn::nms(torch::empty({0, 4}), torch::empty({0}), 0.5).numel(), 0);
}

TEST(Boxes, IouAndClipping) {
  const auto a = torch::tensor({{0.f, 0.f, 10.f, 10.f}}),
             b = torch::tensor({{5.f, 0.f, 15.f, 10.f}, {20.f, 20.f, 21.f, 21.f}});
  const auto iou = nn::box_iou(a, b);
  EXPECT_NEAR(iou[0][0].item<float>(), 50.0 / 150.0, 1e-6);
  EXPECT_EQ(iou[0][1].item<float>(), 0.0f);
  const auto clipped = nn::clip_boxes_to_image(torch::tensor({{-5.f, 3.f, 40.f, 90.f}}), 50, 30);
  EXPECT_TRUE(torch::equal(clipped, torch::tensor({{0.f, 3.f, 30.f, 50.f}})));
}

TEST(BoxCoder, EncodesByHandAndRoundTrips) {
  nn::BoxCoder unit({1, 1, 1, 1});
  const auto code = unit.encode(torch::tensor({{5.f, 0.f, 15.f, 20.f}}), torch::tensor({{0.f, 0.f, 10.f, 10.f}}));
  EXPECT_TRUE(torch::allclose(code, torch::tensor({{0.5f, 0.5f, 0.0f, std::log(2.0f)}})));

  torch::manual_seed(1);
  const auto corners = [](int64_t n) {
    const auto xy = torch::rand({n, 2}) * 100, wh = torch::rand({n, 2}) * 50 + 1;
    return torch::cat({xy, xy + wh}, 1).to(torch::kDouble);
  };
  const auto boxes = corners(50), refs = corners(50);
  for (const auto& weights : {std::array<double, 4>{1, 1, 1, 1}, std::array<double, 4>{10, 10, 5, 5}}) {
    nn::BoxCoder coder(weights);
    EXPECT_TRUE(torch::allclose(coder.decode(coder.encode(boxes, refs), refs), boxes, 1e-9, 1e-9));
  }
  // Several boxes per reference (one per class) decode side by side.
  nn::BoxCoder head({10, 10, 5, 5});
  const auto two = torch::cat({head.encode(boxes, refs), head.encode(refs, refs)}, 1);
  EXPECT_TRUE(torch::allclose(head.decode(two, refs), torch::cat({boxes, refs}, 1), 1e-9, 1e-9));
}

TEST(Anchors, CountsAndShapesPerLevel) {
  nn::AnchorGenerator gen({{32}, {64}, {128}, {256}, {512}}, {0.5, 1.0, 2.0});
  const auto base = gen.base_anchors(0, torch::kFloat);
  // Aspect = height / width: ratio 0.5 is wide (√2·32 ≈ 45 by 32/√2 ≈ 23, rounded halves).
  EXPECT_TRUE(torch::equal(
      base, torch::tensor({{-23.f, -11.f, 23.f, 11.f}, {-16.f, -16.f, 16.f, 16.f}, {-11.f, -23.f, 11.f, 23.f}})));
  // A 608×800 padded batch: strides 4 … 64.
  const std::vector<std::pair<int64_t, int64_t>> grids = {{152, 200}, {76, 100}, {38, 50}, {19, 25}, {10, 13}};
  const auto anchors = gen.generate(608, 800, grids, torch::kFloat);
  int64_t expected = 0;
  for (const auto& [h, w] : grids) expected += h * w * 3;
  EXPECT_EQ(anchors.size(0), expected);
  EXPECT_EQ(expected, 3 * (30400 + 7600 + 1900 + 475 + 130));
  // Cell-major order: the second cell is one stride (4 px) to the right.
  EXPECT_TRUE(torch::equal(anchors.slice(0, 3, 6), base + torch::tensor({4.f, 0.f, 4.f, 0.f})));
  // The last level's first anchor is the 512 wide one at the origin.
  const int64_t last = expected - 10 * 13 * 3;
  EXPECT_TRUE(torch::equal(anchors[last], gen.base_anchors(4, torch::kFloat)[0]));
}

TEST(Matcher, ThresholdsAndLowQualityMatches) {
  const auto quality = torch::tensor({{0.9f, 0.4f, 0.1f, 0.2f}, {0.1f, 0.5f, 0.6f, 0.25f}});
  const auto strict = nn::Matcher(0.7, 0.3, false)(quality);
  EXPECT_TRUE(torch::equal(strict, torch::tensor({0, -2, -2, -1}, torch::kInt64)));
  // Ground truth 1 overlaps prediction 2 best (0.6): it claims it anyway.
  const auto rpn = nn::Matcher(0.7, 0.3, true)(quality);
  EXPECT_TRUE(torch::equal(rpn, torch::tensor({0, -2, 1, -1}, torch::kInt64)));
}

TEST(BalancedSampler, CapsPositivesAndFillsWithNegatives) {
  torch::manual_seed(0);
  nn::BalancedSampler sampler(256, 0.5);
  auto labels = torch::zeros({1000}, torch::kFloat);
  labels.slice(0, 0, 10).fill_(1);
  labels.slice(0, 990, 1000).fill_(-1);  // ignored
  auto s = sampler(labels);
  EXPECT_EQ(s.positive.numel(), 10);
  EXPECT_EQ(s.negative.numel(), 246);
  EXPECT_TRUE((labels.index_select(0, s.negative) == 0).all().item<bool>());
  EXPECT_EQ(std::get<0>(at::_unique(s.negative)).numel(), 246);

  labels.slice(0, 0, 300).fill_(3);  // many positives (any label ≥ 1)
  s = sampler(labels);
  EXPECT_EQ(s.positive.numel(), 128);
  EXPECT_EQ(s.negative.numel(), 128);
  EXPECT_TRUE((labels.index_select(0, s.positive) >= 1).all().item<bool>());
}

TEST(DetectionBatch, ResizesNormalisesAndPads) {
  LabelledImage a{torch::full({3, 375, 500}, 0.5f), torch::tensor({{10.f, 20.f, 110.f, 220.f}}),
                  torch::tensor({7}, torch::kInt64)};
  LabelledImage b{torch::full({3, 500, 375}, 0.5f), torch::tensor({{0.f, 0.f, 375.f, 500.f}}),
                  torch::tensor({1}, torch::kInt64)};
  const Batch batch = make_detection_batch({a, b}, {600, 1000}, torch::kCPU);
  // Shorter side 600: 375×500 → 600×800 and 500×375 → 800×600; padded to 800×800 (multiples of 32).
  EXPECT_EQ(batch.inputs[0].sizes(), (std::vector<int64_t>{2, 3, 800, 800}));
  EXPECT_TRUE(torch::equal(batch.inputs[1], torch::tensor({{600, 800}, {800, 600}}, torch::kInt64)));
  EXPECT_TRUE(torch::allclose(batch.targets[0], torch::tensor({{16.f, 32.f, 176.f, 352.f}})));
  EXPECT_TRUE(torch::allclose(batch.targets[2], torch::tensor({{0.f, 0.f, 600.f, 800.f}})));
  // Normalised with the ImageNet statistics; padding stays zero.
  EXPECT_NEAR(batch.inputs[0][0][0][10][10].item<float>(), (0.5 - 0.485) / 0.229, 1e-5);
  EXPECT_EQ(batch.inputs[0][0][0][700][10].item<float>(), 0.0f);
  // The longer side is capped: a 100×1000 strip scales by 1 (1000 / 1000), not 6.
  const auto strip =
      resize_for_detection({torch::zeros({3, 100, 1000}), torch::zeros({0, 4}), torch::zeros({0})}, {600, 1000});
  EXPECT_EQ(strip.image.sizes(), (std::vector<int64_t>{3, 100, 1000}));
}

}  // namespace
}  // namespace tbd
