// The local provider: each machine is a `tensorfleet worker` process on the server's own
// machine, in its own directory under the pool's (its log there as worker.log). For tests, the
// demo, and one big box carved into several nodes. Its GPUs are simulated where the machine has
// none (worker --gpus); with real GPUs, each node offers the first `gpus` of them, so carve a
// GPU machine with labels and node selectors rather than several GPU pools.
//
// The processes are this server's children: they stop when it does (pool_controller.h stops
// them gracefully at shutdown; process_group.h kills them if the server is killed).
#pragma once

#include <map>
#include <memory>

#include "pools/machine_provider.h"
#include "worker/process_group.h"

namespace tf::pools {

class LocalProvider : public MachineProvider {
 public:
  // `context.dir` is the pool's own directory.
  LocalProvider(std::string pool, ProviderContext context)
      : pool_(std::move(pool)), context_(std::move(context)) {}
  ~LocalProvider() override;

  Status Create(const PoolSpec& spec, const std::string& id,
                const std::string& join_token) override;
  Status Delete(const std::string& id) override;
  Result<std::vector<Machine>> List() override;

 private:
  std::string pool_;
  ProviderContext context_;
  // Called from the pool controller's thread only, which must outlive the processes
  // (process_group.h).
  std::map<std::string, std::unique_ptr<worker::ProcessGroup>> workers_;
};

}  // namespace tf::pools
