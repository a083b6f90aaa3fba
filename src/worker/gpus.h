// The machine's GPUs, found through NVIDIA's NVML loaded at run time (dlopen): a machine
// without the driver, or without GPUs, simply has none. `--gpus N` declares simulated ones.
#pragma once

#include <string>
#include <vector>

#include "fleet/node_info.h"

namespace tf::worker {

struct GpuDiscovery {
  std::vector<fleet::GpuInfo> gpus;
  std::string note;  // why none were found, for the log ("libnvidia-ml.so.1 not found")
};

GpuDiscovery DiscoverGpus();

// `count` simulated GPUs with indices 0..count-1, for tests and machines without GPUs.
std::vector<fleet::GpuInfo> SimulatedGpus(int count, int64_t memory_bytes = 0);

}  // namespace tf::worker
