// Helpers for the cost tests: the shipped catalog, the tensorfleet binary run as a child, and
// files written into a temporary folder.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "cost/catalog.h"
#include "file_test_util.h"
#include "program_run.h"
#include "store_test_env.h"

namespace tf::testing {

inline std::string ShippedCatalogDir() {
  return std::string(TENSORFLEET_SOURCE_DIR) + "/data/catalog";
}

inline cost::Catalog ShippedCatalog() {
  cost::Catalog catalog;
  for (const char* f : {"accelerators.csv", "aws-ec2-accelerated-us-east-1.csv",
                        "aws-usage-us-east-1.csv", "models.csv", "resellers-2026.csv"}) {
    Status s = catalog.LoadFile(ShippedCatalogDir() + "/" + f);
    if (!s.ok()) ADD_FAILURE() << s.ToString();
  }
  return catalog;
}

// Runs the tensorfleet binary with `args`; the catalog is found in the source tree.
inline ProgramRun RunWithShippedCatalog(const std::vector<std::string>& args) {
  return RunTensorfleet(args, {"TENSORFLEET_CATALOG=" + ShippedCatalogDir()});
}

}  // namespace tf::testing
