#include <string_view>

#include "store/postgres_store.h"
#include "store/sqlite_store.h"
#include "store/store.h"

namespace tf::store {
namespace {
bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
}  // namespace

Result<std::unique_ptr<Store>> OpenStore(const std::string& url) {
  if (url.empty())
    return InvalidArgument("no store given: pass a file path or a postgresql:// URL");
  if (StartsWith(url, "postgresql://") || StartsWith(url, "postgres://") ||
      url.find("dbname=") != std::string::npos) {
    return OpenPostgresStore(url);
  }
  if (StartsWith(url, "sqlite://")) return OpenSqliteStore(url.substr(9));
  if (StartsWith(url, "sqlite:")) return OpenSqliteStore(url.substr(7));
  if (url.find("://") != std::string::npos) {
    return InvalidArgument("unknown store URL scheme in '" + url +
                           "': use a file path, sqlite:PATH or postgresql://...");
  }
  return OpenSqliteStore(url);
}

}  // namespace tf::store
