// Which stores the store tests run against: SQLite always (a fresh file per test), PostgreSQL
// when TENSORFLEET_TEST_POSTGRES_URL names a server (scripts/with-postgres.sh sets it).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/crypto.h"
#include "store/store.h"

namespace tf::testing {

inline std::vector<std::string> StoreBackends() {
  std::vector<std::string> out = {"sqlite"};
  const char* pg = std::getenv("TENSORFLEET_TEST_POSTGRES_URL");
  if (pg != nullptr && *pg != '\0') out.push_back("postgresql");
  return out;
}

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
  if (backend == "postgresql") return std::getenv("TENSORFLEET_TEST_POSTGRES_URL");
  return (dir.path() / "tensorfleet.db").string();
}

}  // namespace tf::testing
