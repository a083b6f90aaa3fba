#include "cost/audit/metering_audit.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cost/audit/usage_type.h"
#include "cost/numbers.h"

namespace tf::cost {
namespace {

using Json = nlohmann::json;

constexpr const char* kWhat = "the JSON of `tensorfleet cost report --by node --json` expected";

Status FieldError(const std::string& file, const std::string& field, const std::string& why) {
  return InvalidArgument(file + ": " + field + ": " + why);
}

Result<double> Number(const Json& j, const char* key, const std::string& file,
                      const std::string& where) {
  std::string field = where.empty() ? key : where + "." + key;
  auto it = j.find(key);
  if (it == j.end()) return FieldError(file, field, "missing");
  if (!it->is_number()) return FieldError(file, field, "expected a number");
  double v = it->get<double>();
  if (v < 0) return FieldError(file, field, "expected a number >= 0");
  return v;
}

Result<std::string> String(const Json& j, const char* key, bool required, const std::string& file,
                           const std::string& where) {
  std::string field = where + "." + key;
  auto it = j.find(key);
  if (it == j.end() || (!required && it->is_null())) {
    if (required) return FieldError(file, field, "missing");
    return std::string();
  }
  if (!it->is_string()) return FieldError(file, field, "expected a string");
  return it->get<std::string>();
}

std::string Hours(double seconds) { return FormatFixed(seconds / 3600, 2) + " h"; }

}  // namespace

Result<MeteringReport> LoadMeteringReport(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open the metering report");
  std::stringstream text;
  text << in.rdbuf();
  return ParseMeteringReport(text.str(), path);
}

Result<MeteringReport> ParseMeteringReport(std::string_view text, const std::string& name) {
  Json doc = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return InvalidArgument(name + ": not a JSON object (" + kWhat + ")");
  }
  MeteringReport m;
  m.file = name;
  auto window = doc.find("window");
  if (window == doc.end() || !window->is_object()) {
    return FieldError(name, "window", std::string("missing or not an object (") + kWhat + ")");
  }
  TF_ASSIGN_OR_RETURN(double since_ms, Number(*window, "since_ms", name, "window"));
  TF_ASSIGN_OR_RETURN(double until_ms, Number(*window, "until_ms", name, "window"));
  m.since = static_cast<int64_t>(since_ms / 1000);
  m.until = static_cast<int64_t>(until_ms / 1000);
  if (m.until <= m.since) return FieldError(name, "window.until_ms", "not after since_ms");

  auto idle = doc.find("idle");
  if (idle == doc.end()) return FieldError(name, "idle", "missing");
  if (idle->is_null()) {
    return FieldError(name, "idle",
                      "null: a single project's report has no node periods; use the whole "
                      "fleet's report (an admin token, no --project)");
  }
  auto nodes = idle->is_object() ? idle->find("nodes") : idle->end();
  if (!idle->is_object() || nodes == idle->end() || !nodes->is_array()) {
    return FieldError(name, "idle.nodes", "missing or not an array");
  }
  for (size_t i = 0; i < nodes->size(); ++i) {
    const Json& n = (*nodes)[i];
    std::string where = "idle.nodes[" + std::to_string(i) + "]";
    if (!n.is_object()) return FieldError(name, where, "expected an object");
    TF_ASSIGN_OR_RETURN(std::string node_id, String(n, "node_id", true, name, where));
    TF_ASSIGN_OR_RETURN(std::string instance_id, String(n, "instance_id", false, name, where));
    TF_ASSIGN_OR_RETURN(double up, Number(n, "up_seconds", name, where));
    TF_ASSIGN_OR_RETURN(double used, Number(n, "used_share_seconds", name, where));
    TF_ASSIGN_OR_RETURN(double idle_s, Number(n, "idle_seconds", name, where));
    if (instance_id.empty()) {
      ++m.unlabelled_periods;
      continue;
    }
    MeteredInstance& inst = m.instances[instance_id];
    inst.up_seconds += up;
    inst.used_share_seconds += used;
    inst.idle_seconds += idle_s;
    if (std::find(inst.nodes.begin(), inst.nodes.end(), node_id) == inst.nodes.end()) {
      inst.nodes.push_back(node_id);
    }
  }
  return m;
}

