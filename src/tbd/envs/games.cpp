#include "tbd/envs/games.h"

#include "tbd/core/error.h"
#include "tbd/envs/breakout.h"
#include "tbd/envs/pong.h"

namespace tbd::envs {

std::vector<std::string> game_names() { return {"pong", "breakout"}; }

std::unique_ptr<Environment> make_game(const std::string& name, int64_t max_frames) {
  if (name == "pong") return std::make_unique<Pong>(max_frames);
  if (name == "breakout") return std::make_unique<Breakout>(max_frames);
  throw UsageError("unknown game '" + name + "': choose pong or breakout");
}

}  // namespace tbd::envs
