// Draws an 84×84 grayscale frame from rectangles and digits: the renderer of
// the built-in games. Everything is clipped to the frame, so a ball half off
// the screen draws half.
#pragma once

#include <cstdint>

#include "tbd/envs/environment.h"

namespace tbd::envs {

class Canvas {
 public:
  explicit Canvas(Frame& frame) : frame_(frame) {}
  void clear(uint8_t value);
  // The pixels with x0 <= x < x0 + width and y0 <= y < y0 + height.
  void fill_rect(int x0, int y0, int width, int height, uint8_t value);
  // A non-negative number in a 3×5 pixel font scaled by `scale`, left-aligned at (x, y).
  void draw_number(int x, int y, int number, int scale, uint8_t value);

 private:
  Frame& frame_;
};

}  // namespace tbd::envs
