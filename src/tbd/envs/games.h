// The built-in games by name, for `--set game=...`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tbd/envs/environment.h"

namespace tbd::envs {

std::vector<std::string> game_names();  // "pong", "breakout"
// Throws UsageError naming the known games.
std::unique_ptr<Environment> make_game(const std::string& name, int64_t max_frames = 100000);

}  // namespace tbd::envs
