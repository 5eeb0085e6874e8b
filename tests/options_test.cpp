#include <gtest/gtest.h>

#include "tbd/core/error.h"
#include "tbd/core/options.h"
#include "tbd/core/settings.h"
#include "test_util.h"

namespace tbd {
namespace {
using testing::error_of;

TEST(Options, DefaultsAreValid) { EXPECT_NO_THROW(validate(RunOptions{})); }

TEST(Options, RejectsImpossibleValuesNamingTheOption) {
  auto bad = [](auto mutate) {
    RunOptions o;
    mutate(o);
    return error_of<UsageError>([&] { validate(o); });
  };
  EXPECT_NE(bad([](RunOptions& o) { o.batch_size = -4; }).find("--batch-size"), std::string::npos);
  EXPECT_NE(bad([](RunOptions& o) { o.iters = 0; }).find("--iters"), std::string::npos);
  EXPECT_NE(bad([](RunOptions& o) { o.iters = -1; }).find("--iters"), std::string::npos);
  EXPECT_NE(bad([](RunOptions& o) { o.repeat = 0; }).find("--repeat"), std::string::npos);
  EXPECT_NE(bad([](RunOptions& o) { o.warmup = -2; }).find("--warmup"), std::string::npos);
  EXPECT_NE(bad([](RunOptions& o) { o.min_time = -1; }).find("--min-time"), std::string::npos);
  EXPECT_NE(bad([](RunOptions& o) { o.data_workers = 0; }).find("--data-workers"), std::string::npos);
  EXPECT_NE(bad([](RunOptions& o) { o.device = "tpu"; }).find("--device"), std::string::npos);
  // Thousands of threads end in libgomp's "Out of memory": refused above a bound that names itself.
  const std::string threads = bad([](RunOptions& o) { o.threads = 3000; });
  EXPECT_NE(threads.find("--threads 3000 is more than this machine can use: at most " + std::to_string(max_threads())),
            std::string::npos)
      << threads;
  EXPECT_NO_THROW(validate([] {
    RunOptions o;
    o.threads = max_threads();
    return o;
  }()));
  EXPECT_NE(bad([](RunOptions& o) { o.batch_size = kMaxBatchSize + 1; }).find("--batch-size must be at most"),
            std::string::npos);
  // fp16 has no CPU autocast path: refused with the alternative named.
  const std::string fp16 = bad([](RunOptions& o) { o.precision = Precision::fp16; });
  EXPECT_NE(fp16.find("bf16"), std::string::npos) << fp16;
  // TF32 is a tensor-core mode: refused on the CPU, naming the precision.
  const std::string tf32 = bad([](RunOptions& o) { o.precision = Precision::tf32; });
  EXPECT_NE(tf32.find("tf32"), std::string::npos) << tf32;
  EXPECT_NE(tf32.find("CUDA"), std::string::npos) << tf32;
}

TEST(Options, ParsesScaleAndPrecision) {
  EXPECT_EQ(parse_scale("tiny"), Scale::tiny);
  EXPECT_EQ(parse_scale("full"), Scale::full);
  EXPECT_EQ(parse_precision("bf16"), Precision::bf16);
  EXPECT_EQ(parse_precision("tf32"), Precision::tf32);
  EXPECT_STREQ(to_string(parse_precision("tf32")), "tf32");
  EXPECT_THROW(parse_scale("huge"), UsageError);
  EXPECT_THROW(parse_precision("fp8"), UsageError);
}

TEST(Settings, ParsesKeyValue) {
  EXPECT_EQ(parse_setting("depth=101"), (std::pair<std::string, std::string>{"depth", "101"}));
  EXPECT_EQ(parse_setting("lr=1e-3").second, "1e-3");
  EXPECT_THROW(parse_setting("depth"), UsageError);
  EXPECT_THROW(parse_setting("=5"), UsageError);
  EXPECT_THROW(parse_setting("depth="), UsageError);
}

TEST(Settings, ValidatesAgainstSpecs) {
  const std::vector<SettingSpec> specs = {
      choice_setting("depth", "50", {"18", "50"}, "depth"),
      integer_setting("layers", 2, 1, 8, "layers"),
      real_setting("lr", 0.1, 0.0, 10.0, "lr"),
      bool_setting("aux", true, "aux head"),
  };
  const Settings defaults(specs, {}, "w");
  EXPECT_EQ(defaults.integer("depth"), 50);
  EXPECT_EQ(defaults.integer("layers"), 2);
  EXPECT_DOUBLE_EQ(defaults.real("lr"), 0.1);
  EXPECT_TRUE(defaults.boolean("aux"));

  const Settings given(specs, {{"depth", "18"}, {"layers", "8"}, {"lr", "2.5"}, {"aux", "false"}}, "w");
  EXPECT_EQ(given.integer("depth"), 18);
  EXPECT_EQ(given.integer("layers"), 8);
  EXPECT_DOUBLE_EQ(given.real("lr"), 2.5);
  EXPECT_FALSE(given.boolean("aux"));

  auto error = [&](std::map<std::string, std::string> kv) {
    return error_of<UsageError>([&] { Settings(specs, kv, "w"); });
  };
  EXPECT_NE(error({{"depth", "7"}}).find("one of 18, 50"), std::string::npos);
  EXPECT_NE(error({{"layers", "9"}}).find("[1, 8]"), std::string::npos);
  EXPECT_NE(error({{"layers", "two"}}).find("layers"), std::string::npos);
  EXPECT_NE(error({{"lr", "nan"}}).find("lr"), std::string::npos);
  EXPECT_NE(error({{"aux", "maybe"}}).find("true or false"), std::string::npos);
  const std::string unknown = error({{"width", "3"}});
  EXPECT_NE(unknown.find("unknown setting 'width'"), std::string::npos);
  EXPECT_NE(unknown.find("depth, layers, lr, aux"), std::string::npos) << unknown;
}

}  // namespace
}  // namespace tbd
