// The checks of the bill audit, each turning the totals of one pass over the bill (and the
// inventory, when given) into findings. Internal to the audit.
#pragma once

#include <string>
#include <vector>

#include "cost/audit/audit.h"
#include "cost/audit/bill_scan.h"
#include "cost/audit/inventory.h"
#include "cost/catalog.h"

namespace tf::cost {

struct CheckContext {
  const BillScan& scan;
  const Catalog& catalog;
  const AuditOptions& options;
  const Inventory& inventory;
  const std::vector<std::string>& files;  // RowRef::file indexes into this

  std::string Where(RowRef r) const;
  // The kept rows of `e` as "file:line" strings, and its total, into `f`.
  void AddEvidence(const Evidence& e, Finding* f) const;
};

// rate-above-catalog and stale-price, per instance type and region.
void RateFindings(const CheckContext& ctx, std::vector<Finding>* out);
// hours-exceed-clock per instance, and cost-mismatch over all rows.
void UsageFindings(const CheckContext& ctx, std::vector<Finding>* out);
// cluster-zones, cluster-no-efa and cluster-no-placement-group.
void ClusterFindings(const CheckContext& ctx, std::vector<Finding>* out,
                     std::vector<std::string>* skipped);
// unattached-volume and old-snapshot.
void StorageFindings(const CheckContext& ctx, std::vector<Finding>* out,
                     std::vector<std::string>* skipped);

// "$55.04/h"
std::string PerHour(double usd);

}  // namespace tf::cost
