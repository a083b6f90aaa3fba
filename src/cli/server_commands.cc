// `tensorfleet up` and `tensorfleet server`: run the control plane in the foreground.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "api/app.h"
#include "base/log.h"
#include "base/stop_signals.h"
#include "cli/commands.h"
#include "cli/server_config.h"
#include "cli/worker_flags.h"
#include "jobs/quantities.h"
#include "objects/multipart.h"
#include "worker/worker.h"

namespace tf::cli {
namespace {

struct ServeFlags {
  std::string config;  // a YAML file of these settings and the pools to declare
  std::string listen = "127.0.0.1";
  uint16_t port = api::kDefaultPort;
  std::string store;
  std::string objects;
  std::string s3_domain;
  std::string log_level = "info";
  std::string heartbeat_timeout = "10s";
  std::string lost_node_retention = "24h";
  std::string max_copy_size = jobs::FormatMemory(objects::ObjectServiceOptions{}.max_copy_bytes);
  std::string webhook_hosts;  // comma-separated
};

struct UpFlags {
  ServeFlags serve;
  WorkerFlags worker;
  bool no_worker = false;  // the server only
};

void AddServeFlags(CLI::App* cmd, ServeFlags& f) {
  cmd->add_option("--config", f.config,
                  "A YAML file of these settings (snake_case: port, store, heartbeat_timeout, "
                  "...) and `pools:`, node pools to create or update at start (docs/pools.md); "
                  "flags given here win over it");
  cmd->add_option("--listen", f.listen, "Address to listen on (loopback unless told otherwise)")
      ->capture_default_str();
  cmd->add_option("--port", f.port, "Port to listen on; 0 picks a free one")->capture_default_str();
  cmd->add_option("--store", f.store,
                  "Where state lives: a SQLite file path or a postgresql:// URL "
                  "(default: DATA_DIR/tensorfleet.db)");
  cmd->add_option("--objects", f.objects,
                  "Where object content lives: DATA_DIR/objects on local disk by default, or an "
                  "S3-compatible bucket shared by several servers: "
                  "s3://BUCKET[/PREFIX]?endpoint=http://HOST:PORT[&region=R], with the "
                  "credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
  cmd->add_option("--s3-domain", f.s3_domain,
                  "Also take S3 requests addressed virtual-hosted style, to "
                  "http://BUCKET.DOMAIN/KEY (the default of most AWS SDKs; point *.DOMAIN at "
                  "this server). Path style, http://HOST/BUCKET/KEY, always works");
  cmd->add_option("--log-level", f.log_level, "debug, info, warn or error")->capture_default_str();
  cmd->add_option("--heartbeat-timeout", f.heartbeat_timeout,
                  "A node silent this long is lost, and its jobs resume elsewhere")
      ->capture_default_str();
  cmd->add_option("--lost-node-retention", f.lost_node_retention,
                  "A lost node is forgotten this long after its last heartbeat (`tensorfleet "
                  "nodes rm` forgets one at once); its worker registers again if it comes back")
      ->capture_default_str();
  cmd->add_option("--max-copy-size", f.max_copy_size,
                  "The most one request copies on the server (S3's CopyObject and UploadPartCopy, "
                  "`cp tf://A tf://B`), 5Mi or more. S3 clients copy larger objects in parts, "
                  "on their own above their thresholds (8Mi for boto3 and the AWS CLI, 4.6Gi "
                  "for rclone). A copy must end inside the 60 s request timeout: raise it only on "
                  "fast disks")
      ->capture_default_str();
  cmd->add_option("--webhook-hosts", f.webhook_hosts,
                  "Send budgets' webhooks only to these hosts, comma-separated (\"hooks.internal\" "
                  "for any port of it, \"10.0.0.5:8080\" for one); a budget naming another is "
                  "refused. Default: any host this server reaches (docs/cost.md)");
}

// The config file's settings, for the flags not given on the command line of `cmd`.
Status ApplyConfig(const CLI::App& cmd, const ServerConfig& config, ServeFlags& f) {
  std::map<std::string, std::string*> fields = {{"listen", &f.listen},
                                                {"store", &f.store},
                                                {"objects", &f.objects},
                                                {"s3_domain", &f.s3_domain},
                                                {"log_level", &f.log_level},
                                                {"heartbeat_timeout", &f.heartbeat_timeout},
                                                {"lost_node_retention", &f.lost_node_retention},
                                                {"max_copy_size", &f.max_copy_size},
                                                {"webhook_hosts", &f.webhook_hosts}};
  for (const auto& [key, value] : config.settings) {
    std::string flag = "--" + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (cmd.count(flag) > 0) continue;
    if (key == "port") {
      char* end = nullptr;
      long port = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || port < 0 || port > 65535) {
        return InvalidArgument(f.config + ": port: must be 0 to 65535, got \"" + value + "\"");
      }
      f.port = static_cast<uint16_t>(port);
    } else {
      *fields.at(key) = value;
    }
  }
  return OkStatus();
}

Status Serve(const client::Connection& conn, const CLI::App& cmd, ServeFlags f,
             const WorkerFlags* worker_flags) {
  ServerConfig config;
  if (!f.config.empty()) {
    TF_ASSIGN_OR_RETURN(config, ReadServerConfig(f.config));
    TF_RETURN_IF_ERROR(ApplyConfig(cmd, config, f));
  }
  InitLogging(f.log_level);
  api::AppOptions o;
  o.data_dir = conn.data_dir.empty() ? client::DefaultDataDir() : conn.data_dir;
  o.store_url = f.store;
  o.objects_url = f.objects;
  o.s3_domain = f.s3_domain;
  o.http.address = f.listen;
  o.http.port = f.port;
  auto timeout = jobs::ParseDuration(f.heartbeat_timeout);
  if (!timeout.ok() || *timeout < 1000) {
    return InvalidArgument("--heartbeat-timeout: expected a duration of at least 1s, got \"" +
                           f.heartbeat_timeout + "\"");
  }
  o.heartbeat_timeout_ms = *timeout;
  auto retention = jobs::ParseDuration(f.lost_node_retention);
  if (!retention.ok() || *retention < *timeout) {
    return InvalidArgument(
        "--lost-node-retention: expected a duration no shorter than the heartbeat timeout "
        "(\"24h\", \"30m\"), got \"" +
        f.lost_node_retention + "\"");
  }
  o.lost_node_retention_ms = *retention;
  std::stringstream hosts(f.webhook_hosts);
  for (std::string host; std::getline(hosts, host, ',');) {
    host.erase(0, host.find_first_not_of(' '));
    host.erase(host.find_last_not_of(' ') + 1);
    if (host.empty()) continue;
    if (host.find('/') != std::string::npos || host.find('@') != std::string::npos) {
      return InvalidArgument(
          "--webhook-hosts: expected hosts (\"hooks.internal\", "
          "\"10.0.0.5:8080\"), not URLs, got \"" +
          host + "\"");
    }
    o.webhook_hosts.push_back(host);
  }
  auto max_copy = jobs::ParseMemory(f.max_copy_size);
  // Below the least size of a part, an object over the limit could not be copied in parts either.
  if (!max_copy.ok() || *max_copy < static_cast<int64_t>(objects::kMinPartBytes)) {
    return InvalidArgument(
        "--max-copy-size: expected a size of at least 5Mi (\"5Gi\", \"512Mi\"), got \"" +
        f.max_copy_size + "\"");
  }
  o.objects.max_copy_bytes = static_cast<uint64_t>(*max_copy);
  o.declared_pools = std::move(config.pools);
  std::optional<worker::WorkerOptions> worker_options;
  if (worker_flags != nullptr) {
    TF_ASSIGN_OR_RETURN(worker_options,
                        ToWorkerOptions(*worker_flags, (o.data_dir / "worker").string()));
  }
  // Signals are taken here, so that the embedded worker interrupts its jobs before the server
  // stops.
  o.handle_signals = false;
  BlockStopSignals();
  auto app = api::App::Start(o);
  if (!app.ok()) return app.status();
  std::unique_ptr<worker::Worker> worker;
  if (worker_options) {
    worker_options->server_url = (*app)->url();
    std::ifstream token_file(api::AdminTokenPath(o.data_dir));
    std::getline(token_file, worker_options->token);
    auto started = worker::Worker::Start(*worker_options);
    if (!started.ok()) {
      (*app)->Stop();
      (*app)->Wait();
      return started.status().WithContext("starting the embedded worker");
    }
    worker = std::move(started).value();
  }
  std::cerr << "tensorfleet " << (worker ? "is up" : "server is running") << " at " << (*app)->url()
            << "\n"
            << "  data directory: " << o.data_dir.string() << "\n"
            << "  admin token:    " << api::AdminTokenPath(o.data_dir).string() << "\n";
  if (worker) std::cerr << "  worker:         " << worker->node_id() << " (this machine)\n";
  std::cerr << "  try:            tensorfleet --data-dir " << o.data_dir.string() << " status\n"
            << "Press Ctrl-C to stop.\n";
  int sig = WaitForStopSignal();
  spdlog::info("signal {} received: shutting down gracefully", sig);
  if (worker) {
    worker->Shutdown(worker_options->stop_grace);
    worker->Wait();
  }
  (*app)->Stop();
  (*app)->Wait();
  std::cerr << "tensorfleet stopped\n";
  return OkStatus();
}

}  // namespace

void AddServerCommands(CLI::App& app, client::Connection& conn, int& exit_code) {
  auto up_flags = std::make_shared<UpFlags>();
  auto* up = app.add_subcommand(
      "up",
      "Run the whole platform on this machine: the server with its embedded store "
      "(SQLite in the data directory) and a worker that offers this machine's GPUs, CPUs "
      "and memory to jobs. More workers join with `tensorfleet worker`.");
  AddServeFlags(up, up_flags->serve);
  AddWorkerFlags(up, up_flags->worker, /*all=*/false);
  up->add_flag("--no-worker", up_flags->no_worker, "Run the server only");
  RunStatus(up, exit_code, [&conn, up_flags, up] {
    return Serve(conn, *up, up_flags->serve, up_flags->no_worker ? nullptr : &up_flags->worker);
  });

  auto server_flags = std::make_shared<ServeFlags>();
  auto* server = app.add_subcommand(
      "server",
      "Run the control plane (HTTP API, queues). Use --store postgresql://... to "
      "share state between several servers.");
  AddServeFlags(server, *server_flags);
  RunStatus(server, exit_code,
            [&conn, server_flags, server] { return Serve(conn, *server, *server_flags, nullptr); });
}

}  // namespace tf::cli
