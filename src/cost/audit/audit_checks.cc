#include "cost/audit/audit_checks.h"

#include <algorithm>

#include "cost/numbers.h"

namespace tf::cost {

std::string CheckContext::Where(RowRef r) const {
  return tf::cost::Where(r.file < files.size() ? files[r.file] : "?", r.line);
}

void CheckContext::AddEvidence(const Evidence& e, Finding* f) const {
  for (RowRef r : e.rows) f->evidence.push_back(Where(r));
  f->evidence_total += e.total;
}

std::string PerHour(double usd) { return "$" + FormatFixed(usd, usd < 10 ? 4 : 2) + "/h"; }

namespace {

std::string Pct(double fraction) { return FormatFixed(fraction * 100, 1) + "%"; }

std::string CatalogRef(const Offer& o) {
  std::string ref = o.source.empty() ? o.origin : o.source;
  if (!o.on_demand_date.empty()) ref += ", " + o.on_demand_date;
  return ref;
}

}  // namespace

namespace {

// spot-resold from the bill alone: spot rows charged like on-demand ones (SpotTotals).
void SpotRateFindings(const CheckContext& ctx, std::vector<Finding>* out) {
  for (const auto& [key, s] : ctx.scan.spot_types()) {
    const Offer* o = s.offer;
    if (!o || !o->on_demand || s.over.total == 0 || s.over_hours <= 0) continue;
    const double on_demand = *o->on_demand;
    // What spot capacity costs, by the catalog: its highest observed price, else on-demand.
    const double fair = o->spot_high ? *o->spot_high : on_demand;
    const double effective = s.over_usd / s.over_hours;
    Finding f{Check::kSpotResold, s.instance_type + " in " + s.region + " (spot)"};
    f.usd_at_stake = s.over_usd - s.over_hours * fair;
    std::string observed =
        o->spot_low && o->spot_high
            ? "spot observed at " + PerHour(*o->spot_low) + " to " + PerHour(*o->spot_high)
            : "no spot price observed";
    f.message = FormatFixed(s.over_hours, 1) + " spot hours charged " + PerHour(effective) +
                (effective >= on_demand * (1 - 1e-6)
                     ? ", at or above the on-demand list price " + PerHour(on_demand)
                     : ", " + Pct(effective / fair - 1) +
                           " above the highest observed spot "
                           "price") +
                " (" + observed + "; " + CatalogRef(*o) + ")";
    ctx.AddEvidence(s.over, &f);
    out->push_back(std::move(f));
  }
}

}  // namespace

void RateFindings(const CheckContext& ctx, std::vector<Finding>* out) {
  SpotRateFindings(ctx, out);
  for (const auto& [key, t] : ctx.scan.types()) {
    const Offer* o = t.offer;
    if (!o || !o->on_demand) continue;
    double list = *o->on_demand;
    std::string subject = t.instance_type + " in " + t.region;
    if (t.stale_hours > 0) {
      Finding f{Check::kStalePrice, subject};
      f.usd_at_stake = t.stale_usd - t.stale_hours * list;
      f.message = FormatFixed(t.stale_hours, 1) + " h charged at " +
                  PerHour(*o->previous_on_demand) + ", the " + o->previous_label +
                  " list price, after it ended on " +
                  FormatUtcTime(o->previous_until).substr(0, 10) + "; the list price is now " +
                  PerHour(list) + " (" + CatalogRef(*o) + ")";
      ctx.AddEvidence(t.stale, &f);
      out->push_back(std::move(f));
    }
    if (t.hours <= 0 || t.list_usd <= 0) continue;
    if (t.usd <= t.list_usd * (1 + ctx.options.threshold)) continue;
    // The list rate over these hours: the current one, or a blend where some rows predate a
    // price change.
    double effective = t.usd / t.hours, listed = t.list_usd / t.hours;
    Finding f{Check::kRateAboveCatalog, subject};
    f.usd_at_stake = t.usd - t.list_usd;
    f.message = "effective on-demand rate " + PerHour(effective) + " over " +
                FormatFixed(t.hours, 1) + " h is " + Pct(effective / listed - 1) +
                " above the catalog's " + PerHour(listed) + " (" + CatalogRef(*o) + "; threshold " +
                Pct(ctx.options.threshold) + ")";
    ctx.AddEvidence(t.above, &f);
    out->push_back(std::move(f));
  }
}

void UsageFindings(const CheckContext& ctx, std::vector<Finding>* out) {
  for (const auto& [id, r] : ctx.scan.resources()) {
    if (r.hours <= 0 || r.undated || r.last_end <= r.first_start) continue;
    double wall = (r.last_end - r.first_start) / 3600.0;
    double excess = r.hours - wall;
    if (excess <= std::max(0.01, 1e-6 * wall)) continue;
    Finding f{Check::kHoursExceedClock, id};
    f.usd_at_stake = excess * r.usd / r.hours;
    f.message = r.instance_type + ": " + FormatFixed(r.hours, 2) + " instance-hours billed in " +
                FormatFixed(wall, 2) + " h of wall-clock (" + FormatUtcTime(r.first_start) +
                " to " + FormatUtcTime(r.last_end) + "): " + FormatFixed(excess, 2) +
                " h billed twice";
    if (r.overlap.total > 0) {
      ctx.AddEvidence(r.overlap, &f);
    } else {  // out-of-order bill: point at the resource's first row
      f.evidence.push_back(ctx.Where(r.first));
      f.evidence_total = r.rows;
    }
    out->push_back(std::move(f));
  }
  // One finding per resource, named by its id: what a finance team disputes line by line.
  for (const auto& [resource, mismatch] : ctx.scan.cost_mismatches()) {
    Finding f{Check::kCostMismatch, resource.empty() ? "rows without a resource id" : resource};
    const double net = mismatch.net_usd;
    f.usd_at_stake = std::abs(net);
    f.message =
        std::to_string(mismatch.rows.total) +
        (mismatch.rows.total == 1 ? " row whose cost differs" : " rows whose cost differs") +
        " from rate x usage by more than a cent; net " + FormatUsd(net) +
        (net >= 0 ? " more than their rates give" : " less than their rates give");
    ctx.AddEvidence(mismatch.rows, &f);
    out->push_back(std::move(f));
  }
}

namespace {

// cluster-no-placement-group: a cluster whose instances are not all in one placement group.
// Those outside it are the instances with no group, or, when every instance has one, those
// outside the group that holds most of them.
void PlacementFindings(const CheckContext& ctx,
                       const std::map<std::string, std::vector<const InventoryInstance*>>& members,
                       std::vector<Finding>* out) {
  for (const auto& [name, insts] : members) {
    if (insts.size() < 2) continue;  // placement matters between machines
    std::map<std::string, int> groups;
    int ungrouped = 0;
    for (const auto* inst : insts) {
      if (inst->placement_group.empty()) {
        ++ungrouped;
      } else {
        ++groups[inst->placement_group];
      }
    }
    if (ungrouped == 0 && groups.size() < 2) continue;
    std::string main_group;  // the group most of the cluster is in (ties: the first by name)
    int most = 0;
    for (const auto& [group, n] : groups) {
      if (n > most) most = n, main_group = group;
    }
    Finding f{Check::kClusterNoPlacementGroup, name};
    int outside = 0;
    for (const auto* inst : insts) {
      bool out_of_group =
          ungrouped > 0 ? inst->placement_group.empty() : inst->placement_group != main_group;
      if (!out_of_group) continue;
      ++outside;
      f.evidence.push_back(inst->file + ": " + inst->id + " (" +
                           (inst->placement_group.empty()
                                ? std::string("no placement group")
                                : "placement group " + inst->placement_group) +
                           ")");
      auto r = ctx.scan.resources().find(inst->id);
      if (r != ctx.scan.resources().end()) {
        f.usd_at_stake += r->second.usd;
        f.evidence.push_back(ctx.Where(r->second.first));
      }
    }
    std::string spread;
    for (const auto& [group, n] : groups) {
      spread += (spread.empty() ? "" : ", ") + group + " (" + std::to_string(n) + ")";
    }
    if (ungrouped > 0) {
      spread +=
          (spread.empty() ? "" : ", ") + std::string("none (") + std::to_string(ungrouped) + ")";
    }
    f.evidence_total = static_cast<int64_t>(f.evidence.size());
    f.message = std::to_string(outside) + " of " + std::to_string(insts.size()) +
                " cluster instances are outside the cluster's placement group (groups: " + spread +
                "): collective traffic crosses racks at higher latency; " +
                FormatUsd(f.usd_at_stake) + " billed for them";
    out->push_back(std::move(f));
  }
}

}  // namespace

void ClusterFindings(const CheckContext& ctx, std::vector<Finding>* out,
                     std::vector<std::string>* skipped) {
  // Zones per cluster, from the bill and from the inventory.
  std::map<std::string, std::map<std::string, std::set<std::string>>> zones;
  for (const auto& [name, c] : ctx.scan.clusters()) {
    for (const auto& [zone, ids] : c.zones) zones[name][zone].insert(ids.begin(), ids.end());
  }
  std::map<std::string, std::vector<const InventoryInstance*>> members;
  for (const auto& [id, inst] : ctx.inventory.instances()) {
    if (inst.cluster.empty()) continue;
    members[inst.cluster].push_back(&inst);
    if (!inst.zone.empty()) zones[inst.cluster][inst.zone].insert(id);
  }
  if (zones.empty()) {
    skipped->push_back(std::string(CheckName(Check::kClusterZones)) +
                       ": no instance carries the '" + ctx.options.cluster_tag +
                       "' tag (in the bill or the inventory)");
  }
  for (const auto& [name, by_zone] : zones) {
    if (by_zone.size() < 2) continue;
    Finding f{Check::kClusterZones, name};
    std::string spread;
    std::set<std::string> all;
    for (const auto& [zone, ids] : by_zone) {
      spread += (spread.empty() ? "" : ", ") + zone + " (" + std::to_string(ids.size()) +
                (ids.size() == 1 ? " instance)" : " instances)");
      all.insert(ids.begin(), ids.end());
      auto c = ctx.scan.clusters().find(name);
      if (c != ctx.scan.clusters().end()) {
        auto row = c->second.first_row.find(zone);
        if (row != c->second.first_row.end()) f.evidence.push_back(ctx.Where(row->second));
      }
      for (const auto& id : ids) {
        if (const auto* inst = ctx.inventory.FindInstance(id); inst && inst->zone == zone) {
          f.evidence.push_back(inst->file + ": " + id + " in " + zone);
          break;
        }
      }
    }
    for (const auto& id : all) {
      auto r = ctx.scan.resources().find(id);
      if (r != ctx.scan.resources().end()) f.usd_at_stake += r->second.transfer_usd;
    }
    f.evidence_total = static_cast<int64_t>(f.evidence.size());
    f.message = "cluster instances spread over " + std::to_string(by_zone.size()) +
                " availability zones: " + spread +
                "; traffic between zones is slower and "
                "billed each way (" +
                FormatUsd(f.usd_at_stake) + " of cross-zone transfer billed to these instances)";
    out->push_back(std::move(f));
  }

  if (!ctx.inventory.has_instances()) {
    for (Check c : {Check::kClusterNoEfa, Check::kClusterNoPlacementGroup}) {
      skipped->push_back(std::string(CheckName(c)) +
                         ": needs describe-instances output (--instances)");
    }
    return;
  }
  PlacementFindings(ctx, members, out);
  for (const auto& [name, insts] : members) {
    if (insts.size() < 2) continue;  // EFA matters between machines
    Finding f{Check::kClusterNoEfa, name};
    int missing = 0;
    std::string type;
    for (const auto* inst : insts) {
      std::string_view region = RegionOfZone(inst->zone);
      const Offer* o =
          ctx.catalog.FindOffer("aws", inst->type, region.empty() ? "us-east-1" : region);
      if (!o || !o->efa_capable() || inst->efa) continue;
      ++missing;
      type = inst->type;
      f.evidence.push_back(inst->file + ": " + inst->id + " (" + inst->type + ", " +
                           std::to_string(*o->efa_interfaces) +
                           " EFA interfaces possible, none attached)");
      auto r = ctx.scan.resources().find(inst->id);
      if (r != ctx.scan.resources().end()) {
        f.usd_at_stake += r->second.usd;
        f.evidence.push_back(ctx.Where(r->second.first));
      }
    }
    if (missing == 0) continue;
    f.evidence_total = static_cast<int64_t>(f.evidence.size());
    f.message = std::to_string(missing) + " of " + std::to_string(insts.size()) +
                " cluster instances are EFA-capable (" + type +
                ") but have no EFA interface: collective traffic goes over TCP; " +
                FormatUsd(f.usd_at_stake) + " billed for them";
    out->push_back(std::move(f));
  }
}

void StorageFindings(const CheckContext& ctx, std::vector<Finding>* out,
                     std::vector<std::string>* skipped) {
  const Inventory& inv = ctx.inventory;
  bool volumes_known = inv.has_instances() || inv.has_volumes();
  if (!volumes_known) {
    skipped->push_back(std::string(CheckName(Check::kUnattachedVolume)) +
                       ": needs describe-volumes or describe-instances output (--instances)");
  }
  if (!inv.has_snapshots()) {
    skipped->push_back(std::string(CheckName(Check::kOldSnapshot)) +
                       ": needs describe-snapshots output (--instances)");
  }
  int64_t max_age = static_cast<int64_t>(ctx.options.snapshot_max_age_days) * 86400;
  for (const auto& [id, r] : ctx.scan.resources()) {
    if (r.kind == UsageKind::kVolume && volumes_known) {
      const InventoryVolume* v = inv.FindVolume(id);
      bool unattached =
          v ? v->state == "available" : inv.has_instances() && !inv.VolumeAttached(id);
      if (!unattached) continue;
      Finding f{Check::kUnattachedVolume, id};
      f.usd_at_stake = r.storage_usd;
      f.message = "volume billed " + FormatUsd(r.storage_usd) + " while attached to no instance (" +
                  (v ? v->file + ": State " + v->state
                     : std::string("in no instance's block device mappings")) +
                  ")";
      ctx.AddEvidence(r.storage_rows, &f);
      out->push_back(std::move(f));
    } else if (r.kind == UsageKind::kSnapshot && inv.has_snapshots()) {
      // The bill names snapshots by ARN: arn:aws:ec2:region:account:snapshot/snap-...
      std::string_view snap = id;
      if (size_t slash = snap.rfind('/'); slash != std::string_view::npos) {
        snap = snap.substr(slash + 1);
      }
      const InventorySnapshot* s = inv.FindSnapshot(snap);
      int64_t end = ctx.scan.latest_end();
      if (!s || end == 0 || end - s->start_time <= max_age) continue;
      Finding f{Check::kOldSnapshot, std::string(snap)};
      f.usd_at_stake = r.storage_usd;
      f.message = "snapshot taken " + FormatUtcTime(s->start_time) + ", " +
                  std::to_string((end - s->start_time) / 86400) + " days before the bill's end " +
                  "(limit " + std::to_string(ctx.options.snapshot_max_age_days) +
                  "), still billed " + FormatUsd(r.storage_usd);
      ctx.AddEvidence(r.storage_rows, &f);
      out->push_back(std::move(f));
    }
  }
}

}  // namespace tf::cost
