// --trace: a Kineto Chrome trace whose tbd phase ranges nest the ops.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "tbd/core/error.h"
#include "tbd/core/options.h"
#include "tbd/measure/probes/trace_probe.h"
#include "tbd/measure/runner.h"
#include "test_util.h"

namespace tbd {
namespace {

namespace fs = std::filesystem;

struct Span {
  std::string name;
  double begin, end;
};

TEST(TraceProbe, RejectsUnwritablePaths) {
  EXPECT_THROW(check_trace_path("/nonexistent-dir/t.json"), UsageError);
  EXPECT_THROW(check_trace_path(fs::temp_directory_path().string()), UsageError);
  EXPECT_THROW(check_trace_path(""), UsageError);
  EXPECT_NO_THROW(check_trace_path((fs::temp_directory_path() / "ok.json").string()));
}

TEST(TraceProbe, ResNetTinyTraceHasNestedPhasesAndCoexistsWithProbes) {
  const fs::path file = fs::temp_directory_path() / ("tbd_trace_test_" + std::to_string(getpid()) + ".json");
  RunOptions o;
  o.workload = "resnet50";
  o.scale = Scale::tiny;
  o.batch_size = 2;
  o.warmup = 1;
  o.iters = 2;
  o.repeat = 1;
  o.threads = 1;
  o.quiet = true;
  TraceRequest trace{file.string(), "", 2};
  // The analysis probes' reporter and callbacks come and go before Kineto
  // starts; their figures and the trace both come out.
  const auto outcome = testing::run_registered(o, {"memory", "flops", "ops"}, trace);
  EXPECT_EQ(outcome.result.at("trace").at("file"), file.string());
  EXPECT_EQ(outcome.result.at("summary").at("n").get<int>(), 2);  // trace iterations are not timed
  EXPECT_GT(outcome.result.at("memory").at("peak_bytes").get<int64_t>(), 0);
  EXPECT_GT(outcome.result.at("flops").at("per_sample").get<double>(), 0);
  std::ifstream in(file);
  ASSERT_TRUE(in.good());
  const nlohmann::json doc = nlohmann::json::parse(in);
  fs::remove(file);
  ASSERT_TRUE(doc.contains("traceEvents"));
  std::map<std::string, std::vector<Span>> by_thread;  // complete events per pid/tid
  std::vector<Span> phases;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.value("ph", "") != "X") continue;
    const std::string thread = e.at("pid").dump() + "/" + e.at("tid").dump();
    Span s{e.value("name", ""), e.at("ts").get<double>(), e.at("ts").get<double>() + e.value("dur", 0.0)};
    by_thread[thread].push_back(s);
    if (s.name.rfind("tbd::", 0) == 0) phases.push_back(s);
  }
  // Two iterations: a forward, backward and optimizer range each.
  for (const char* name : {"tbd::forward", "tbd::backward", "tbd::optimizer"})
    EXPECT_EQ(std::count_if(phases.begin(), phases.end(), [&](const Span& s) { return s.name == name; }), 2) << name;
  // Each traced iteration is one ProfilerStep#N range, as torch.profiler marks them.
  for (const char* name : {"ProfilerStep#0", "ProfilerStep#1"})
    EXPECT_EQ(std::count_if(by_thread.begin(), by_thread.end(),
                            [&](const auto& t) {
                              return std::any_of(t.second.begin(), t.second.end(),
                                                 [&](const Span& s) { return s.name == name; });
                            }),
              1)
        << name;
  // Complete events on one thread nest: each starts and ends inside every
  // event that was open when it started (1 µs slack for rounding).
  int nested_in_phase = 0;
  for (auto& [thread, spans] : by_thread) {
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.begin != b.begin ? a.begin < b.begin : a.end > b.end; });
    std::vector<Span> open;
    for (const auto& s : spans) {
      while (!open.empty() && open.back().end <= s.begin + 1e-3) open.pop_back();
      if (!open.empty()) {
        EXPECT_LE(s.end, open.back().end + 1.0) << s.name << " overlaps " << open.back().name << " on " << thread;
        // Inside a phase, itself inside the iteration's ProfilerStep#N range.
        const bool in_phase =
            std::any_of(open.begin(), open.end(), [](const Span& o) { return o.name.rfind("tbd::", 0) == 0; });
        if (in_phase && open.front().name.rfind("ProfilerStep#", 0) == 0) ++nested_in_phase;
      }
      open.push_back(s);
    }
  }
  EXPECT_GT(nested_in_phase, 50);  // the ops of each phase are inside it
}

}  // namespace
}  // namespace tbd
