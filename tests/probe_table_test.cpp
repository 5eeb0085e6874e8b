// The probe table: the one list of probes, from which names, kinds and the
// probes themselves come.
#include <gtest/gtest.h>

#include <set>

#include "tbd/core/error.h"
#include "tbd/measure/probes/probe.h"

namespace tbd {
namespace {

TEST(ProbeTable, EachRowMakesAProbeThatKnowsItsRow) {
  std::set<std::string> names;
  for (const auto& row : probe_table()) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name << " twice";
    const auto probe = make_probe(row.name);
    EXPECT_EQ(probe->name(), row.name);
    EXPECT_EQ(probe->kind(), row.kind) << row.name;
  }
  EXPECT_EQ(probe_names().size(), probe_table().size());
  EXPECT_EQ(probe_names().front(), "time");
}

TEST(ProbeTable, AnalysisProbesAreTheInstrumentingOnes) {
  std::set<std::string> analysis;
  for (const auto& row : probe_table())
    if (row.kind == ProbeKind::analysis) analysis.insert(row.name);
  EXPECT_EQ(analysis, (std::set<std::string>{"flops", "memory", "ops", "roofline", "gradients", "layers"}));
}

TEST(ProbeTable, DefaultsAreKnownAndUnknownNamesAreUsageErrors) {
  for (const auto& name : default_probes()) EXPECT_NO_THROW(make_probe(name)) << name;
  EXPECT_THROW(make_probe("nope"), UsageError);
}

}  // namespace
}  // namespace tbd
