#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tbd/core/error.h"
#include "tbd/data/jpeg.h"
#include "tbd/data/pascal_voc.h"
#include "test_util.h"

namespace tbd {
namespace {
using testing::error_of;
using testing::TempDir;
using testing::write_bytes;

RgbImage flat_image(int w, int h, uint8_t value) {
  RgbImage img;
  img.width = w;
  img.height = h;
  img.pixels.assign(static_cast<size_t>(w) * h * 3, value);
  return img;
}

void write_text(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

std::string object_xml(const std::string& name, int x1, int y1, int x2, int y2, int difficult = 0) {
  return "<object><name>" + name + "</name><difficult>" + std::to_string(difficult) + "</difficult><bndbox><xmin>" +
         std::to_string(x1) + "</xmin><ymin>" + std::to_string(y1) + "</ymin><xmax>" + std::to_string(x2) +
         "</xmax><ymax>" + std::to_string(y2) + "</ymax></bndbox></object>";
}

std::string annotation_xml(int w, int h, const std::string& objects) {
  return "<annotation><folder>VOC2007</folder><size><width>" + std::to_string(w) + "</width><height>" +
         std::to_string(h) + "</height><depth>3</depth></size>" + objects + "</annotation>";
}

// Two images: 000001 (48x32, a dog and a difficult person), 000002 (40x40, a car).
void write_voc(const TempDir& dir) {
  write_bytes(dir / "JPEGImages/000001.jpg", encode_jpeg(flat_image(48, 32, 200)));
  write_bytes(dir / "JPEGImages/000002.jpg", encode_jpeg(flat_image(40, 40, 60)));
  write_text(dir / "Annotations/000001.xml",
             annotation_xml(48, 32, object_xml("dog", 1, 2, 48, 32) + object_xml("person", 10, 5, 20, 25, 1)));
  write_text(dir / "Annotations/000002.xml", annotation_xml(40, 40, object_xml(" car ", 5, 5, 30, 35)));
  write_text(dir / "ImageSets/Main/trainval.txt", "000001\n000002\n\n");
}

TEST(PascalVoc, ReadsImagesBoxesAndLabels) {
  TempDir dir;
  write_voc(dir);
  const PascalVoc voc(dir.path().string());
  ASSERT_EQ(voc.size(), 2u);
  const DetectionSample s = voc.read(0);
  EXPECT_EQ(s.id, "000001");
  EXPECT_EQ(s.image.sizes(), (std::vector<int64_t>{3, 32, 48}));
  EXPECT_NEAR(s.image.mean().item<double>(), 200.0 / 255.0, 0.02);
  ASSERT_EQ(s.boxes.sizes(), (std::vector<int64_t>{2, 4}));
  // 1-based inclusive (1,2)-(48,32) becomes 0-based (0,1)-(48,32).
  EXPECT_TRUE(torch::equal(s.boxes[0], torch::tensor({0.f, 1.f, 48.f, 32.f})));
  const auto& names = PascalVoc::class_names();
  ASSERT_EQ(names.size(), 20u);
  EXPECT_EQ(names[static_cast<size_t>(s.labels[0].item<int64_t>() - 1)], "dog");
  EXPECT_EQ(names[static_cast<size_t>(s.labels[1].item<int64_t>() - 1)], "person");
  EXPECT_TRUE(voc.annotation(0).objects[1].difficult);
  EXPECT_EQ(names[static_cast<size_t>(voc.read(1).labels[0].item<int64_t>() - 1)], "car");
}

TEST(PascalVoc, MissingLayoutIsAUsageErrorSayingWhatIsExpected) {
  TempDir dir;
  EXPECT_NE(error_of<UsageError>([&] { PascalVoc(dir / "nope"); }).find("no such folder"), std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] { PascalVoc(dir.path().string()); }).find("JPEGImages"), std::string::npos);
  write_voc(dir);
  EXPECT_NE(error_of<UsageError>([&] { PascalVoc(dir.path().string(), "test"); }).find("test.txt"), std::string::npos);
}

// Each broken file is named, with what is wrong in it.
TEST(PascalVoc, BadAnnotationsNameTheFileAndTheProblem) {
  struct Case {
    std::string xml, expected;
  };
  const std::vector<Case> cases = {
      {"<annotation><size><width>48</width>", "malformed XML"},
      {"<other/>", "no <annotation>"},
      {annotation_xml(48, 32, object_xml("dragon", 1, 1, 5, 5)), "unknown class name 'dragon'"},
      {annotation_xml(48, 32, object_xml("dog", 1, 1, 49, 5)), "outside the 48x32 image"},
      {annotation_xml(48, 32, object_xml("dog", 0, 1, 5, 5)), "outside"},
      {annotation_xml(48, 32, object_xml("dog", 9, 1, 5, 5)), "inverted"},
      {annotation_xml(48, 32, ""), "no <object>"},
      {"<annotation><size><width>4x8</width><height>32</height></size></annotation>", "not a number"},
      {"<annotation>" + object_xml("dog", 1, 1, 5, 5) + "</annotation>", "missing <size>"},
  };
  for (const auto& c : cases) {
    TempDir dir;
    write_voc(dir);
    write_text(dir / "Annotations/000002.xml", c.xml);
    const std::string msg = error_of<Error>([&] { PascalVoc(dir.path().string()); });
    EXPECT_NE(msg.find("000002.xml"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << "expected '" << c.expected << "' in: " << msg;
  }
}

TEST(PascalVoc, MissingFilesAreNamedWithTheSplitLine) {
  TempDir dir;
  write_voc(dir);
  std::filesystem::remove(dir / "JPEGImages/000002.jpg");
  std::string msg = error_of<Error>([&] { PascalVoc(dir.path().string()); });
  EXPECT_NE(msg.find("trainval.txt:2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("000002.jpg is missing"), std::string::npos) << msg;
  write_bytes(dir / "JPEGImages/000002.jpg", encode_jpeg(flat_image(40, 40, 60)));
  std::filesystem::remove(dir / "Annotations/000001.xml");
  msg = error_of<Error>([&] { PascalVoc(dir.path().string()); });
  EXPECT_NE(msg.find("000001.xml is missing"), std::string::npos) << msg;
}

TEST(PascalVoc, CorruptOrMismatchedImagesFailWhenRead) {
  TempDir dir;
  write_voc(dir);
  const auto whole = encode_jpeg(flat_image(40, 40, 60));
  write_bytes(dir / "JPEGImages/000002.jpg", std::vector<uint8_t>(whole.begin(), whole.begin() + 40));
  write_bytes(dir / "JPEGImages/000001.jpg", encode_jpeg(flat_image(32, 48, 200)));  // rotated
  const PascalVoc voc(dir.path().string());  // opening checks annotations, not pixels
  std::string msg = error_of<Error>([&] { voc.read(1); });
  EXPECT_NE(msg.find("000002.jpg"), std::string::npos) << msg;
  msg = error_of<Error>([&] { voc.read(0); });
  EXPECT_NE(msg.find("000001.jpg: the image is 32x48 but its annotation says 48x32"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tbd
