#include "pools/ssh_provider.h"

#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "base/crypto.h"
#include "base/log.h"
#include "base/sha256_stream.h"
#include "base/shell_quote.h"

namespace tf::pools {
namespace {

// A stopping worker interrupts what it runs (its jobs resume elsewhere); then it is killed.
constexpr int kStopGraceTenths = 300;

// "user@host:port" -> {"user@host", "port"} ("" when none is given).
std::pair<std::string, std::string> SplitPort(const std::string& host) {
  size_t colon = host.rfind(':');
  if (colon == std::string::npos) return {host, ""};
  return {host.substr(0, colon), host.substr(colon + 1)};
}

std::string Joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + ShellQuote(w);
  return out;
}

}  // namespace

SshProvider::SshProvider(PoolSpec spec, ProviderContext context, ScriptRunner run)
    : spec_(std::move(spec)),
      context_(std::move(context)),
      run_(std::move(run)),
      env_(ServerEnvironment()) {}

Result<std::string> SshProvider::Ssh(const std::string& host, const std::string& command,
                                     const std::string& input, const std::string& what) {
  std::error_code ec;
  std::filesystem::create_directories(context_.dir, ec);
  if (ec) return Unavailable("creating " + context_.dir.string() + ": " + ec.message());
  const SshHosts& s = spec_.provider.ssh;
  std::string known_hosts =
      s.known_hosts.empty() ? (context_.dir / "known_hosts").string() : s.known_hosts;
  auto [target, port] = SplitPort(host);
  std::vector<std::string> argv = {
      "ssh",
      "-o",
      "BatchMode=yes",
      "-o",
      "ConnectTimeout=10",
      "-o",
      "ServerAliveInterval=15",
      "-o",
      "StrictHostKeyChecking=" + std::string(s.known_hosts.empty() ? "accept-new" : "yes"),
      "-o",
      "UserKnownHostsFile=" + known_hosts};
  if (!s.key.empty()) argv.insert(argv.end(), {"-i", s.key, "-o", "IdentitiesOnly=yes"});
  if (!port.empty()) argv.insert(argv.end(), {"-p", port});
  argv.insert(argv.end(), {"--", target, command});
  ScriptCall call{argv, env_, context_.dir, input, spec_.provider.timeout_ms};
  return RunWithRetries(run_, call, spec_.provider.retries, what + " on " + host, spec_.name);
}

Result<std::string> SshProvider::Script(const std::string& host, const std::string& body,
                                        const std::string& what) {
  std::string prelude =
      "set -eu\numask 077\nmkdir -p " + ShellQuote(spec_.provider.ssh.remote_dir) + "\nbase=$(cd " +
      ShellQuote(spec_.provider.ssh.remote_dir) + " && pwd)\npool=\"$base/pools/\"" +
      ShellQuote(spec_.name) + "\nmkdir -p \"$pool\"\n";
  return Ssh(host, "sh -s", prelude + body, what);
}

Status SshProvider::Install(const std::string& host) {
  if (installed_[host]) return OkStatus();
  if (binary_sha_.empty()) {  // hashed once: the binary is not rewritten under a running server
    auto sha = Sha256OfFile(context_.binary);
    if (!sha.ok()) {
      return Unavailable("cannot read this server's binary " + context_.binary.string() +
                         " to install it: " + sha.status().message());
    }
    binary_sha_ = *sha;
  }
  const std::string& sha = binary_sha_;
  TF_ASSIGN_OR_RETURN(std::string has,
                      Script(host,
                             "sha256sum \"$base/bin/tensorfleet\" 2>/dev/null | cut -d' ' -f1 "
                             "|| true\n",
                             "looking for tensorfleet"));
  if (has.substr(0, sha.size()) != sha) {
    std::ifstream in(context_.binary, std::ios::binary);
    std::string binary((std::istreambuf_iterator<char>(in)), {});
    if (!in || binary.empty()) {
      return Unavailable("cannot read this server's binary " + context_.binary.string() +
                         " to install it");
    }
    std::string dir = ShellQuote(spec_.provider.ssh.remote_dir) + "/bin";
    TF_RETURN_IF_ERROR(Ssh(host,
                           "set -e; umask 077; mkdir -p " + dir + " && cat > " + dir +
                               "/tensorfleet.part && chmod 700 " + dir +
                               "/tensorfleet.part && mv " + dir + "/tensorfleet.part " + dir +
                               "/tensorfleet",
                           binary, "installing tensorfleet")
                           .status());
    spdlog::info("pool {}: installed tensorfleet ({} MiB) on {}", spec_.name, binary.size() >> 20,
                 host);
  }
  installed_[host] = true;
  return OkStatus();
}

