#include "tbd/envs/canvas.h"

#include <algorithm>
#include <string>

namespace tbd::envs {
namespace {

// 3×5 glyphs of the digits, one row per 3-bit number (bit 2 = left column).
constexpr uint8_t kDigits[10][5] = {{7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7},
                                    {5, 5, 7, 1, 1}, {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1},
                                    {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7}};

}  // namespace

void Canvas::clear(uint8_t value) { frame_.fill(value); }

void Canvas::fill_rect(int x0, int y0, int width, int height, uint8_t value) {
  const int x_begin = std::max(0, x0), x_end = std::min(kFrameSize, x0 + width);
  const int y_begin = std::max(0, y0), y_end = std::min(kFrameSize, y0 + height);
  for (int y = y_begin; y < y_end; ++y)
    std::fill(frame_.begin() + y * kFrameSize + x_begin, frame_.begin() + y * kFrameSize + x_end, value);
}

void Canvas::draw_number(int x, int y, int number, int scale, uint8_t value) {
  const std::string text = std::to_string(std::max(0, number));
  for (char c : text) {
    const auto& glyph = kDigits[c - '0'];
    for (int row = 0; row < 5; ++row)
      for (int col = 0; col < 3; ++col)
        if (glyph[row] & (4 >> col)) fill_rect(x + col * scale, y + row * scale, scale, scale, value);
    x += 4 * scale;
  }
}

}  // namespace tbd::envs
