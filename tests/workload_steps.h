// Drives a workload directly (no runner): set up at a scale, take steps.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tbd/core/rng.h"
#include "tbd/data/embedding_bags.h"
#include "tbd/workloads/registry.h"

namespace tbd::testing {

struct WorkloadUnderTest {
  std::unique_ptr<Workload> workload;
  Phases phases{c10::Device(c10::kCPU), c10::ScalarType::Float};

  explicit WorkloadUnderTest(const std::string& name, Scale scale = Scale::tiny,
                             std::map<std::string, std::string> settings = {}, int64_t batch = 0,
                             c10::ScalarType autocast = c10::ScalarType::Float, std::string data = "")
      : workload(create_workload(name)), phases(c10::Device(c10::kCPU), autocast) {
    RunOptions o;
    o.workload = name;
    o.scale = scale;
    o.batch_size = batch > 0 ? batch : workload->info().default_batch;
    o.settings = settings;
    o.data_path = std::move(data);
    o.data_workers = 1;
    set_up(o);
  }

  // With options of the caller's own (workload, scale and batch_size set),
  // and the process group of a data-parallel rank where it has one.
  explicit WorkloadUnderTest(const RunOptions& o, ProcessGroup* group = nullptr)
      : workload(create_workload(o.workload)), phases(c10::Device(c10::kCPU), autocast_type(o.precision)) {
    if (group) workload->set_process_group(group);
    set_up(o);
  }

  void set_up(const RunOptions& o) {
    seed_everything(o.seed);
    workload->setup(o, Settings(workload->info().settings, o.settings, o.workload), c10::Device(c10::kCPU));
  }

  double step(const Batch& b) { return workload->step({b}, phases).loss.item<double>(); }
  // One optimizer step over these micro-batches (--grad-accum).
  double step(const std::vector<Batch>& micro_batches) {
    return workload->step(micro_batches, phases).loss.item<double>();
  }

  // Losses of `steps` iterations on one fixed batch.
  std::vector<double> train_on_one_batch(int steps) {
    const Batch b = workload->next_batch();
    std::vector<double> losses;
    for (int i = 0; i < steps; ++i) losses.push_back(step(b));
    return losses;
  }
};

// Samples [start, start + count) of a batch: every input's and target's rows,
// or, where the inputs after the first are embedding bags (dlrm), those
// samples' bags.
inline Batch batch_rows(const Batch& b, int64_t start, int64_t count, bool embedding_bags = false) {
  Batch part;
  if (embedding_bags) {
    part.inputs = bag_rows(at::TensorList(b.inputs).slice(1), start, count);
    part.inputs.insert(part.inputs.begin(), b.inputs[0].narrow(0, start, count));
  } else {
    for (const auto& t : b.inputs) part.inputs.push_back(t.narrow(0, start, count));
  }
  for (const auto& t : b.targets) part.targets.push_back(t.narrow(0, start, count));
  part.samples = count;
  return part;
}

}  // namespace tbd::testing