Status SshProvider::StartOn(const std::string& host, const PoolSpec& spec, const std::string& id,
                            const std::string& join_token) {
  if (spec.provider.ssh.install) TF_RETURN_IF_ERROR(Install(host));
  std::string server_url = WorkerServerUrl(spec, context_);
  std::string binary = spec.provider.ssh.install ? "\"$base/bin/tensorfleet\"" : "tensorfleet";
  std::string body =
      "m=\"$pool/\"" + ShellQuote(id) +
      "\nmkdir -p \"$m\"\n"
      "pid=$(cat \"$m/pid\" 2>/dev/null || true)\n"
      "if [ -n \"$pid\" ] && kill -0 \"$pid\" 2>/dev/null; then echo \"running $pid\"; exit 0; fi\n"
      "cd \"$m\"\n"
      // The token in the worker's environment only: this script is read from stdin, and no
      // command line holds it.
      "TENSORFLEET_TOKEN=" +
      ShellQuote(join_token) + " setsid nohup " + binary + " " +
      Joined(WorkerArguments(spec, server_url, id, "")) +
      " --worker-dir \"$m/worker\" > \"$m/worker.log\" 2>&1 < /dev/null &\n"
      "echo $! > \"$m/pid\"\n"
      "echo \"started $!\"\n";
  return Script(host, body, "starting " + id).status();
}

Status SshProvider::Create(const PoolSpec& spec, const std::string& id,
                           const std::string& join_token) {
  listed_.reset();  // the next List asks the hosts again
  if (host_of_.count(id)) {
    return StartOn(host_of_[id], spec, id, join_token);  // asked again: idempotent there
  }
  std::set<std::string> taken;
  for (const auto& [machine, host] : host_of_) taken.insert(host);
  std::string failures;
  for (const std::string& host : spec.provider.ssh.hosts) {
    if (taken.count(host)) continue;
    Status started = StartOn(host, spec, id, join_token);
    if (started.ok()) {
      host_of_[id] = host;
      return OkStatus();
    }
    failures += (failures.empty() ? "" : "; ") + started.message();
  }
  if (failures.empty()) {
    return ResourceExhausted("every host of pool " + spec.name + " runs one of its machines");
  }
  return Unavailable(failures);
}

Status SshProvider::Delete(const std::string& id) {
  listed_.reset();
  std::string body = "m=\"$pool/\"" + ShellQuote(id) +
                     "\n[ -d \"$m\" ] || exit 0\n"
                     "pid=$(cat \"$m/pid\" 2>/dev/null || true)\n"
                     "if [ -n \"$pid\" ] && kill -0 \"$pid\" 2>/dev/null; then\n"
                     "  kill -TERM \"$pid\"; i=0\n"
                     "  while kill -0 \"$pid\" 2>/dev/null && [ $i -lt " +
                     std::to_string(kStopGraceTenths) +
                     " ]; do sleep 0.1; i=$((i+1)); done\n"
                     "  kill -KILL \"$pid\" 2>/dev/null || true\n"
                     "fi\n"
                     "rm -rf \"$m\"\n";
  // On its host, or, if that is not known (a new leader that could not list it), on each.
  std::vector<std::string> hosts = spec_.provider.ssh.hosts;
  if (host_of_.count(id)) hosts = {host_of_[id]};
  Status last = OkStatus();
  for (const std::string& host : hosts) {
    Status deleted = Script(host, body, "stopping " + id).status();
    if (deleted.ok() && host_of_.count(id)) break;
    if (!deleted.ok()) last = deleted;
  }
  if (last.ok()) host_of_.erase(id);
  return last;
}

Result<std::vector<Machine>> SshProvider::List() {
  const TimeMs now = context_.clock->Now();
  if (listed_ && now - listed_at_ < kListIntervalMs) return *listed_;
  std::vector<Machine> out;
  std::map<std::string, std::string> seen;
  for (const std::string& host : spec_.provider.ssh.hosts) {
    auto listed = Script(host,
                         "for m in \"$pool\"/*; do\n"
                         "  [ -d \"$m\" ] || continue\n"
                         "  pid=$(cat \"$m/pid\" 2>/dev/null || true)\n"
                         "  if [ -n \"$pid\" ] && kill -0 \"$pid\" 2>/dev/null; then\n"
                         "    echo \"${m##*/} running $pid\"\n"
                         "  else echo \"${m##*/} stopped $pid\"; fi\n"
                         "done\n",
                         "listing machines");
    if (!listed.ok()) {
      // Unreachable now: what it ran is assumed to run still (it is neither started again
      // nor forgotten); its node's heartbeats say whether it is alive.
      spdlog::warn("pool {}: {}", spec_.name, listed.status().message());
      for (const auto& [machine, h] : host_of_) {
        if (h != host) continue;
        seen[machine] = host;
        out.push_back({machine, true, "on " + host + " (not reachable now)"});
      }
      continue;
    }
    std::istringstream lines(*listed);
    std::string id, state, pid;
    while (lines >> id >> state) {
      std::getline(lines, pid);
      seen[id] = host;
      bool running = state == "running";
      out.push_back(
          {id, running, "on " + host + (running ? ", pid" + pid : ", its worker exited")});
    }
  }
  host_of_ = std::move(seen);
  listed_ = out;
  listed_at_ = now;
  return out;
}

}  // namespace tf::pools
