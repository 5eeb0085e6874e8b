// Factories of every workload; the registry (registry.cpp) lists them.
#pragma once

#include <memory>

#include "tbd/core/workload.h"

namespace tbd {

std::unique_ptr<Workload> make_resnet50();
std::unique_ptr<Workload> make_inception3();
std::unique_ptr<Workload> make_seq2seq();
std::unique_ptr<Workload> make_transformer();
std::unique_ptr<Workload> make_faster_rcnn();
std::unique_ptr<Workload> make_gpt();
std::unique_ptr<Workload> make_llama();
std::unique_ptr<Workload> make_deepspeech2();
std::unique_ptr<Workload> make_ncf();
std::unique_ptr<Workload> make_dlrm();
std::unique_ptr<Workload> make_wgan();
std::unique_ptr<Workload> make_a3c();

}  // namespace tbd
