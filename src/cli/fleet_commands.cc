// `tensorfleet nodes`, `tensorfleet worker` and `tensorfleet worker drain`: the fleet.
#include <fstream>
#include <iostream>

#include "base/log.h"
#include "base/stop_signals.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "cli/worker_flags.h"
#include "jobs/quantities.h"
#include "worker/worker.h"

namespace tf::cli {
namespace {

std::string DefaultWorkerDir(const Connection& conn) {
  return (conn.data_dir.empty() ? DefaultDataDir() : conn.data_dir) + "/worker";
}

std::string Gib(int64_t bytes) { return std::to_string((bytes + (1 << 29)) >> 30) + " GiB"; }

int ListNodes(const Connection& conn) {
  auto api = ApiClient::Connect(conn);
  if (!api.ok()) return Fail(api.status());
  auto nodes = api->Call("GET", "/v1/nodes");
  if (!nodes.ok()) return Fail(nodes.status());
  if (conn.json) {
    PrintJson(*nodes);
    return 0;
  }
  Table t({"id", "name", "state", "gpus used", "cpus", "memory", "address", "labels", "price/h",
           "heartbeat", "running"});
  for (const Json& n : (*nodes)["nodes"]) {
    std::string labels;
    for (auto it = n["labels"].begin(); it != n["labels"].end(); ++it) {
      labels += (labels.empty() ? "" : ",") + it.key() + "=" + it.value().get<std::string>();
    }
    if (n.value("spot", false)) labels += std::string(labels.empty() ? "" : ",") + "spot";
    std::string gpus = std::to_string(n.value("gpus_in_use", 0)) + "/" +
                       std::to_string(n["gpus"].size()) +
                       (n.value("simulated_gpus", false) ? " (simulated)" : "");
    std::string running;
    for (const Json& r : n["running"])
      running += (running.empty() ? "" : " ") + r.get<std::string>();
    t.Add({n.value("id", ""), n.value("name", ""), n.value("state", ""), gpus,
           std::to_string(n.value("cpus", 0)), Gib(n.value("memory_bytes", int64_t{0})),
           n.value("address", ""), labels.empty() ? "-" : labels,
           std::to_string(n.value("price_per_hour", 0.0)).substr(0, 5), n.value("heartbeat_at", ""),
           running.empty() ? "-" : running});
  }
  t.Print(std::cout);
  return 0;
}

int RunWorker(const Connection& conn, const WorkerFlags& flags, const std::string& log_level) {
  InitLogging(log_level);
  auto options = ToWorkerOptions(flags, DefaultWorkerDir(conn));
  if (!options.ok()) return Fail(options.status());
  auto api = ApiClient::Connect(conn);  // finds the server and the token like every verb
  if (!api.ok()) return Fail(api.status());
  options->server_url = api->server();
  options->token = api->token();
  BlockStopSignals();
  auto worker = worker::Worker::Start(*options);
  if (!worker.ok()) return Fail(worker.status());
  std::cerr << "worker " << (*worker)->node_id() << " is serving " << options->server_url
            << " (directory " << options->data_dir.string() << "). Ctrl-C interrupts its jobs "
            << "(they resume elsewhere) and stops it.\n";
  int sig = WaitForStopSignal();
  std::cerr << "signal " << sig << ": interrupting running jobs (grace " << flags.grace << ")\n";
  (*worker)->Shutdown(options->stop_grace);
  (*worker)->Wait();
  std::cerr << "worker stopped\n";
  return 0;
}

int Drain(const Connection& conn, std::string node, const std::string& deadline,
          const std::string& worker_dir, const std::string& reason) {
  auto ms = jobs::ParseDuration(deadline);
  if (!ms.ok()) return Fail(InvalidArgument("--deadline: " + ms.status().message()));
  if (node.empty()) {
    std::string dir = worker_dir.empty() ? DefaultWorkerDir(conn) : worker_dir;
    std::ifstream in(dir + "/node-id");
    if (!(in && std::getline(in, node))) {
      return Fail(FailedPrecondition("no node given and no worker found in " + dir +
                                     " (pass --node ID; `tensorfleet nodes` lists them)"));
    }
  }
  auto api = ApiClient::Connect(conn);
  if (!api.ok()) return Fail(api.status());
  auto done = api->Call("POST", "/v1/nodes/" + node + "/drain",
                        Json{{"deadline_ms", *ms}, {"reason", reason}});
  if (!done.ok()) return Fail(done.status());
  std::cout << node << " draining: its jobs get SIGTERM now and SIGKILL after " << deadline
            << "; each is synced and resumes on another node\n";
  return 0;
}

}  // namespace

void AddFleetCommands(CLI::App& app, Connection& conn, int& exit_code) {
  auto* nodes = app.add_subcommand(
      "nodes", "List the fleet's nodes: GPUs in use, state, labels, price, what runs where");
  nodes->callback([&] { exit_code = ListNodes(conn); });

  static WorkerFlags flags;
  static std::string log_level = "info";
  auto* worker = app.add_subcommand(
      "worker",
      "Run a worker: offer this machine's GPUs, CPUs and memory to the server and run "
      "the jobs it assigns");
  AddWorkerFlags(worker, flags, /*all=*/true);
  worker->add_option("--log-level", log_level, "debug, info, warn or error")->capture_default_str();
  worker->callback([&, worker] {
    if (worker->get_subcommands().empty()) exit_code = RunWorker(conn, flags, log_level);
  });

  static std::string node, deadline = "120s", worker_dir, reason = "drained by request";
  auto* drain = worker->add_subcommand(
      "drain",
      "Interrupt every job on a node as a spot notice would: SIGTERM, the deadline, "
      "SIGKILL; checkpoints are synced and the jobs resume elsewhere. The node takes no "
      "new work until its worker registers again.");
  drain->add_option("--node", node, "Node id (default: the worker of this data directory)");
  drain->add_option("--deadline", deadline, "Time between SIGTERM and SIGKILL")
      ->capture_default_str();
  drain->add_option("--worker-dir", worker_dir, "The worker's directory, to find its node id");
  drain->add_option("--reason", reason, "Why, for the jobs' events")->capture_default_str();
  drain->callback([&] { exit_code = Drain(conn, node, deadline, worker_dir, reason); });
}

}  // namespace tf::cli
