// Which stores the store tests run against: SQLite (a fresh file per test) and PostgreSQL, the
// server TENSORFLEET_TEST_POSTGRES_URL names (scripts/with-postgres.sh sets it). Every test is
// instantiated for both; a PostgreSQL case with no server named skips itself with the reason
// (TF_SKIP_UNLESS_STORE_REACHABLE), so that a run without one shows what it left out.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/crypto.h"
#include "store/store.h"

namespace tf::testing {

inline std::vector<std::string> StoreBackends() { return {"sqlite", "postgresql"}; }

// The PostgreSQL server this run's tests may use (TENSORFLEET_TEST_POSTGRES_URL); "" when none
// is named.
inline std::string TestPostgresUrl() {
  const char* pg = std::getenv("TENSORFLEET_TEST_POSTGRES_URL");
  return pg == nullptr ? "" : pg;
}

// Whether this run can open `backend`: SQLite always, PostgreSQL when a server is named.
inline bool StoreReachable(const std::string& backend) {
  return backend != "postgresql" || !TestPostgresUrl().empty();
}

// Skips the calling test, from its SetUp or its body, when `backend` cannot be opened here.
#define TF_SKIP_UNLESS_STORE_REACHABLE(backend)                                     \
  if (!::tf::testing::StoreReachable(backend))                                      \
  GTEST_SKIP() << "no PostgreSQL server: TENSORFLEET_TEST_POSTGRES_URL is not set " \
                  "(scripts/with-postgres.sh starts one and sets it)"

// A temporary directory removed when this object dies.
class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() / ("tensorfleet-test-" + RandomHex(6));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The URL OpenStore takes for `backend`; `dir` holds the SQLite file.
inline std::string StoreUrl(const std::string& backend, const TempDir& dir) {
  if (backend == "postgresql") return TestPostgresUrl();
  return (dir.path() / "tensorfleet.db").string();
}

}  // namespace tf::testing
