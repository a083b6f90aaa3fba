// What starts and stops a pool's machines. The pool controller names each machine it asks for
// ("gpu-a10-3f9c1a"); the machine's worker registers with that name, labelled pool=<pool>.
// Calls may block (a cloud's API, a script): the controller makes them on its own thread.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "pools/pool_spec.h"

namespace tf::pools {

struct Machine {
  std::string id;
  bool running = true;  // false: it stopped by itself (exited, terminated) and may be forgotten
  std::string detail;   // how it stopped ("exit code 1"), or the provider's words
};

class MachineProvider {
 public:
  virtual ~MachineProvider() = default;
  // Starts machine `id` of the pool's shape as `spec` has it now, its worker to register with
  // `join_token` (one use, made for this machine: auth/). Asking again for one that exists
  // changes nothing.
  virtual Status Create(const PoolSpec& spec, const std::string& id,
                        const std::string& join_token) = 0;
  // Stops and forgets machine `id`; one that does not exist is OK.
  virtual Status Delete(const std::string& id) = 0;
  // The pool's machines that exist (running or stopped but not yet deleted).
  virtual Result<std::vector<Machine>> List() = 0;
};

// What every provider's workers need to join this server.
struct ProviderContext {
  std::string server_url;
  std::filesystem::path binary;  // tensorfleet, for the local provider
  std::filesystem::path dir;     // data_dir/pools
  const Clock* clock = &SystemClock::Get();
};

// The URL a pool's workers reach this server at: the spec's `server_url`, else the server's.
std::string WorkerServerUrl(const PoolSpec& spec, const ProviderContext& context);

// `context.dir` is the directory of all pools; each pool's machines live in <dir>/<pool>.
std::unique_ptr<MachineProvider> NewMachineProvider(const PoolSpec& spec,
                                                    const ProviderContext& context);

// The `tensorfleet worker` arguments that make a machine of `spec` join as node `id` (after
// the binary: the server's URL, then the worker and its flags); `address` is where the other
// nodes of a gang reach it ("": the worker finds out).
std::vector<std::string> WorkerArguments(const PoolSpec& spec, const std::string& server_url,
                                         const std::string& id, const std::string& address);

}  // namespace tf::pools
