#include "tbd/dist/dist_environment.h"

#include <cerrno>
#include <cstdlib>

#include "tbd/core/error.h"

namespace tbd {
namespace {

int read_int(const GetEnv& getenv, const char* name, int fallback, int min, int max) {
  const char* text = getenv(name);
  if (!text || !*text) return fallback;
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max)
    throw UsageError(std::string("environment variable ") + name + "='" + text + "' is not an integer in [" +
                     std::to_string(min) + ", " + std::to_string(max) + "]");
  return static_cast<int>(v);
}

}  // namespace

std::string first_slurm_host(const std::string& nodelist) {
  // The first entry ends at a comma outside brackets.
  std::string first;
  int depth = 0;
  for (char c : nodelist) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) break;
    first += c;
  }
  const auto open = first.find('[');
  if (open == std::string::npos) return first;
  // prefix[01-04,07] -> prefix01: the first number of the first range.
  std::string inside = first.substr(open + 1);
  const auto stop = inside.find_first_of("-,]");
  return first.substr(0, open) + inside.substr(0, stop);
}

DistEnvironment read_dist_environment(const GetEnv& getenv) {
  DistEnvironment e;
  constexpr int kMaxRanks = 1 << 20;
  if (getenv("WORLD_SIZE") || getenv("RANK")) {
    e.source = "torchrun";
    e.world_size = read_int(getenv, "WORLD_SIZE", 1, 1, kMaxRanks);
    if (!getenv("RANK") && e.world_size > 1)
      throw UsageError("WORLD_SIZE=" + std::to_string(e.world_size) +
                       " is set but RANK is not; "
                       "set RANK to this process's rank in [0, WORLD_SIZE)");
    // RANK alone would run one rank that believes it has peers, or be
    // refused as "rank 1 is not below the world size 1": name what is missing.
    if (getenv("RANK") && !getenv("WORLD_SIZE"))
      throw UsageError(std::string("RANK=") + getenv("RANK") +
                       " is set but WORLD_SIZE is not; set WORLD_SIZE to the number of ranks (WORLD_SIZE=1 for one "
                       "process), or unset RANK to run alone");
    e.rank = read_int(getenv, "RANK", 0, 0, kMaxRanks);
    e.local_rank = read_int(getenv, "LOCAL_RANK", e.rank, 0, kMaxRanks);
    e.local_world_size = read_int(getenv, "LOCAL_WORLD_SIZE", e.world_size, 1, kMaxRanks);
  } else if (getenv("SLURM_NTASKS") && getenv("SLURM_PROCID")) {
    e.source = "slurm";
    e.world_size = read_int(getenv, "SLURM_NTASKS", 1, 1, kMaxRanks);
    e.rank = read_int(getenv, "SLURM_PROCID", 0, 0, kMaxRanks);
    e.local_rank = read_int(getenv, "SLURM_LOCALID", 0, 0, kMaxRanks);
    e.local_world_size = read_int(getenv, "SLURM_NTASKS_PER_NODE", 1, 1, kMaxRanks);
    const char* nodes = getenv("SLURM_STEP_NODELIST");
    if (!nodes) nodes = getenv("SLURM_JOB_NODELIST");
    if (nodes && *nodes) e.master_addr = first_slurm_host(nodes);
  }
  if (e.rank >= e.world_size)
    throw UsageError("rank " + std::to_string(e.rank) + " is not below the world size " + std::to_string(e.world_size) +
                     " (" + (e.source == "slurm" ? "SLURM_PROCID/SLURM_NTASKS" : "RANK/WORLD_SIZE") +
                     "); ranks run from 0 to world size - 1");
  if (e.local_rank >= e.local_world_size && e.source == "torchrun" && getenv("LOCAL_WORLD_SIZE"))
    throw UsageError("LOCAL_RANK=" + std::to_string(e.local_rank) +
                     " is not below LOCAL_WORLD_SIZE=" + std::to_string(e.local_world_size));
  if (const char* addr = getenv("MASTER_ADDR"); addr && *addr) e.master_addr = addr;
  e.master_port = read_int(getenv, "MASTER_PORT", e.master_port, 1, 65535);
  if (e.world_size > 1 && e.source == "torchrun" && !getenv("MASTER_ADDR"))
    throw UsageError("WORLD_SIZE=" + std::to_string(e.world_size) +
                     " needs MASTER_ADDR (and MASTER_PORT): the host of rank 0's rendezvous");
  return e;
}

DistEnvironment read_dist_environment() {
  return read_dist_environment([](const char* name) { return std::getenv(name); });
}

}  // namespace tbd