void WindowHours::Add(const CurRow& row) {
  if (row.resource_id.empty() || row.end <= row.start || row.start == 0) return;
  if (row.end <= since_ || row.start >= until_) return;
  std::string_view item = row.line_item_type;
  if (item != "Usage" && item != "SavingsPlanCoveredUsage" && item != "DiscountedUsage") return;
  UsageKind kind = ParseUsageType(row.usage_type).kind;
  if (kind != UsageKind::kOnDemandInstance && kind != UsageKind::kSpotInstance) return;
  double inside = static_cast<double>(std::min(row.end, until_) - std::max(row.start, since_));
  double fraction = inside / static_cast<double>(row.end - row.start);
  auto it = resources_.find(row.resource_id);
  if (it == resources_.end()) it = resources_.emplace(std::string(row.resource_id), Totals()).first;
  it->second.hours += row.usage_amount * fraction;
  it->second.usd += row.unblended_cost * fraction;
  it->second.rows.Add(row.ref, evidence_rows_);
}

void MeteringFindings(const CheckContext& ctx, const MeteringReport* metering,
                      const WindowHours* window, std::vector<Finding>* out,
                      std::vector<std::string>* skipped) {
  const std::string both = std::string(CheckName(Check::kBilledNotRunning)) + ", " +
                           std::string(CheckName(Check::kBilledIdle));
  if (!metering || !window) {
    skipped->push_back(both +
                       ": needs tensorfleet's metering (--metering: the JSON of `tensorfleet "
                       "cost report --by node --json`)");
    return;
  }
  const AuditOptions& o = ctx.options;
  std::string span = FormatUtcTime(metering->since) + " to " + FormatUtcTime(metering->until);
  std::vector<std::string> unknown;
  for (const auto& [id, billed] : window->resources()) {
    if (billed.hours <= 0) continue;
    auto r = ctx.scan.resources().find(id);
    std::string type = r != ctx.scan.resources().end() ? r->second.instance_type : "";
    auto m = metering->instances.find(id);
    if (m == metering->instances.end()) {
      std::string region = r != ctx.scan.resources().end() ? r->second.region : "us-east-1";
      const Offer* offer = ctx.catalog.FindOffer("aws", type, region);
      if (offer && offer->accelerator_count > 0) unknown.push_back(id);
      continue;
    }
    const MeteredInstance& mi = m->second;
    double rate = billed.usd / billed.hours;
    std::string nodes;
    for (const auto& n : mi.nodes) nodes += (nodes.empty() ? "" : ", ") + n;
    std::string node_note = metering->file + ": " + id + " is node " + nodes + " (up " +
                            Hours(mi.up_seconds) + ", busy " + Hours(mi.used_share_seconds) +
                            ", idle " + Hours(mi.idle_seconds) + ")";
    double billed_s = billed.hours * 3600;
    double excess = billed_s - mi.up_seconds;
    double tolerance = std::max(o.not_running_min_hours * 3600, o.not_running_tolerance * billed_s);
    if (excess > tolerance) {
      Finding f{Check::kBilledNotRunning, id};
      f.usd_at_stake = excess / 3600 * rate;
      f.message = type + ": " + Hours(billed_s) + " billed from " + span +
                  ", but tensorfleet's metering shows it up " + Hours(mi.up_seconds) + ": " +
                  Hours(excess) + " billed while not running (tolerance " + Hours(tolerance) +
                  "), at the billed " + PerHour(rate);
      ctx.AddEvidence(billed.rows, &f);
      f.evidence.push_back(node_note);
      ++f.evidence_total;
      out->push_back(std::move(f));
    }
    double idle_s = std::min(mi.idle_seconds, billed_s);
    double threshold = std::max(o.idle_min_hours * 3600, o.idle_threshold * billed_s);
    if (idle_s > threshold) {
      Finding f{Check::kBilledIdle, id};
      f.usd_at_stake = idle_s / 3600 * rate;
      f.message = type + ": " + Hours(billed_s) + " billed from " + span + "; up " +
                  Hours(mi.up_seconds) + " but busy " + Hours(mi.used_share_seconds) + ": " +
                  Hours(idle_s) + " idle (threshold " + Hours(threshold) + "), at the billed " +
                  PerHour(rate);
      ctx.AddEvidence(billed.rows, &f);
      f.evidence.push_back(node_note);
      ++f.evidence_total;
      out->push_back(std::move(f));
    }
  }
  if (!unknown.empty()) {
    std::sort(unknown.begin(), unknown.end());
    std::string list;
    for (size_t i = 0; i < unknown.size() && i < 10; ++i) {
      list += (list.empty() ? "" : ", ") + unknown[i];
    }
    if (unknown.size() > 10) list += ", ...";
    skipped->push_back(both + ": " + std::to_string(unknown.size()) +
                       (unknown.size() == 1 ? " GPU instance" : " GPU instances") +
                       " billed from " + span + " not in the metering report (no node labelled " +
                       "instance_id with it): " + list);
  }
}

}  // namespace tf::cost
