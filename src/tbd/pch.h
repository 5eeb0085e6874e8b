// Precompiled header, parsed once for every target: the LibTorch umbrella,
// and the JSON and formatting libraries nearly every tbd file includes (the
// result document is JSON; summaries are formatted with fmt). Measured on
// 2 cores: docs/architecture.md#build.
#pragma once
#include <fmt/format.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>
