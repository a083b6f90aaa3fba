// The control plane in one object: store, services, routes and HTTP server, plus the background
// sweeper. `tensorfleet server` and `tensorfleet up` both run an App; tests start one on port 0.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "http/http.h"
#include "objects/object_service.h"

namespace tf::api {

inline constexpr uint16_t kDefaultPort = 8470;

struct AppOptions {
  std::filesystem::path data_dir;  // holds the SQLite file, objects/, the admin token, the URL
  std::string store_url;           // empty: SQLite in data_dir
  // Where objects' content lives: empty for data_dir/objects on local disk, or
  // "s3://BUCKET[/PREFIX]?endpoint=http://HOST:PORT[&region=R]" (s3/request_signer.h), with the
  // credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
  std::string objects_url;
  objects::ObjectServiceOptions objects;  // the largest copy on the server
  // S3's virtual-hosted addressing: a request to BUCKET.s3_domain names its bucket in its Host
  // (the default of most AWS SDKs; *.s3_domain must reach this server). Empty: path style only,
  // which is always taken.
  std::string s3_domain;
  http::ServerOptions http;  // address and port to listen on
  // Threads that serve HTTP connections, each with an io_context of its own; one more runs the
  // accept loop and the server's own timers.
  int io_threads = 2;
  int blocking_threads = 64;  // store calls wait here; long polls do not
  std::chrono::milliseconds sweep_interval{10'000};
  // The job controller (lost nodes, time limits, scheduling) runs this often, and at once
  // after a submit, a report or a node registering.
  std::chrono::milliseconds controller_interval{1'000};
  // Budgets are evaluated, and their webhook alerts delivered, this often on their own thread.
  std::chrono::milliseconds budget_interval{30'000};
  // Budgets' webhooks may go only to these hosts ("host", or "host:port"); empty: anywhere the
  // server can reach (docs/cost.md, "Budgets").
  std::vector<std::string> webhook_hosts;
  TimeMs heartbeat_timeout_ms = 10'000;          // a node silent this long is lost
  TimeMs lost_node_retention_ms = 24 * kHourMs;  // and forgotten this long after
  std::chrono::milliseconds shutdown_grace{10'000};
  // The tensorfleet binary that local pools run as workers (pools/local_provider.h); empty:
  // this process's own.
  std::filesystem::path tensorfleet_binary;
  // Pools a config file declares (cli/server_config.h): each spec's YAML, and where it was
  // written ("server.yaml:12"). Applied at start (pools::PoolService::Declare); a bad one stops
  // the start.
  std::vector<std::pair<std::string, std::string>> declared_pools;
  const Clock* clock = nullptr;  // default: the system clock
  bool handle_signals = true;    // stop gracefully on SIGINT/SIGTERM
};

class App {
 public:
  virtual ~App() = default;

  // Opens the store (migrating it), creates the admin token on first start (written to
  // data_dir/admin-token, mode 0600), starts serving, and writes data_dir/url.
  static Result<std::unique_ptr<App>> Start(const AppOptions& options);

  virtual std::string url() const = 0;  // "http://127.0.0.1:8470"
  virtual uint16_t port() const = 0;
  // Blocks until Stop() is called or a signal arrives, then shuts down gracefully.
  virtual void Wait() = 0;
  // Graceful shutdown: refuses new requests, lets in-flight ones finish (up to the grace
  // period), stops the sweeper and closes the store. Safe to call from any thread, repeatedly.
  virtual void Stop() = 0;
};

// Where the admin token and URL live inside a data directory.
std::filesystem::path AdminTokenPath(const std::filesystem::path& data_dir);
std::filesystem::path UrlPath(const std::filesystem::path& data_dir);

}  // namespace tf::api
