#include "fleet/node_info.h"

#include <cmath>

namespace tf::fleet {

using nlohmann::json;

json NodeInfoToJson(const NodeInfo& n) {
  json gpus = json::array();
  for (const GpuInfo& g : n.gpus) {
    gpus.push_back({{"index", g.index},
                    {"model", g.model},
                    {"memory_bytes", g.memory_bytes},
                    {"uuid", g.uuid}});
  }
  return json{{"address", n.address},
              {"cpus", n.cpus},
              {"memory_bytes", n.memory_bytes},
              {"gpus", std::move(gpus)},
              {"simulated_gpus", n.simulated_gpus},
              {"labels", n.labels},
              {"price_per_hour", n.price_per_hour},
              {"spot", n.spot},
              {"version", n.version}};
}

namespace {

Result<NodeInfo> Parse(const json& j) {
  if (!j.is_object()) return InvalidArgument("node: must be a JSON object");
  NodeInfo n;
  auto field = [&](const char* name) -> const json* {
    auto it = j.find(name);
    return it == j.end() ? nullptr : &*it;
  };
  const json* address = field("address");
  if (address == nullptr || !address->is_string() || address->get<std::string>().empty()) {
    return InvalidArgument("address: must be a non-empty string");
  }
  n.address = address->get<std::string>();
  if (const json* c = field("cpus")) {
    if (!c->is_number_integer() || c->get<int64_t>() < 1 || c->get<int64_t>() > 4096) {
      return InvalidArgument("cpus: must be an integer from 1 to 4096");
    }
    n.cpus = c->get<int>();
  }
  if (const json* m = field("memory_bytes")) {
    if (!m->is_number_integer() || m->get<int64_t>() < 0) {
      return InvalidArgument("memory_bytes: must be a non-negative integer");
    }
    n.memory_bytes = m->get<int64_t>();
  }
  if (const json* gs = field("gpus")) {
    if (!gs->is_array() || gs->size() > 64)
      return InvalidArgument("gpus: must be a list of at most 64");
    for (size_t i = 0; i < gs->size(); ++i) {
      const json& g = (*gs)[i];
      std::string where = "gpus[" + std::to_string(i) + "]";
      if (!g.is_object() || !g.contains("index") || !g["index"].is_number_integer()) {
        return InvalidArgument(where + ".index: must be an integer");
      }
      GpuInfo info;
      info.index = g["index"].get<int>();
      if (info.index < 0 || info.index > 63)
        return InvalidArgument(where + ".index: must be 0..63");
      info.model = g.value("model", "");
      info.memory_bytes = g.value("memory_bytes", int64_t{0});
      info.uuid = g.value("uuid", "");
      for (const GpuInfo& seen : n.gpus) {
        if (seen.index == info.index) return InvalidArgument(where + ".index: listed twice");
      }
      n.gpus.push_back(info);
    }
  }
  n.simulated_gpus = j.value("simulated_gpus", false);
  if (const json* l = field("labels")) {
    if (!l->is_object()) return InvalidArgument("labels: must be a mapping of strings");
    for (auto it = l->begin(); it != l->end(); ++it) {
      if (!it.value().is_string())
        return InvalidArgument("labels." + it.key() + ": must be a string");
      n.labels[it.key()] = it.value().get<std::string>();
    }
  }
  if (const json* p = field("price_per_hour")) {
    if (!p->is_number() || !std::isfinite(p->get<double>()) || p->get<double>() < 0) {
      return InvalidArgument("price_per_hour: must be a non-negative number");
    }
    n.price_per_hour = p->get<double>();
  }
  n.spot = j.value("spot", false);
  n.version = j.value("version", "");
  return n;
}

}  // namespace

Result<NodeInfo> NodeInfoFromJson(const json& j) {
  try {
    return Parse(j);
  } catch (const json::exception& e) {  // a field of the wrong type read with value()
    return InvalidArgument(std::string("node: ") + e.what());
  }
}

}  // namespace tf::fleet
