// Sizes as users type them on the command line.
#pragma once

#include <string>

namespace tbd {

// "512M", "8G", "1.5GiB", "1000000" (bytes; K/M/G/T are powers of 1024).
// Throws UsageError naming `flag` for anything else.
long long parse_byte_size(const std::string& text, const std::string& flag);

}  // namespace tbd
