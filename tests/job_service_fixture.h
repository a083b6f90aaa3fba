// A JobService over a fresh SQLite file, with a fake clock at kJobServiceT0 and a project
// "team" to submit to: the fixture of the job service's tests that need no server.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "auth/auth_service.h"
#include "jobs/job_service.h"
#include "store_test_env.h"

namespace tf::testing {

inline constexpr TimeMs kJobServiceT0 = 1'764'460'800'000;  // 2025-11-30T00:00:00Z

class JobServiceFixture : public ::testing::Test {
 protected:
  // The service's options: override for others than the defaults.
  virtual jobs::JobServiceOptions Options() const { return {}; }

  void SetUp() override {
    auto opened = store::OpenStore((dir_.path() / "tensorfleet.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    auth_ = std::make_unique<auth::AuthService>(store_->auth(), clock_);
    auto project = auth_->CreateProject("team");
    ASSERT_TRUE(project.ok()) << project.status().ToString();
    project_ = project->id;
    jobs_ = std::make_unique<jobs::JobService>(*store_, *auth_, clock_, Options());
  }

  TempDir dir_;
  std::unique_ptr<store::Store> store_;
  FakeClock clock_{kJobServiceT0};
  std::unique_ptr<auth::AuthService> auth_;
  std::string project_;
  std::unique_ptr<jobs::JobService> jobs_;
};

}  // namespace tf::testing
