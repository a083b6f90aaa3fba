// One pass over a bill's rows, keeping per instance type, per resource and per cluster totals
// and the first rows that show each problem. The checks (audit_checks.cc) turn these totals
// into findings once every row has been seen. Internal to the audit.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cost/audit/audit.h"
#include "cost/audit/cur_reader.h"
#include "cost/audit/usage_type.h"
#include "cost/catalog.h"

namespace tf::cost {

// Rows that show a problem: the first `cap` kept, all counted.
struct Evidence {
  std::vector<RowRef> rows;
  int64_t total = 0;
  void Add(RowRef r, size_t cap) {
    ++total;
    if (rows.size() < cap) rows.push_back(r);
  }
};

// On-demand instance usage of one instance type in one region.
struct TypeTotals {
  std::string instance_type, region;
  const Offer* offer = nullptr;  // the catalog's, if any
  double hours = 0, usd = 0;
  double list_usd = 0;  // the same hours at the list price that applied on each row's date
  Evidence above;       // rows whose own rate is above their list price by the threshold
  double stale_hours = 0, stale_usd = 0;
  Evidence stale;  // rows at the previous list price, dated after it ended
};

struct ResourceTotals {
  UsageKind kind = UsageKind::kOther;
  std::string instance_type, region, zone, cluster;
  int64_t rows = 0;
  RowRef first;
  // Instances.
  double hours = 0, usd = 0;            // every instance-hour billed
  double spot_hours = 0, spot_usd = 0;  // of which spot
  RowRef first_spot;
  double savings_plan_hours = 0;  // of which covered by a Savings Plan
  RowRef first_savings_plan;
  // What the hours cost the account: unblended cost, but a Savings Plan covered row's effective
  // cost where the bill has it.
  double effective_usd = 0;
  int64_t first_start = std::numeric_limits<int64_t>::max();
  int64_t last_end = 0;
  bool undated = false;  // a row without start or end: wall-clock unknown
  Evidence overlap;      // rows over hours an earlier row billed already, or longer than their span
  // The hours its dated rows billed, as disjoint [start, end) spans (merged as they touch): in
  // a bill in any order, a row over a span already billed is billed twice. As many entries as
  // the resource's billing has gaps, not as it has rows.
  std::map<int64_t, int64_t> billed_spans;
  double transfer_usd = 0;  // cross-zone transfer billed to this resource
  // Volumes and snapshots.
  double storage_usd = 0;
  Evidence storage_rows;
};

struct ClusterTotals {
  // zone -> resources seen there (from the bill), and the first row for each zone.
  std::map<std::string, std::set<std::string>> zones;
  std::map<std::string, RowRef> first_row;
};

// Spot usage of one instance type in one region, against the catalog: rows charged at or
// above the on-demand list price, or above the highest spot price observed by more than the
// threshold, are overcharged (a spot rate is worth having only below on-demand).
struct SpotTotals {
  std::string instance_type, region;
  const Offer* offer = nullptr;  // the catalog's, if any
  double hours = 0, usd = 0;
  double over_hours = 0, over_usd = 0;  // of the overcharged rows
  Evidence over;
};

// Hash that accepts string_view, so that per-row lookups do not allocate.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};
template <typename T>
using StringMap = std::unordered_map<std::string, T, StringHash, std::equal_to<>>;

class BillScan {
 public:
  BillScan(const Catalog& catalog, const AuditOptions& options)
      : catalog_(catalog), options_(options) {}

  void Add(const CurRow& row);

  const StringMap<TypeTotals>& types() const { return types_; }
  const StringMap<ResourceTotals>& resources() const { return resources_; }
  const StringMap<SpotTotals>& spot_types() const { return spot_types_; }
  const std::map<std::string, ClusterTotals>& clusters() const { return clusters_; }
  // Rows whose cost is not rate x usage, per resource id ("" for rows without one).
  struct Mismatch {
    Evidence rows;
    double net_usd = 0;  // cost - rate x usage, summed
  };
  const StringMap<Mismatch>& cost_mismatches() const { return cost_mismatches_; }
  double billed_usd() const { return billed_usd_; }
  int64_t latest_end() const { return latest_end_; }
  int64_t earliest_start() const { return earliest_start_; }  // 0 when no row is dated
  bool saw_resource_ids() const { return saw_resource_ids_; }

 private:
  void AddInstance(const CurRow& row, const UsageType& u, std::string_view region);
  void RateChecks(const CurRow& row, std::string_view type, std::string_view region);
  void SpotChecks(const CurRow& row, std::string_view type, std::string_view region);
  // The totals of `type` in `region` in `map`, made (with the catalog's offer) when new.
  template <typename Totals>
  Totals& TotalsOf(StringMap<Totals>& map, std::string_view type, std::string_view region);
  ResourceTotals& Resource(std::string_view id, UsageKind kind, RowRef ref);

  const Catalog& catalog_;
  const AuditOptions& options_;
  StringMap<TypeTotals> types_;
  StringMap<ResourceTotals> resources_;
  StringMap<SpotTotals> spot_types_;
  std::map<std::string, ClusterTotals> clusters_;
  StringMap<Mismatch> cost_mismatches_;
  double billed_usd_ = 0;
  int64_t latest_end_ = 0;
  int64_t earliest_start_ = 0;
  bool saw_resource_ids_ = false;
  std::string key_;  // reused to build type|region keys
};

}  // namespace tf::cost
