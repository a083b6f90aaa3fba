#include "cost/audit/bill_scan.h"

#include <cmath>

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
  if (row.has_rate && !CostMatches(row.unblended_cost, row.unblended_rate, row.usage_amount)) {
    cost_mismatch_.Add(row.ref, options_.evidence_rows);
    cost_mismatch_usd_ += row.unblended_cost - row.unblended_rate * row.usage_amount;
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
    if (spot) {
      if (r.spot_hours == 0) r.first_spot = row.ref;
      r.spot_hours += row.usage_amount;
      r.spot_usd += row.unblended_cost;
    }
    if (row.start == 0 || row.end == 0) {
      r.undated = true;
    } else {
      // A row that starts before an earlier one of this resource ended (in a bill ordered by
      // time, a duplicate), or bills more hours than its own interval, shows double billing.
      bool overlaps = row.start < r.last_end;
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
}

void BillScan::RateChecks(const CurRow& row, std::string_view type, std::string_view region) {
  key_.assign(type);
  key_ += '|';
  key_ += region;
  auto it = types_.find(std::string_view(key_));
  if (it == types_.end()) {
    TypeTotals t;
    t.instance_type = type;
    t.region = region;
    t.offer = catalog_.FindOffer("aws", type, region);
    it = types_.emplace(key_, std::move(t)).first;
  }
  TypeTotals& t = it->second;
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
