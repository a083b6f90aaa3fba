#include "cost/catalog_files.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace tf::cost {
namespace {

namespace fs = std::filesystem;

// The CSV files a catalog path stands for: itself, or a folder's *.csv in name order.
Result<std::vector<std::string>> CatalogFiles(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound(path + ": no such catalog file or folder");
  if (!fs::is_directory(path, ec)) return std::vector<std::string>{path};
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".csv") {
      files.push_back(entry.path().string());
    }
  }
  if (ec) return Unavailable(path + ": " + ec.message());
  if (files.empty()) return InvalidArgument(path + ": catalog folder holds no *.csv file");
  std::sort(files.begin(), files.end());
  return files;
}

Status LoadPath(Catalog& catalog, const std::string& path, std::set<Catalog::Kind>* replacing) {
  TF_ASSIGN_OR_RETURN(auto files, CatalogFiles(path));
  for (const auto& file : files) TF_RETURN_IF_ERROR(catalog.LoadFile(file, replacing));
  return OkStatus();
}

}  // namespace

std::vector<std::string> DefaultCatalogCandidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("TENSORFLEET_CATALOG"); env && *env) out.push_back(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    out.push_back((exe.parent_path().parent_path() / "share/tensorfleet/catalog").string());
  }
#ifdef TF_SOURCE_CATALOG_DIR
  out.push_back(TF_SOURCE_CATALOG_DIR);
#endif
  return out;
}

Result<std::string> FindDefaultCatalogDir() {
  std::string searched;
  for (const auto& dir : DefaultCatalogCandidates()) {
    std::error_code ec;
    if (fs::is_directory(dir, ec)) return dir;
    searched += (searched.empty() ? "" : ", ") + dir;
  }
  return NotFound("no price catalog found (looked in: " + searched +
                  "); set TENSORFLEET_CATALOG or pass --catalog");
}

Result<Catalog> LoadCatalog(const CatalogOptions& options) {
  Catalog catalog;
  auto dir = FindDefaultCatalogDir();
  if (dir.ok()) {
    TF_RETURN_IF_ERROR(LoadPath(catalog, *dir, nullptr));
  } else if (options.replace.empty()) {
    return dir.status();
  }
  std::set<Catalog::Kind> replaced;
  for (const auto& path : options.replace) TF_RETURN_IF_ERROR(LoadPath(catalog, path, &replaced));
  for (const auto& path : options.extra) TF_RETURN_IF_ERROR(LoadPath(catalog, path, nullptr));
  return catalog;
}

}  // namespace tf::cost
