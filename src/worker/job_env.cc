#include "worker/job_env.h"

#include <cctype>
#include <filesystem>

#include "jobs/job_spec.h"

extern char** environ;

namespace tf::worker {
namespace {

using nlohmann::json;

// What a job takes of the worker's own environment: nothing else, so that what the worker was
// started with (a token, cloud credentials for the object store, a stale TENSORFLEET_ or
// torchrun variable) never reaches a job.
bool IsInherited(const std::string& name) {
  static constexpr const char* kInherited[] = {"PATH", "HOME", "LANG"};
  for (const char* n : kInherited) {
    if (name == n) return true;
  }
  return false;
}

std::string ScalarText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();
}

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

}  // namespace

int ProcessesPerNode(const Assignment& a) {
  const std::string& ppn = a.spec.processes_per_node;
  if (ppn == "gpu") return std::max<int>(1, static_cast<int>(a.gpus.size()));
  try {
    return std::max(1, std::stoi(ppn));
  } catch (const std::exception&) {
    return 1;
  }
}

std::map<std::string, std::string> JobEnvironment(const Assignment& a, int local_rank,
                                                  const ProcessPaths& paths,
                                                  const std::string& server_url,
                                                  const std::map<std::string, std::string>& base) {
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : base) {
    if (IsInherited(k)) env[k] = v;
  }
  // The spec's own variables, then the contract (which they cannot override: the spec refuses
  // TENSORFLEET_ names, and torchrun's are the platform's to set).
  for (const auto& [name, value] : a.spec.env) env[name] = value;
  int nodes = static_cast<int>(std::max<size_t>(1, a.addresses.size()));
  int per_node = ProcessesPerNode(a);
  std::vector<std::string> gpus;
  for (int g : a.gpus) gpus.push_back(std::to_string(g));
  std::string master = a.addresses.empty() ? "127.0.0.1" : a.addresses[0];

  env["TENSORFLEET_JOB_ID"] = a.job_id;
  env["TENSORFLEET_JOB_NAME"] = a.job_name;
  env["TENSORFLEET_ATTEMPT"] = std::to_string(a.attempt);
  env["TENSORFLEET_NODE_RANK"] = std::to_string(a.node_rank);
  env["TENSORFLEET_NUM_NODES"] = std::to_string(nodes);
  env["TENSORFLEET_GPUS_PER_NODE"] = std::to_string(a.gpus.size());
  env["TENSORFLEET_PROCESSES_PER_NODE"] = std::to_string(per_node);
  env["TENSORFLEET_NODE_ADDRS"] = Join(a.addresses, ",");
  env["TENSORFLEET_MASTER_ADDR"] = master;
  env["TENSORFLEET_MASTER_PORT"] = std::to_string(a.master_port);
  env["TENSORFLEET_CHECKPOINT_DIR"] = paths.checkpoint_dir.string();
  env["TENSORFLEET_OUTPUT_DIR"] = paths.output_dir.string();
  env["TENSORFLEET_METRICS_FILE"] = paths.metrics_file.string();
  env["TENSORFLEET_SERVER_URL"] = server_url;
  // The worker's own binary, for processes that use the platform's tools (an endpoint's
  // replica runs its `engine serve`, and copies its model with its `cp`).
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) env["TENSORFLEET_BIN"] = self.string();
  env["TENSORFLEET_TOKEN"] = a.job_token;
  const json& hp = a.spec.hyperparameters;
  env["TENSORFLEET_HYPERPARAMETERS"] = hp.dump();
  for (auto it = hp.begin(); it != hp.end(); ++it) {
    env[jobs::HyperparameterEnvName(it.key())] = ScalarText(it.value());
  }
  // Datasets: where each one's index is; the reader takes the token from TENSORFLEET_TOKEN.
  json datasets = json::object();
  for (const std::string& name : a.spec.datasets) {
    std::string url = server_url + "/v1/datasets/" + name;
    datasets[name] = url;
    env[jobs::DatasetEnvName(name)] = url;
  }
  env["TENSORFLEET_DATASETS"] = datasets.dump();
  // An empty list hides every GPU from CUDA, which is right for a job that asked for none.
  env["CUDA_VISIBLE_DEVICES"] = Join(gpus, ",");
  // What torchrun gives each process it starts: the platform is the launcher here.
  env["MASTER_ADDR"] = master;
  env["MASTER_PORT"] = std::to_string(a.master_port);
  env["WORLD_SIZE"] = std::to_string(nodes * per_node);
  env["RANK"] = std::to_string(a.node_rank * per_node + local_rank);
  env["LOCAL_RANK"] = std::to_string(local_rank);
  env["LOCAL_WORLD_SIZE"] = std::to_string(per_node);
  env["GROUP_RANK"] = std::to_string(a.node_rank);
  env["NODE_RANK"] = std::to_string(a.node_rank);

  return env;
}

std::map<std::string, std::string> CurrentEnvironment() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string::npos && eq > 0) out[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return out;
}

}  // namespace tf::worker
