#include "cost/audit/bill_scan.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace tf::cost {
namespace {

// CUR rounds costs to about 1e-8 and rates to a few more digits; a cent (or a millionth of the
// cost) is far above rounding and far below any overcharge worth a finding.
bool CostMatches(double cost, double rate, double usage) {
  double diff = std::fabs(cost - rate * usage);
  return diff <= std::max(0.01, 1e-6 * std::fabs(cost));
}

// A rate equal to a list price up to rounding.
bool SamePrice(double rate, double price) { return std::fabs(rate - price) <= 0.005 * price; }

}  // namespace

namespace {

// Adds [start, end) to `spans` (disjoint, merged where they touch or overlap); returns how much
// of it was there already.
int64_t AddSpan(std::map<int64_t, int64_t>& spans, int64_t start, int64_t end) {
  int64_t already = 0;
  auto it = spans.upper_bound(start);
  if (it != spans.begin() && std::prev(it)->second >= start) --it;
  int64_t merged_start = start, merged_end = end;
  while (it != spans.end() && it->first <= end) {
    already += std::max<int64_t>(0, std::min(end, it->second) - std::max(start, it->first));
    merged_start = std::min(merged_start, it->first);
    merged_end = std::max(merged_end, it->second);
    it = spans.erase(it);
  }
  spans.emplace(merged_start, merged_end);
  return already;
}

}  // namespace

ResourceTotals& BillScan::Resource(std::string_view id, UsageKind kind, RowRef ref) {
  auto it = resources_.find(id);
  if (it == resources_.end()) {
    it = resources_.emplace(std::string(id), ResourceTotals()).first;
    it->second.kind = kind;
    it->second.first = ref;
  } else if (it->second.kind == UsageKind::kOther) {
    it->second.kind = kind;  // a transfer row came before the instance's own rows
  }
  ++it->second.rows;
  return it->second;
}

void BillScan::Add(const CurRow& row) {
  billed_usd_ += row.unblended_cost;
  if (row.end > latest_end_) latest_end_ = row.end;
  if (row.start != 0 && (earliest_start_ == 0 || row.start < earliest_start_)) {
    earliest_start_ = row.start;
  }
  if (row.has_rate && !CostMatches(row.unblended_cost, row.unblended_rate, row.usage_amount)) {
    auto it = cost_mismatches_.find(row.resource_id);
    if (it == cost_mismatches_.end()) {
      it = cost_mismatches_.emplace(std::string(row.resource_id), Mismatch()).first;
    }
    it->second.rows.Add(row.ref, options_.evidence_rows);
    it->second.net_usd += row.unblended_cost - row.unblended_rate * row.usage_amount;
  }
  UsageType u = ParseUsageType(row.usage_type);
  // A usage type without a region prefix is us-east-1's (AWS's convention).
  std::string_view region = !row.region.empty() ? row.region
                            : !u.region.empty() ? u.region
                                                : std::string_view("us-east-1");
  if (!row.resource_id.empty()) saw_resource_ids_ = true;
  switch (u.kind) {
    case UsageKind::kOnDemandInstance:
    case UsageKind::kSpotInstance:
      AddInstance(row, u, region);
      break;
    case UsageKind::kVolume:
    case UsageKind::kSnapshot:
      if (!row.resource_id.empty()) {
        ResourceTotals& r = Resource(row.resource_id, u.kind, row.ref);
        r.storage_usd += row.unblended_cost;
        r.storage_rows.Add(row.ref, options_.evidence_rows);
      }
      break;
    case UsageKind::kRegionalTransfer:
      if (!row.resource_id.empty()) {
        Resource(row.resource_id, UsageKind::kOther, row.ref).transfer_usd += row.unblended_cost;
      }
      break;
    case UsageKind::kOther:
      break;
  }
}

