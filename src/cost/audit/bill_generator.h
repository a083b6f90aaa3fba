// A synthetic AWS bill with known anomalies planted in it, for tests, demos and benchmarks:
// a month of hourly instance rows (on-demand and spot, two EFA clusters), daily EBS volume,
// snapshot and cross-zone transfer rows, all priced from the catalog; optionally the matching
// reseller invoice, EC2 inventory and tensorfleet metering report. Deterministic for a given
// seed.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "cost/audit/audit.h"
#include "cost/audit/byte_sink.h"
#include "cost/catalog.h"

namespace tf::cost {

struct GeneratorOptions {
  int64_t rows = 10000;  // bill rows, header not counted
  bool cur2 = false;     // CUR 2.0 columns instead of legacy CUR
  uint64_t seed = 1;
  std::vector<Check> anomalies;    // each planted once
  int64_t malformed = 0;           // rows with a bad number, date or field count
  std::string period = "2026-08";  // the billing month, YYYY-MM
};

struct PlantedAnomaly {
  Check check;
  std::string subject;         // the finding's subject the audit should report
  std::vector<int64_t> lines;  // bill lines that show it, where a few lines do
  double usd_at_stake = 0;     // exact, where the generator knows it (0 where not)
};

struct GeneratedBill {
  int64_t rows = 0;
  std::vector<PlantedAnomaly> planted;
  std::vector<int64_t> malformed_lines;
};

// Writes the bill to `bill` (header included) and, when not null, the invoice CSV, the
// inventory JSON and the metering report (as `tensorfleet cost report --by node --json` prints
// it, one node per instance, labelled with its instance id). InvalidArgument when an anomaly
// needs an output that is missing (spot-resold and the invoice-* checks need the invoice;
// cluster-no-efa, cluster-no-placement-group, unattached-volume and old-snapshot the inventory;
// billed-not-running and billed-idle the metering) or the catalog lacks the prices to plant it.
Result<GeneratedBill> GenerateBill(const GeneratorOptions& options, const Catalog& catalog,
                                   ByteSink* bill, std::ostream* invoice, std::ostream* inventory,
                                   std::ostream* metering = nullptr);

}  // namespace tf::cost
