// What a worker says about its machine when it registers (store::NodeRecord.info_json).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace tf::fleet {

struct GpuInfo {
  int index = 0;
  std::string model;  // "NVIDIA H100 80GB HBM3", or "simulated"
  int64_t memory_bytes = 0;
  std::string uuid;
};

struct NodeInfo {
  std::string address;  // where other nodes of a gang reach this one
  int cpus = 1;
  int64_t memory_bytes = 0;
  std::vector<GpuInfo> gpus;
  bool simulated_gpus = false;                // declared with --gpus N on a machine without them
  std::map<std::string, std::string> labels;  // zone, placement_group, interconnect, ...
  double price_per_hour = 0;                  // what the owner pays for the machine
  bool spot = false;
  std::string version;  // of the worker
};

nlohmann::json NodeInfoToJson(const NodeInfo& info);
// kInvalidArgument naming the field for anything missing, of the wrong type or out of range.
Result<NodeInfo> NodeInfoFromJson(const nlohmann::json& json);

}  // namespace tf::fleet