void BillScan::AddInstance(const CurRow& row, const UsageType& u, std::string_view region) {
  std::string_view item = row.line_item_type;
  bool usage = item == "Usage" || item == "SavingsPlanCoveredUsage";
  if (!usage && item != "DiscountedUsage") return;  // fees, credits, negations
  std::string_view type = row.instance_type.empty() ? u.detail : row.instance_type;
  bool spot = u.kind == UsageKind::kSpotInstance || row.pricing_term == "Spot";
  if (!row.resource_id.empty()) {
    ResourceTotals& r = Resource(row.resource_id, u.kind, row.ref);
    if (r.instance_type.empty()) {
      r.instance_type = type;
      r.region = region;
    }
    r.hours += row.usage_amount;
    r.usd += row.unblended_cost;
    const bool covered = item == "SavingsPlanCoveredUsage";
    r.effective_usd += covered && row.has_savings_plan ? row.savings_plan_cost : row.unblended_cost;
    if (covered) {
      if (r.savings_plan_hours == 0) r.first_savings_plan = row.ref;
      r.savings_plan_hours += row.usage_amount;
    }
    if (spot) {
      if (r.spot_hours == 0) r.first_spot = row.ref;
      r.spot_hours += row.usage_amount;
      r.spot_usd += row.unblended_cost;
    }
    if (row.start == 0 || row.end == 0) {
      r.undated = true;
    } else {
      // A row over hours an earlier row of this resource billed already (in whatever order the
      // bill lists them), or that bills more hours than its own interval, is double billing.
      bool overlaps = AddSpan(r.billed_spans, row.start, row.end) > 0;
      bool too_long = row.usage_amount > (row.end - row.start) / 3600.0 + 1e-6;
      if (overlaps || too_long) r.overlap.Add(row.ref, options_.evidence_rows);
      r.first_start = std::min(r.first_start, row.start);
      r.last_end = std::max(r.last_end, row.end);
    }
    if (!row.availability_zone.empty() && r.zone != row.availability_zone) {
      r.zone = row.availability_zone;
      if (!row.cluster.empty()) {
        ClusterTotals& c = clusters_[std::string(row.cluster)];
        c.zones[r.zone].insert(std::string(row.resource_id));
        c.first_row.emplace(r.zone, row.ref);
      }
    }
    if (r.cluster.empty() && !row.cluster.empty()) r.cluster = row.cluster;
  }
  if (usage && !spot && row.usage_amount > 0) RateChecks(row, type, region);
  if (usage && spot && row.usage_amount > 0) SpotChecks(row, type, region);
}

template <typename Totals>
Totals& BillScan::TotalsOf(StringMap<Totals>& map, std::string_view type, std::string_view region) {
  key_.assign(type);
  key_ += '|';
  key_ += region;
  auto it = map.find(std::string_view(key_));
  if (it == map.end()) {
    Totals t;
    t.instance_type = type;
    t.region = region;
    t.offer = catalog_.FindOffer("aws", type, region);
    it = map.emplace(key_, std::move(t)).first;
  }
  return it->second;
}

void BillScan::SpotChecks(const CurRow& row, std::string_view type, std::string_view region) {
  SpotTotals& s = TotalsOf(spot_types_, type, region);
  s.hours += row.usage_amount;
  s.usd += row.unblended_cost;
  const Offer* o = s.offer;
  if (!o || !o->on_demand) return;
  double rate = row.has_rate ? row.unblended_rate : row.unblended_cost / row.usage_amount;
  bool at_on_demand = rate >= *o->on_demand * (1 - 1e-6);
  bool above_observed = o->spot_high && rate > *o->spot_high * (1 + options_.threshold);
  if (!at_on_demand && !above_observed) return;
  s.over_hours += row.usage_amount;
  s.over_usd += row.unblended_cost;
  s.over.Add(row.ref, options_.evidence_rows);
}

void BillScan::RateChecks(const CurRow& row, std::string_view type, std::string_view region) {
  TypeTotals& t = TotalsOf(types_, type, region);
  double rate = row.has_rate ? row.unblended_rate : row.unblended_cost / row.usage_amount;
  const Offer* o = t.offer;
  if (o && o->previous_on_demand && SamePrice(rate, *o->previous_on_demand) &&
      (row.start == 0 || row.start >= o->previous_until) &&
      !(o->on_demand && SamePrice(rate, *o->on_demand))) {
    t.stale_hours += row.usage_amount;
    t.stale_usd += row.unblended_cost;
    t.stale.Add(row.ref, options_.evidence_rows);
    return;
  }
  t.hours += row.usage_amount;
  t.usd += row.unblended_cost;
  if (!o || !o->on_demand) return;
  // Before a price change the previous list price applied.
  bool before_change = o->previous_on_demand && row.start != 0 && row.start < o->previous_until;
  double list = before_change ? *o->previous_on_demand : *o->on_demand;
  t.list_usd += row.usage_amount * list;
  if (rate > list * (1 + options_.threshold)) t.above.Add(row.ref, options_.evidence_rows);
}

}  // namespace tf::cost
