// Where the catalog comes from. The default catalog is the folder of CSV files shipped in the
// repository's data/catalog/; the first of these that exists is used:
//   1. $TENSORFLEET_CATALOG (a folder);
//   2. <folder of the tensorfleet binary>/../share/tensorfleet/catalog (where `cmake --install`
//      puts it);
//   3. data/catalog in the source tree the binary was built from (a build tree).
// --catalog PATH replaces the default tables of the kinds PATH holds (a file, or a folder of
// *.csv); --catalog-extra PATH adds rows, a row for the same offer replacing the default one.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "cost/catalog.h"

namespace tf::cost {

struct CatalogOptions {
  std::vector<std::string> replace;  // --catalog
  std::vector<std::string> extra;    // --catalog-extra
};

// The folders searched for the default catalog, in order.
std::vector<std::string> DefaultCatalogCandidates();

// The default catalog folder; NotFound listing the folders searched.
Result<std::string> FindDefaultCatalogDir();

// Loads the default catalog (if found; an error only when nothing replaces it), then the
// --catalog and --catalog-extra files.
Result<Catalog> LoadCatalog(const CatalogOptions& options);

}  // namespace tf::cost
