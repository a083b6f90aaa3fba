// Runs a whole control plane in-process (App on port 0, SQLite in a temp dir, a fake clock)
// and talks to it over real HTTP.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "api/app.h"
#include "http/http.h"
#include "in_process_app.h"
#include "store_test_env.h"

namespace tf::testing {

using Json = nlohmann::json;

struct ApiReply {
  int status = 0;
  Json body;
};

class ApiFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    api::AppOptions o = InProcessAppOptions(dir_.path());
    o.clock = &clock_;
    auto started = StartInProcessApp(o);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    app_ = std::move(started->app);
    admin_token_ = started->admin_token;
  }

  void TearDown() override { app_.reset(); }

  // One request with `token` ("" sends none). Fails the test if the server is unreachable.
  ApiReply Call(const std::string& method, const std::string& target, const std::string& body,
                const std::string& token) {
    auto client = http::Client::Create(app_->url());
    EXPECT_TRUE(client.ok());
    http::Headers headers;
    if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
    if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
    auto r = (*client)->Send(method, target, headers, body, std::chrono::seconds(30));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return {};
    ApiReply out{r->status, Json::parse(r->body, nullptr, false)};
    return out;
  }
  ApiReply Call(const std::string& method, const std::string& target, const Json& body = nullptr) {
    return Call(method, target, body.is_null() ? "" : body.dump(), admin_token_);
  }

  TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<api::App> app_;
  std::string admin_token_;
};

}  // namespace tf::testing
