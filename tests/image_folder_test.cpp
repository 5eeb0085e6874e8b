#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "tbd/core/error.h"
#include "tbd/data/image_folder.h"
#include "tbd/data/image_folder_batches.h"
#include "tbd/data/image_transforms.h"
#include "tbd/data/jpeg.h"
#include "test_util.h"
#include "workload_steps.h"

namespace tbd {
namespace {
using testing::error_of;
using testing::TempDir;
using testing::write_bytes;

// A smooth colour gradient (JPEG-friendly), different per seed.
RgbImage gradient(int w, int h, int seed) {
  RgbImage img;
  img.width = w;
  img.height = h;
  img.pixels.resize(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &img.pixels[(static_cast<size_t>(y) * w + x) * 3];
      p[0] = static_cast<uint8_t>((x * 255) / w);
      p[1] = static_cast<uint8_t>((y * 255) / h);
      p[2] = static_cast<uint8_t>(seed * 40);
    }
  return img;
}

// ROOT/cat/0.jpg, 1.jpg, 2.jpg and ROOT/dog/0.jpg, 1.jpg of assorted sizes.
void write_folder(const TempDir& dir) {
  for (int i = 0; i < 3; ++i)
    write_bytes(dir / ("cat/" + std::to_string(i) + ".jpg"), encode_jpeg(gradient(40 + 8 * i, 30, i)));
  for (int i = 0; i < 2; ++i)
    write_bytes(dir / ("dog/" + std::to_string(i) + ".JPEG"), encode_jpeg(gradient(24, 36 + 4 * i, i + 3)));
  write_bytes(dir / "dog/readme.txt", {'h', 'i'});  // ignored: not a JPEG name
}

TEST(Jpeg, RoundTripsThroughLibjpegTurbo) {
  const RgbImage in = gradient(33, 17, 2);
  const RgbImage out = decode_jpeg(encode_jpeg(in, 95), "mem");
  ASSERT_EQ(out.width, 33);
  ASSERT_EQ(out.height, 17);
  double err = 0;
  for (size_t i = 0; i < in.pixels.size(); ++i) err += std::abs(int(in.pixels[i]) - int(out.pixels[i]));
  EXPECT_LT(err / static_cast<double>(in.pixels.size()), 4.0);  // lossy, but close
}

TEST(Jpeg, RejectsNonJpegAndTruncatedData) {
  EXPECT_NE(error_of<Error>([] {
              decode_jpeg({'G', 'I', 'F', '8', '9', 'a'}, "x/a.jpg");
            }).find("x/a.jpg: not a JPEG"),
            std::string::npos);
  const auto whole = encode_jpeg(gradient(64, 64, 1));
  for (const size_t keep : {whole.size() / 4, whole.size() * 9 / 10}) {  // in the header, in the data
    const std::vector<uint8_t> cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(keep));
    const std::string msg = error_of<Error>([&] { decode_jpeg(cut, "x/b.jpg"); });
    EXPECT_NE(msg.find("x/b.jpg"), std::string::npos) << msg;
    EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  }
}

TEST(ImageFolder, ScansClassesInSortedOrder) {
  TempDir dir;
  write_folder(dir);
  const ImageFolder f(dir.path().string());
  EXPECT_EQ(f.classes(), 2);
  EXPECT_EQ(f.class_names(), (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(f.size(), 5);
  EXPECT_EQ(f.label(0), 0);
  EXPECT_EQ(f.label(4), 1);
}

TEST(ImageFolder, RejectsMissingAndEmptyFolders) {
  TempDir dir;
  EXPECT_NE(error_of<UsageError>([&] { ImageFolder((dir / "nope")); }).find("no such folder"), std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] { ImageFolder(dir.path().string()); }).find("no class sub-folders"),
            std::string::npos);
  std::filesystem::create_directories(dir / "cat");
  EXPECT_NE(error_of<UsageError>([&] { ImageFolder(dir.path().string()); }).find("no .jpg"), std::string::npos);
}

TEST(ImageFolder, EmptyClassFolderIsRefusedNotCounted) {
  TempDir dir;
  write_folder(dir);
  std::filesystem::create_directories(dir / "bird");  // sorts first: it would take label 0 from cat
  const std::string e = error_of<UsageError>([&] { ImageFolder(dir.path().string()); });
  EXPECT_NE(e.find("class folder " + dir / "bird" + " holds no .jpg/.jpeg files"), std::string::npos) << e;
  EXPECT_NE(e.find("add its images or move the folder out of"), std::string::npos) << e;
  // A folder holding only files of other kinds is just as empty.
  testing::write_bytes(dir / "bird/notes.txt", {'x'});
  EXPECT_NE(error_of<UsageError>([&] { ImageFolder(dir.path().string()); }).find(dir / "bird" + " holds no"),
            std::string::npos);
}

TEST(ImageFolder, SymlinkLoopNamesThePath) {
  TempDir dir;
  write_folder(dir);
  for (const std::string& loop : {dir / "loop", dir / "cat/loop.jpg"}) {
    ASSERT_EQ(::symlink(loop.c_str(), loop.c_str()), 0);
    const std::string e = error_of<Error>([&] { ImageFolder(dir.path().string()); });
    EXPECT_NE(e.find(loop + ": a loop of symbolic links"), std::string::npos) << e;
    EXPECT_EQ(e.find("filesystem error"), std::string::npos) << e;
    std::filesystem::remove(loop);
  }
}

TEST(ImageFolderBatches, ProducesNormalisedAugmentedBatchesCoveringEveryImage) {
  TempDir dir;
  write_folder(dir);
  auto folder = std::make_shared<const ImageFolder>(dir.path().string());
  ImageFolderBatches batches(folder, 5, 16, 7, 2);
  const ImageBatch b = batches.next();  // one epoch exactly
  EXPECT_EQ(b.images.sizes(), (std::vector<int64_t>{5, 3, 16, 16}));
  EXPECT_TRUE(torch::isfinite(b.images).all().item<bool>());
  // Normalised with ImageNet statistics: pixel 0 maps to about -2.1, 255 to about +2.6.
  EXPECT_GE(b.images.min().item<float>(), -2.2f);
  EXPECT_LE(b.images.max().item<float>(), 2.7f);
  EXPECT_EQ(b.labels.sum().item<int64_t>(), 2);  // three cats (0) and two dogs (1)
}

TEST(ImageFolderBatches, SameSeedSameBatches) {
  TempDir dir;
  write_folder(dir);
  auto folder = std::make_shared<const ImageFolder>(dir.path().string());
  ImageFolderBatches a(folder, 3, 16, 11, 1), b(folder, 3, 16, 11, 3);  // worker count must not matter
  for (int i = 0; i < 4; ++i) {
    const ImageBatch x = a.next(), y = b.next();
    EXPECT_TRUE(torch::equal(x.images, y.images)) << "batch " << i;
    EXPECT_TRUE(torch::equal(x.labels, y.labels)) << "batch " << i;
  }
}

TEST(ImageFolderBatches, CorruptFileIsNamedInTheError) {
  TempDir dir;
  write_folder(dir);
  write_bytes(dir / "cat/broken.jpg", {0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 'J', 'F'});
  auto folder = std::make_shared<const ImageFolder>(dir.path().string());
  ImageFolderBatches batches(folder, 6, 16, 1, 2);  // 6 of 6 files: the broken one is in batch 0
  const std::string msg = error_of<Error>([&] { batches.next(); });
  EXPECT_NE(msg.find("broken.jpg"), std::string::npos) << msg;
}

TEST(RandomResizedCrop, StaysInsideTheImageWithAllowedAspect) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200; ++i) {
    const CropBox b = random_resized_crop_box(60, 90, rng);
    ASSERT_GE(b.top, 0);
    ASSERT_GE(b.left, 0);
    ASSERT_LE(b.top + b.height, 60);
    ASSERT_LE(b.left + b.width, 90);
    const double area = static_cast<double>(b.height) * b.width / (60.0 * 90.0);
    EXPECT_GT(area, 0.05);  // 8% of the area, less rounding
  }
}

TEST(ResNetOnImageFolder, TrainsOnRealFiles) {
  TempDir dir;
  write_folder(dir);
  testing::WorkloadUnderTest t("resnet50", Scale::tiny, {}, 4, c10::ScalarType::Float, dir.path().string());
  const Batch b = t.workload->next_batch();
  EXPECT_EQ(b.inputs[0].sizes(), (std::vector<int64_t>{4, 3, 32, 32}));
  EXPECT_TRUE(std::isfinite(t.step(b)));
  EXPECT_EQ(t.workload->configuration()["classes"], 2);  // the folder's classes size the classifier
}

}  // namespace
}  // namespace tbd
