// The command provider: the operator's own create, delete and list scripts start and stop the
// pool's machines, so that any cloud's CLI can be wrapped (examples/pools/ec2/). The contract
// (docs/pools.md, "The command provider"): each script gets one JSON document on stdin and is
// run with the server's environment and the spec's `env:`, in the pool's directory;
//
//   create  {"action": "create", "pool", "machine", "shape", "server_url", "join_token",
//            "worker_args"}: start machine `machine`, whose worker runs
//            `tensorfleet <worker_args>` with TENSORFLEET_TOKEN=<join_token>. Exit 0 once it
//            is asked for. Idempotent: a machine that exists already is left as it is.
//   delete  {"action": "delete", "pool", "machine"}: stop it and forget it. Exit 0 when it is
//            gone, or never existed.
//   list    {"action": "list", "pool"}: print {"machines": [{"id", "running", "detail"}]}, the
//            pool's machines that exist, `running` false for one that stopped by itself.
//
// A call that fails (an exit code other than 0, or no answer within `timeout`, when its process
// group is killed) is tried again, with the same input, up to `retries` more times.
#pragma once

#include <functional>
#include <string>

#include "pools/machine_provider.h"
#include "pools/script_call.h"

namespace tf::pools {

class CommandProvider : public MachineProvider {
 public:
  // `context.dir` is the pool's own directory; `run` runs a script (RunScript).
  CommandProvider(PoolSpec spec, ProviderContext context, ScriptRunner run = RunScript);

  Status Create(const PoolSpec& spec, const std::string& id,
                const std::string& join_token) override;
  Status Delete(const std::string& id) override;
  Result<std::vector<Machine>> List() override;

 private:
  // Runs `script` with `input` until it succeeds or its tries are spent; returns its stdout.
  Result<std::string> Call(const std::vector<std::string>& script, const nlohmann::json& input,
                           const std::string& what);

  PoolSpec spec_;
  ProviderContext context_;
  ScriptRunner run_;
  std::map<std::string, std::string> env_;  // the server's environment, then the spec's env
};

}  // namespace tf::pools
