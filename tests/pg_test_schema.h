// A PostgreSQL schema of a test's own, so that what other tests left in the database (jobs,
// nodes, the schema's leader lock) plays no part. Needs TENSORFLEET_TEST_POSTGRES_URL
// (scripts/with-postgres.sh sets it).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "base/crypto.h"
#include "store/pg_connection.h"

namespace tf::testing {

// Creates the schema "<prefix><random>" in the database at `base_url` and drops it (with all
// in it) at the end. url() names the database with this schema first in the search_path, so
// stores opened with it keep their tables there.
class PgTestSchema {
 public:
  PgTestSchema(const std::string& base_url, const std::string& prefix)
      : name_(prefix + RandomHex(6)), url_(base_url) {
    auto conn = store::PgConnection::Connect(base_url);
    if (!conn.ok()) {
      ADD_FAILURE() << conn.status().ToString();
      return;
    }
    admin_ = std::move(conn).value();
    Status created = admin_->Run("CREATE SCHEMA " + name_);
    EXPECT_TRUE(created.ok()) << created.ToString();
    url_ = base_url + (base_url.find('?') == std::string::npos ? "?" : "&") +
           "options=-csearch_path%3D" + name_;
  }
  PgTestSchema(const PgTestSchema&) = delete;
  PgTestSchema& operator=(const PgTestSchema&) = delete;
  ~PgTestSchema() {
    if (admin_) (void)admin_->Run("DROP SCHEMA " + name_ + " CASCADE");
  }

  const std::string& name() const { return name_; }
  const std::string& url() const { return url_; }
  // A connection of the test's own to the database, outside the schema; null if none.
  store::PgConnection* admin() { return admin_.get(); }

 private:
  std::string name_;
  std::string url_;
  std::unique_ptr<store::PgConnection> admin_;
};

}  // namespace tf::testing
