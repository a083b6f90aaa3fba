#include "pools/machine_provider.h"

#include <cstdio>

#include "jobs/quantities.h"
#include "pools/command_provider.h"
#include "pools/local_provider.h"
#include "pools/ssh_provider.h"

namespace tf::pools {

std::string WorkerServerUrl(const PoolSpec& spec, const ProviderContext& context) {
  return spec.provider.server_url.empty() ? context.server_url : spec.provider.server_url;
}

std::vector<std::string> WorkerArguments(const PoolSpec& spec, const std::string& server_url,
                                         const std::string& id, const std::string& address) {
  const MachineShape& m = spec.machine;
  std::vector<std::string> args = {"--server",
                                   server_url,
                                   "worker",
                                   "--name",
                                   id,
                                   "--gpus",
                                   std::to_string(m.gpus),
                                   "--cpus",
                                   std::to_string(m.cpus),
                                   "--label",
                                   "pool=" + spec.name};
  if (!address.empty()) args.insert(args.end(), {"--address", address});
  if (m.gpu_memory_bytes > 0) {
    args.insert(args.end(), {"--gpu-memory", std::to_string(m.gpu_memory_bytes)});
  }
  if (m.memory_bytes > 0) args.insert(args.end(), {"--memory", std::to_string(m.memory_bytes)});
  for (const auto& [key, value] : m.labels) args.insert(args.end(), {"--label", key + "=" + value});
  if (!m.zone.empty()) args.insert(args.end(), {"--zone", m.zone});
  if (!m.placement_group.empty()) args.insert(args.end(), {"--placement-group", m.placement_group});
  if (m.price_per_hour > 0) {
    char price[32];
    std::snprintf(price, sizeof price, "%.6g", m.price_per_hour);
    args.insert(args.end(), {"--price", price});
  }
  if (m.spot) args.push_back("--spot");
  return args;
}

std::unique_ptr<MachineProvider> NewMachineProvider(const PoolSpec& spec,
                                                    const ProviderContext& context) {
  ProviderContext own = context;
  own.dir /= spec.name;
  if (spec.provider.type == ProviderType::kCommand) {
    return std::make_unique<CommandProvider>(spec, std::move(own));
  }
  if (spec.provider.type == ProviderType::kSsh) {
    return std::make_unique<SshProvider>(spec, std::move(own));
  }
  return std::make_unique<LocalProvider>(spec.name, std::move(own));
}

}  // namespace tf::pools
