// `tensorfleet up|server --config FILE`: a YAML file with the server's settings (the flags'
// long names, in snake_case) and the node pools it declares:
//
//   port: 8470
//   store: postgresql://tf@db/tensorfleet
//   heartbeat_timeout: 10s
//   pools:
//     - name: gpu-a10
//       provider: local
//       machine: {gpus: 1, cpus: 4, price_per_hour: 1.006}
//       max: 2
//
// A flag given on the command line wins over the file. Each pool is a spec as `pool create`
// takes it (docs/pools.md), applied at start: created, or its spec replaced if it differs.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace tf::cli {

struct ServerConfig {
  std::map<std::string, std::string> settings;  // setting (port, log_level, ...) -> its value
  // Each pool's spec as the file has it (its lines at their own line numbers, so that an error
  // names the file's line), and the file's name.
  std::vector<std::pair<std::string, std::string>> pools;
};

// The settings a config file may hold besides `pools`.
inline constexpr const char* kServerSettings[] = {"listen",
                                                  "port",
                                                  "store",
                                                  "objects",
                                                  "s3_domain",
                                                  "log_level",
                                                  "heartbeat_timeout",
                                                  "lost_node_retention",
                                                  "max_copy_size",
                                                  "webhook_hosts"};

// kNotFound if the file cannot be read; kInvalidArgument "<file>:<line>: <what is wrong>".
// Pool specs are checked when the server applies them.
Result<ServerConfig> ReadServerConfig(const std::string& path);

}  // namespace tf::cli
