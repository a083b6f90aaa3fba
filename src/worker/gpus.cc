#include "worker/gpus.h"

#include <dlfcn.h>

namespace tf::worker {
namespace {

// The few NVML entry points used, declared here so that building needs no NVIDIA headers.
using nvmlReturn = int;
using nvmlDevice = void*;
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
constexpr nvmlReturn kNvmlSuccess = 0;

template <typename Fn>
Fn Symbol(void* lib, const char* name) {
  return reinterpret_cast<Fn>(dlsym(lib, name));
}

}  // namespace

GpuDiscovery DiscoverGpus() {
  GpuDiscovery out;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    out.note = "no NVIDIA driver (libnvidia-ml.so.1 not found)";
    return out;
  }
  auto init = Symbol<nvmlReturn (*)()>(lib, "nvmlInit_v2");
  auto shutdown = Symbol<nvmlReturn (*)()>(lib, "nvmlShutdown");
  auto count = Symbol<nvmlReturn (*)(unsigned*)>(lib, "nvmlDeviceGetCount_v2");
  auto handle = Symbol<nvmlReturn (*)(unsigned, nvmlDevice*)>(lib, "nvmlDeviceGetHandleByIndex_v2");
  auto name = Symbol<nvmlReturn (*)(nvmlDevice, char*, unsigned)>(lib, "nvmlDeviceGetName");
  auto memory = Symbol<nvmlReturn (*)(nvmlDevice, NvmlMemory*)>(lib, "nvmlDeviceGetMemoryInfo");
  auto uuid = Symbol<nvmlReturn (*)(nvmlDevice, char*, unsigned)>(lib, "nvmlDeviceGetUUID");
  if (!init || !shutdown || !count || !handle || !name || !memory || !uuid) {
    out.note = "libnvidia-ml.so.1 lacks the NVML functions needed";
    dlclose(lib);
    return out;
  }
  if (init() != kNvmlSuccess) {
    out.note = "NVML did not initialise (is the driver loaded?)";
    dlclose(lib);
    return out;
  }
  unsigned n = 0;
  if (count(&n) == kNvmlSuccess) {
    for (unsigned i = 0; i < n; ++i) {
      nvmlDevice dev = nullptr;
      if (handle(i, &dev) != kNvmlSuccess) continue;
      fleet::GpuInfo g;
      g.index = static_cast<int>(i);
      char buf[128] = {};
      if (name(dev, buf, sizeof buf) == kNvmlSuccess) g.model = buf;
      NvmlMemory mem{};
      if (memory(dev, &mem) == kNvmlSuccess) g.memory_bytes = static_cast<int64_t>(mem.total);
      char id[128] = {};
      if (uuid(dev, id, sizeof id) == kNvmlSuccess) g.uuid = id;
      out.gpus.push_back(g);
    }
  }
  if (out.gpus.empty()) out.note = "NVML found no GPUs";
  shutdown();
  dlclose(lib);
  return out;
}

std::vector<fleet::GpuInfo> SimulatedGpus(int count, int64_t memory_bytes) {
  std::vector<fleet::GpuInfo> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(fleet::GpuInfo{i, "simulated", memory_bytes, "simulated-" + std::to_string(i)});
  }
  return out;
}

}  // namespace tf::worker
