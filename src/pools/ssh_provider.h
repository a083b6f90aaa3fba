// The ssh provider: hosts the operator owns or rents, one machine of the pool per host. Over
// OpenSSH's `ssh` (BatchMode: keys only, never a prompt), each machine is a `tensorfleet worker`
// started on its host in a session of its own under <remote_dir>/pools/<pool>/<machine>/ (its
// pid, log and worker directory there), with the machine's join token in its environment, never
// on a command line. This server's binary is copied to <remote_dir>/bin/tensorfleet first when
// the host's differs (by SHA-256), unless `install: false` (then `tensorfleet` from the host's
// PATH). Deleting a machine stops its worker (SIGTERM, 30 s, SIGKILL) and removes its
// directory. Hosts are asked in the spec's order; one that cannot be reached is skipped. Each
// host is logged in to for a list at most every kListIntervalMs (the controller asks every
// second), and at once after a create or a delete.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pools/machine_provider.h"
#include "pools/script_call.h"

namespace tf::pools {

class SshProvider : public MachineProvider {
 public:
  // `context.dir` is the pool's own directory (its known_hosts file by default).
  SshProvider(PoolSpec spec, ProviderContext context, ScriptRunner run = RunScript);

  Status Create(const PoolSpec& spec, const std::string& id,
                const std::string& join_token) override;
  Status Delete(const std::string& id) override;
  Result<std::vector<Machine>> List() override;

  static constexpr TimeMs kListIntervalMs = 10 * kSecondMs;

 private:
  // `ssh ... HOST COMMAND` with `input` on its stdin, tried as the spec says.
  Result<std::string> Ssh(const std::string& host, const std::string& command,
                          const std::string& input, const std::string& what);
  // Runs a POSIX shell script on `host` (`sh -s`), after a prelude that makes the pool's
  // directory and sets $base (remote_dir, absolute) and $pool (the pool's directory).
  Result<std::string> Script(const std::string& host, const std::string& body,
                             const std::string& what);
  // Copies this server's binary to the host unless it has the same one already.
  Status Install(const std::string& host);
  Status StartOn(const std::string& host, const PoolSpec& spec, const std::string& id,
                 const std::string& join_token);

  PoolSpec spec_;
  ProviderContext context_;
  ScriptRunner run_;
  std::map<std::string, std::string> env_;
  std::map<std::string, std::string> host_of_;  // machine -> its host, from List and Create
  std::map<std::string, bool> installed_;       // hosts that have this binary
  std::string binary_sha_;                      // SHA-256 of context_.binary, once read
  std::optional<std::vector<Machine>> listed_;  // the last list, until kListIntervalMs
  TimeMs listed_at_ = 0;
};

}  // namespace tf::pools
