// The bill audit: reads an AWS Cost and Usage Report (legacy or CUR 2.0 CSV, plain or gzip,
// one file or a folder of parts) in constant memory, optionally a reseller's invoice and EC2
// inventory (describe-instances / describe-volumes / describe-snapshots JSON), and reports
// findings, each with the rows that prove it and the money at stake.
//
// Memory grows with the number of distinct resources and instance types in the bill, not with
// its rows.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cost/audit/problems.h"
#include "cost/catalog.h"

namespace tf::cost {

enum class Check {
  kRateAboveCatalog,  // effective on-demand rate above the catalog's by more than the threshold
  kStalePrice,        // rows still charged at a list price that ended before their date
  kSpotResold,        // spot capacity billed on the reseller's invoice at on-demand rates
  kHoursExceedClock,  // more instance-hours billed than the resource existed
  kCostMismatch,      // cost != rate x usage
  kClusterZones,      // a cluster's instances spread over several availability zones
  kClusterNoEfa,      // EFA-capable cluster instances running without an EFA interface
  kClusterNoPlacementGroup,  // cluster instances outside a placement group, or in several
  kUnattachedVolume,         // EBS volume billed while attached to nothing
  kOldSnapshot,              // EBS snapshot older than the age limit still billed
  kBilledNotRunning,         // instance-hours billed beyond what tensorfleet's metering saw up
  kBilledIdle,               // instance-hours billed that tensorfleet's metering saw idle
  kInvoiceMarkup,            // an invoice rate above the public on-demand price by the threshold
  kInvoiceTypeMismatch,      // the invoice names another instance type (or GPU) than ran
  kInvoiceHoursNotRun,       // more hours invoiced for a resource than the bill shows it ran
  kInvoiceUnverifiable,      // invoiced resources in neither the bill nor the inventory
};

// "rate-above-catalog", "stale-price", "spot-resold", "hours-exceed-clock", "cost-mismatch",
// "cluster-zones", "cluster-no-efa", "cluster-no-placement-group", "unattached-volume",
// "old-snapshot", "billed-not-running", "billed-idle", "invoice-markup",
// "invoice-type-mismatch", "invoice-hours-not-run", "invoice-unverifiable".
std::string_view CheckName(Check c);
bool ParseCheckName(std::string_view name, Check* out);
const std::vector<Check>& AllChecks();

struct AuditOptions {
  double threshold = 0.15;   // relative: rates more than 15% above the catalog are findings
  std::string invoice_path;  // reseller invoice CSV (docs/cost.md)
  std::vector<std::string> inventory_paths;  // EC2 describe-* JSON
  std::string cluster_tag = "cluster";       // the user tag naming a cluster
  int snapshot_max_age_days = 90;
  size_t evidence_rows = 10;  // rows kept per finding (the total is always counted)
  // tensorfleet's metering (`tensorfleet cost report --by node --json`), for billed-not-running
  // and billed-idle; nodes name their EC2 instance with the label instance_id.
  std::string metering_path;
  double not_running_tolerance = 0.02;  // billed hours above up hours by more than this share
  double not_running_min_hours = 1;     // ... and more than this many hours are a finding
  double idle_threshold = 0.10;         // idle hours above this share of the billed hours
  double idle_min_hours = 1;            // ... and above this many hours are a finding
  // An invoice rate more than this above the public on-demand price is a markup finding.
  double markup_threshold = 0.15;
  double invoice_hours_tolerance = 0.01;  // invoiced hours above billed ones by more than this
  double invoice_hours_min = 1;           // ... share and this many hours are a finding
};

struct Finding {
  Finding(Check c, std::string s) : check(c), subject(std::move(s)) {}

  Check check;
  std::string subject;  // what is wrong: "p5.48xlarge in us-east-1", "i-0abc...", "train-a"
  std::string message;  // why, with the numbers
  double usd_at_stake = 0;
  std::vector<std::string> evidence;  // "bill.csv:12", "inventory.json: i-0abc (no EFA)"
  int64_t evidence_total = 0;         // rows that show it, kept or not
};

struct AuditReport {
  std::vector<std::string> files;    // bill files read
  std::vector<std::string> formats;  // per file: "legacy CUR", "CUR 2.0"
  int64_t rows = 0;                  // bill rows read
  int64_t good_rows = 0;             // rows that passed to the checks
  double billed_usd = 0;             // sum of unblended cost over good rows
  ProblemLog problems;               // malformed rows and values
  std::vector<Finding> findings;     // most money first
  std::vector<std::string> skipped;  // checks that could not run, and why

  // Effective on-demand rate per instance type and region (the figure a finance team asks for).
  struct TypeRate {
    std::string instance_type, region;
    double hours = 0, usd = 0;
  };
  std::vector<TypeRate> type_rates;

  // The invoice in figures a finance team can forward: what it bills, what the same capacity
  // costs at public on-demand prices, and what it cost the reseller (the bill).
  struct InvoiceSummary {
    bool present = false;
    int64_t lines = 0;
    double hours = 0;
    double invoiced_usd = 0;
    // Lines whose instance type the catalog prices: what they bill, and the same hours at
    // public on-demand prices in force on their dates.
    double priced_usd = 0, list_usd = 0;
    // Lines of resources in the bill: what they bill, and what the reseller paid for those
    // hours (the bill's effective cost: spot, Savings Plan or on-demand).
    double costed_usd = 0, reseller_cost_usd = 0;
    // Lines at or under the markup threshold (not findings): how many and what they bill.
    int64_t within_threshold_lines = 0;
    double within_threshold_usd = 0;
    double markup() const { return list_usd > 0 ? priced_usd / list_usd - 1 : 0; }
    double margin() const { return reseller_cost_usd > 0 ? costed_usd / reseller_cost_usd - 1 : 0; }
  };
  InvoiceSummary invoice;

  double usd_at_stake() const;
  // 0 no finding, 1 findings, 2 input problems (malformed rows; findings may also be present).
  int ExitCode() const;
};

// Audits the bill at `path`. An error only when the input cannot be read at all (a missing
// file, a missing required column, corrupt gzip, an unreadable invoice, inventory or metering
// report); malformed rows are reported in the report's problems.
Result<AuditReport> RunAudit(const std::string& path, const AuditOptions& options,
                             const Catalog& catalog);

}  // namespace tf::cost
