// A node pool: machines of one shape that the leader's pool controller starts when work waits
// for capacity that the shape can provide, and stops after they have been idle for a while
// (docs/pools.md). The spec is written in YAML (ParsePoolSpec) and kept as JSON.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace tf::pools {

// What each machine of the pool offers, as its worker registers it.
struct MachineShape {
  int gpus = 0;
  std::string gpu_model;         // informational ("A10G"); the worker reports what it finds
  int64_t gpu_memory_bytes = 0;  // each GPU's; 0: not said
  int cpus = 1;
  int64_t memory_bytes = 0;
  double price_per_hour = 0;  // what one machine costs: the autoscaler starts cheaper pools first
  bool spot = false;
  std::string zone;
  std::string placement_group;
  std::map<std::string, std::string> labels;
};

enum class ProviderType { kLocal, kCommand, kSsh };

// The command provider's scripts (pools/command_provider.h; their contract is in
// docs/pools.md, "The command provider"). Each is an argv; a shell string in the YAML becomes
// {"/bin/sh", "-c", string}.
struct CommandScripts {
  std::vector<std::string> create;
  std::vector<std::string> remove;  // `delete:` in the spec
  std::vector<std::string> list;
  std::map<std::string, std::string> env;  // added to the server's environment
};

// The ssh provider's hosts (pools/ssh_provider.h): one machine per host.
struct SshHosts {
  std::vector<std::string> hosts;  // [user@]host[:port]
  std::string key;                 // the private key, on the server's machine ("": ssh's own)
  // Known host keys ("": DATA_DIR/pools/<pool>/known_hosts, each host's accepted when first met).
  std::string known_hosts;
  std::string remote_dir = ".tensorfleet";  // on each host; relative paths from the login's home
  // Copy this server's binary to <remote_dir>/bin/tensorfleet when it is missing or differs;
  // false: run `tensorfleet` from the host's PATH.
  bool install = true;
};

// How machines are started and stopped. local: a `tensorfleet worker` process on the server's
// own machine per node (pools/local_provider.h); command: the operator's scripts, which wrap a
// cloud's CLI (pools/command_provider.h); ssh: hosts the operator owns or rents
// (pools/ssh_provider.h).
struct ProviderSpec {
  ProviderType type = ProviderType::kLocal;
  // command and ssh: each call's limit (a call still running then is killed), further tries of
  // a failed call (with the same input), and where machines reach the server ("": the server's
  // own URL).
  TimeMs timeout_ms = 5 * kMinuteMs;
  int retries = 2;
  std::string server_url;
  CommandScripts command;  // for kCommand
  SshHosts ssh;            // for kSsh
};

struct PoolSpec {
  std::string name;
  ProviderSpec provider;
  MachineShape machine;
  int min = 0;
  int max = 1;
  TimeMs idle_timeout_ms = 10 * kMinuteMs;   // an empty node is stopped after this
  TimeMs start_timeout_ms = 10 * kMinuteMs;  // a machine not registered by then is deleted
};

inline constexpr int kMaxPoolNodes = 1000;

// YAML text -> spec. kInvalidArgument "<source>:<line>: <field>: <what is wrong>".
Result<PoolSpec> ParsePoolSpec(std::string_view yaml, std::string_view source);

nlohmann::json PoolSpecToJson(const PoolSpec& spec);
// kInternal for JSON that PoolSpecToJson did not write (a damaged row).
Result<PoolSpec> PoolSpecFromJson(const nlohmann::json& json);

const char* ProviderTypeName(ProviderType type);

}  // namespace tf::pools
