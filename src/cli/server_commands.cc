// `tensorfleet up` and `tensorfleet server`: run the control plane in the foreground.
#include <iostream>

#include "api/app.h"
#include "base/log.h"
#include "cli/commands.h"

namespace tf::cli {
namespace {

struct ServeFlags {
  std::string listen = "127.0.0.1";
  uint16_t port = api::kDefaultPort;
  std::string store;
  std::string log_level = "info";
};

void AddServeFlags(CLI::App* cmd, ServeFlags& f) {
  cmd->add_option("--listen", f.listen, "Address to listen on (loopback unless told otherwise)")
      ->capture_default_str();
  cmd->add_option("--port", f.port, "Port to listen on; 0 picks a free one")->capture_default_str();
  cmd->add_option("--store", f.store,
                  "Where state lives: a SQLite file path or a postgresql:// URL "
                  "(default: DATA_DIR/tensorfleet.db)");
  cmd->add_option("--log-level", f.log_level, "debug, info, warn or error")->capture_default_str();
}

int Serve(const Connection& conn, const ServeFlags& f, bool embedded) {
  InitLogging(f.log_level);
  api::AppOptions o;
  o.data_dir = conn.data_dir.empty() ? DefaultDataDir() : conn.data_dir;
  o.store_url = f.store;
  o.http.address = f.listen;
  o.http.port = f.port;
  auto app = api::App::Start(o);
  if (!app.ok()) return Fail(app.status());
  std::cerr << "tensorfleet " << (embedded ? "is up" : "server is running") << " at "
            << (*app)->url() << "\n"
            << "  data directory: " << o.data_dir.string() << "\n"
            << "  admin token:    " << api::AdminTokenPath(o.data_dir).string() << "\n"
            << "  try:            tensorfleet --data-dir " << o.data_dir.string()
            << " status\n"
            << "Press Ctrl-C to stop.\n";
  (*app)->Wait();
  std::cerr << "tensorfleet stopped\n";
  return 0;
}

}  // namespace

void AddServerCommands(CLI::App& app, Connection& conn, int& exit_code) {
  static ServeFlags up_flags, server_flags;
  auto* up = app.add_subcommand(
      "up", "Run the whole platform on this machine: the server with its embedded store "
            "(SQLite in the data directory). Workers join it in a later release.");
  AddServeFlags(up, up_flags);
  up->callback([&] { exit_code = Serve(conn, up_flags, /*embedded=*/true); });

  auto* server = app.add_subcommand(
      "server", "Run the control plane (HTTP API, queues). Use --store postgresql://... to "
                "share state between several servers.");
  AddServeFlags(server, server_flags);
  server->callback([&] { exit_code = Serve(conn, server_flags, /*embedded=*/false); });
}

}  // namespace tf::cli
