// Precompiled header: the LibTorch umbrella, parsed once for every target.
#pragma once
#include <torch/torch.h>
