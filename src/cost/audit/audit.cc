#include "cost/audit/audit.h"

#include <algorithm>
#include <array>
#include <optional>

#include "cost/audit/audit_checks.h"
#include "cost/audit/bill_scan.h"
#include "cost/audit/cur_reader.h"
#include "cost/audit/inventory.h"
#include "cost/audit/invoice_check.h"
#include "cost/audit/metering_audit.h"

namespace tf::cost {
namespace {

constexpr std::array<std::pair<Check, std::string_view>, 16> kChecks = {{
    {Check::kRateAboveCatalog, "rate-above-catalog"},
    {Check::kStalePrice, "stale-price"},
    {Check::kSpotResold, "spot-resold"},
    {Check::kHoursExceedClock, "hours-exceed-clock"},
    {Check::kCostMismatch, "cost-mismatch"},
    {Check::kClusterZones, "cluster-zones"},
    {Check::kClusterNoEfa, "cluster-no-efa"},
    {Check::kClusterNoPlacementGroup, "cluster-no-placement-group"},
    {Check::kUnattachedVolume, "unattached-volume"},
    {Check::kOldSnapshot, "old-snapshot"},
    {Check::kBilledNotRunning, "billed-not-running"},
    {Check::kBilledIdle, "billed-idle"},
    {Check::kInvoiceMarkup, "invoice-markup"},
    {Check::kInvoiceTypeMismatch, "invoice-type-mismatch"},
    {Check::kInvoiceHoursNotRun, "invoice-hours-not-run"},
    {Check::kInvoiceUnverifiable, "invoice-unverifiable"},
}};

}  // namespace

std::string_view CheckName(Check c) {
  for (const auto& [check, name] : kChecks) {
    if (check == c) return name;
  }
  return "?";
}

bool ParseCheckName(std::string_view name, Check* out) {
  for (const auto& [check, n] : kChecks) {
    if (n == name) {
      *out = check;
      return true;
    }
  }
  return false;
}

const std::vector<Check>& AllChecks() {
  static const std::vector<Check> kAll = [] {
    std::vector<Check> v;
    for (const auto& c : kChecks) v.push_back(c.first);
    return v;
  }();
  return kAll;
}

double AuditReport::usd_at_stake() const {
  double sum = 0;
  for (const auto& f : findings) sum += f.usd_at_stake;
  return sum;
}

int AuditReport::ExitCode() const {
  if (problems.count() > 0) return 2;
  return findings.empty() ? 0 : 1;
}

Result<AuditReport> RunAudit(const std::string& path, const AuditOptions& options,
                             const Catalog& catalog) {
  if (options.threshold < 0) return InvalidArgument("--threshold must be >= 0");
  if (options.markup_threshold < 0) return InvalidArgument("--markup-threshold must be >= 0");
  AuditReport report;
  Inventory inventory;
  for (const auto& file : options.inventory_paths) {
    TF_RETURN_IF_ERROR(inventory.LoadFile(file, options.cluster_tag));
  }
  std::optional<MeteringReport> metering;
  std::optional<WindowHours> window;
  if (!options.metering_path.empty()) {
    TF_ASSIGN_OR_RETURN(metering, LoadMeteringReport(options.metering_path));
    window.emplace(metering->since, metering->until, options.evidence_rows);
  }
  TF_ASSIGN_OR_RETURN(auto reader, CurReader::Open(path, options.cluster_tag, &report.problems));
  BillScan scan(catalog, options);
  CurRow row;
  while (true) {
    TF_ASSIGN_OR_RETURN(bool more, reader->Next(&row));
    if (!more) break;
    scan.Add(row);
    if (window) window->Add(row);
  }
  report.files = reader->files();
  report.formats = reader->formats();
  report.rows = reader->rows();
  report.good_rows = reader->good_rows();
  report.billed_usd = scan.billed_usd();

  std::vector<std::string> evidence_files = report.files;
  if (!options.invoice_path.empty()) evidence_files.push_back(options.invoice_path);
  CheckContext ctx{scan, catalog, options, inventory, evidence_files};
  RateFindings(ctx, &report.findings);
  UsageFindings(ctx, &report.findings);
  ClusterFindings(ctx, &report.findings, &report.skipped);
  StorageFindings(ctx, &report.findings, &report.skipped);
  MeteringFindings(ctx, metering ? &*metering : nullptr, window ? &*window : nullptr,
                   &report.findings, &report.skipped);
  if (!options.invoice_path.empty()) {
    TF_RETURN_IF_ERROR(AuditInvoice(options.invoice_path,
                                    static_cast<uint32_t>(report.files.size()), ctx,
                                    &report.problems, &report.findings, &report.invoice));
  } else {
    report.skipped.push_back(std::string(CheckName(Check::kSpotResold)) +
                             " on a reseller's invoice: needs the invoice (--invoice); the "
                             "bill's own spot rows were checked against the catalog");
  }
  if (!scan.saw_resource_ids()) {
    report.skipped.push_back(std::string(CheckName(Check::kHoursExceedClock)) +
                             ": the bill has no resource ids (enable them in the report)");
  }
  std::stable_sort(report.findings.begin(), report.findings.end(),
                   [](const Finding& a, const Finding& b) {
                     if (a.usd_at_stake != b.usd_at_stake) return a.usd_at_stake > b.usd_at_stake;
                     return a.subject < b.subject;
                   });
  for (const auto& [key, t] : scan.types()) {
    report.type_rates.push_back(
        {t.instance_type, t.region, t.hours + t.stale_hours, t.usd + t.stale_usd});
  }
  std::sort(report.type_rates.begin(), report.type_rates.end(), [](const auto& a, const auto& b) {
    return std::tie(a.instance_type, a.region) < std::tie(b.instance_type, b.region);
  });
  return report;
}

}  // namespace tf::cost
