// Where this process sits in a distributed run, read from the variables the
// usual launchers set: torchrun's (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) or Slurm's (SLURM_PROCID,
// SLURM_NTASKS, SLURM_LOCALID, the first host of SLURM_STEP_NODELIST or
// SLURM_JOB_NODELIST). `tbd run --nproc N` sets the torchrun ones itself.
#pragma once

#include <functional>
#include <string>

namespace tbd {

struct DistEnvironment {
  int rank = 0, world_size = 1;
  int local_rank = 0, local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string source = "none";  // "torchrun", "slurm" or "none"

  bool distributed() const { return world_size > 1; }
};

using GetEnv = std::function<const char*(const char*)>;

// Throws UsageError for inconsistent or malformed values (RANK >= WORLD_SIZE,
// a non-numeric port, ...), naming the variable.
DistEnvironment read_dist_environment(const GetEnv& getenv);
DistEnvironment read_dist_environment();  // from the process environment

// "node[01-04],other" -> "node01"; "a,b" -> "a"; "host" -> "host".
std::string first_slurm_host(const std::string& nodelist);

}  // namespace tbd
