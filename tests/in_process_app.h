// A whole control plane in this test's process (api::App on a free loopback port, no signal
// handling) and the admin token its first start wrote. Tests start it with the options their
// case needs on top of InProcessAppOptions.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "api/app.h"
#include "base/status.h"

namespace tf::testing {

struct InProcessApp {
  std::unique_ptr<api::App> app;
  std::string admin_token;
};

// Options for a server on `data_dir`: port 0, signals left to the test runner, and a short
// shutdown grace so that a test's tear-down never waits long on a request in flight.
inline api::AppOptions InProcessAppOptions(const std::filesystem::path& data_dir) {
  api::AppOptions o;
  o.data_dir = data_dir;
  o.http.port = 0;
  o.handle_signals = false;
  o.shutdown_grace = std::chrono::milliseconds(2000);
  return o;
}

inline Result<InProcessApp> StartInProcessApp(const api::AppOptions& options) {
  TF_ASSIGN_OR_RETURN(auto app, api::App::Start(options));
  InProcessApp out{std::move(app), ""};
  std::ifstream f(api::AdminTokenPath(options.data_dir));
  std::getline(f, out.admin_token);
  if (out.admin_token.empty()) {
    return Internal("no admin token in " + api::AdminTokenPath(options.data_dir).string());
  }
  return out;
}

}  // namespace tf::testing
