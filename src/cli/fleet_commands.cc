// `tensorfleet nodes [rm|undrain|join-token]`, `tensorfleet worker` and `tensorfleet worker
// drain|undrain`: the fleet.
#include <fstream>
#include <iostream>
#include <memory>

#include "base/log.h"
#include "base/stop_signals.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "cli/worker_flags.h"
#include "jobs/quantities.h"
#include "worker/worker.h"

namespace tf::cli {
namespace {

std::string DefaultWorkerDir(const client::Connection& conn) {
  return (conn.data_dir.empty() ? client::DefaultDataDir() : conn.data_dir) + "/worker";
}

struct WorkerRunFlags {
  WorkerFlags worker;
  std::string log_level = "info";
};

struct WorkerDrainFlags {
  std::string node;  // "": the worker of the data directory (or of --worker-dir)
  std::string deadline = "120s";
  std::string worker_dir;  // "": DATA_DIR/worker
  std::string reason = "drained by request";
};

std::string Gib(int64_t bytes) { return std::to_string((bytes + (1 << 29)) >> 30) + " GiB"; }

Status ListNodes(const client::Connection& conn) {
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  TF_ASSIGN_OR_RETURN(Json nodes, api.Call("GET", "/v1/nodes"));
  if (conn.json) {
    PrintJson(nodes);
    return OkStatus();
  }
  Table t({"id", "name", "state", "gpus used", "cpus", "memory", "address", "labels", "price/h",
           "heartbeat", "running"});
  for (const Json& n : nodes["nodes"]) {
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
  return OkStatus();
}

Status RunWorker(const client::Connection& conn, const WorkerRunFlags& f) {
  InitLogging(f.log_level);
  TF_ASSIGN_OR_RETURN(worker::WorkerOptions options,
                      ToWorkerOptions(f.worker, DefaultWorkerDir(conn)));
  // Finds the server and the token like every verb.
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  options.server_url = api.server();
  options.token = api.token();
  BlockStopSignals();
  TF_ASSIGN_OR_RETURN(std::unique_ptr<worker::Worker> worker, worker::Worker::Start(options));
  std::cerr << "worker " << worker->node_id() << " is serving " << options.server_url
            << " (directory " << options.data_dir.string() << "). Ctrl-C interrupts its jobs "
            << "(they resume elsewhere) and stops it.\n";
  int sig = WaitForStopSignal();
  std::cerr << "signal " << sig << ": interrupting running jobs (grace " << f.worker.grace << ")\n";
  worker->Shutdown(options.stop_grace);
  worker->Wait();
  std::cerr << "worker stopped\n";
  return OkStatus();
}

// The node named, or the worker's of `worker_dir` (DATA_DIR/worker when empty).
Result<std::string> NodeOrLocalWorker(const client::Connection& conn, const std::string& node,
                                      const std::string& worker_dir) {
  if (!node.empty()) return node;
  std::string dir = worker_dir.empty() ? DefaultWorkerDir(conn) : worker_dir;
  std::ifstream in(dir + "/node-id");
  std::string id;
  if (!(in && std::getline(in, id))) {
    return FailedPrecondition("no node given and no worker found in " + dir +
                              " (pass --node ID; `tensorfleet nodes` lists them)");
  }
  return id;
}

Status Drain(const client::Connection& conn, const WorkerDrainFlags& f) {
  auto ms = jobs::ParseDuration(f.deadline);
  if (!ms.ok()) return InvalidArgument("--deadline: " + ms.status().message());
  TF_ASSIGN_OR_RETURN(std::string node, NodeOrLocalWorker(conn, f.node, f.worker_dir));
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  TF_RETURN_IF_ERROR(api.Call("POST", "/v1/nodes/" + node + "/drain",
                              Json{{"deadline_ms", *ms}, {"reason", f.reason}})
                         .status());
  std::cout << node << " draining: its jobs get SIGTERM now and SIGKILL after " << f.deadline
            << "; each is synced and resumes on another node\n";
  return OkStatus();
}

Status Undrain(const client::Connection& conn, const std::string& node_flag,
               const std::string& worker_dir) {
  TF_ASSIGN_OR_RETURN(std::string node, NodeOrLocalWorker(conn, node_flag, worker_dir));
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  TF_ASSIGN_OR_RETURN(Json done,
                      api.Call("POST", "/v1/nodes/" + node + "/undrain", Json::object()));
  if (conn.json) {
    PrintJson(done);
  } else {
    std::cout << node << " undrained: it takes new work again\n";
  }
  return OkStatus();
}

Status RemoveNode(const client::Connection& conn, const std::string& node) {
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  TF_ASSIGN_OR_RETURN(Json done, api.Call("DELETE", "/v1/nodes/" + node));
  if (conn.json) {
    PrintJson(done);
  } else {
    std::cout << node << " removed\n";
  }
  return OkStatus();
}

}  // namespace

void AddFleetCommands(CLI::App& app, client::Connection& conn, int& exit_code) {
  auto* nodes = app.add_subcommand(
      "nodes", "List the fleet's nodes: GPUs in use, state, labels, price, what runs where");
  // Runs after `nodes rm` and `nodes undrain` too (CLI11 calls a parent after its
  // subcommand): then it does nothing.
  RunStatus(nodes, exit_code, [&conn, nodes] {
    if (!nodes->get_subcommands().empty()) return OkStatus();
    return ListNodes(conn);
  });
  auto removed = std::make_shared<std::string>();
  auto* rm = nodes->add_subcommand(
      "rm",
      "Forget a lost node (one whose heartbeats stopped); its worker registers again if it "
      "comes back");
  rm->add_option("node", *removed, "Node id (`tensorfleet nodes` lists them)")->required();
  RunStatus(rm, exit_code, [&conn, removed] { return RemoveNode(conn, *removed); });
  auto undrained = std::make_shared<std::string>();
  auto* nodes_undrain = nodes->add_subcommand(
      "undrain", "Return a draining node to service: it takes new work again");
  nodes_undrain->add_option("node", *undrained, "Node id (`tensorfleet nodes` lists them)")
      ->required();
  RunStatus(nodes_undrain, exit_code, [&conn, undrained] { return Undrain(conn, *undrained, ""); });
  AddJoinTokenCommands(*nodes, conn, exit_code);

  auto worker_flags = std::make_shared<WorkerRunFlags>();
  auto* worker = app.add_subcommand(
      "worker",
      "Run a worker: offer this machine's GPUs, CPUs and memory to the server and run "
      "the jobs it assigns. It registers with a join token (`tensorfleet nodes join-token "
      "create`; --token or $TENSORFLEET_TOKEN) or an admin token, then acts with its node's "
      "own credential, kept in its directory");
  AddWorkerFlags(worker, worker_flags->worker, /*all=*/true);
  worker->add_option("--log-level", worker_flags->log_level, "debug, info, warn or error")
      ->capture_default_str();
  // Runs after `worker drain` too (CLI11 calls a parent after its subcommand): then it does
  // nothing.
  RunStatus(worker, exit_code, [&conn, worker_flags, worker] {
    if (!worker->get_subcommands().empty()) return OkStatus();
    return RunWorker(conn, *worker_flags);
  });

  auto drain_flags = std::make_shared<WorkerDrainFlags>();
  auto* drain = worker->add_subcommand(
      "drain",
      "Interrupt every job on a node as a spot notice would: SIGTERM, the deadline, "
      "SIGKILL; checkpoints are synced and the jobs resume elsewhere. The node takes no "
      "new work until its worker registers again.");
  drain->add_option("--node", drain_flags->node,
                    "Node id (default: the worker of this data directory)");
  drain->add_option("--deadline", drain_flags->deadline, "Time between SIGTERM and SIGKILL")
      ->capture_default_str();
  drain->add_option("--worker-dir", drain_flags->worker_dir,
                    "The worker's directory, to find its node id");
  drain->add_option("--reason", drain_flags->reason, "Why, for the jobs' events")
      ->capture_default_str();
  RunStatus(drain, exit_code, [&conn, drain_flags] { return Drain(conn, *drain_flags); });

  auto undrain_flags = std::make_shared<WorkerDrainFlags>();
  auto* undrain = worker->add_subcommand(
      "undrain", "Return a drained node to service: it takes new work again");
  undrain->add_option("--node", undrain_flags->node,
                      "Node id (default: the worker of this data directory)");
  undrain->add_option("--worker-dir", undrain_flags->worker_dir,
                      "The worker's directory, to find its node id");
  RunStatus(undrain, exit_code, [&conn, undrain_flags] {
    return Undrain(conn, undrain_flags->node, undrain_flags->worker_dir);
  });
}

}  // namespace tf::cli
