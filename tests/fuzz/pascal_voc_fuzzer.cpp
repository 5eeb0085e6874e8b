// Pascal VOC annotation XML through Faster R-CNN's annotation parser.
#include <torch/torch.h>

#include "fuzz_support.h"
#include "tbd/data/pascal_voc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = tbd::fuzz::write_scratch("Annotations/000001.xml", tbd::fuzz::as_text(data, size));
  tbd::fuzz::expect_value_or_error([&] { tbd::parse_voc_annotation(path, "000001"); });
  return 0;
}
