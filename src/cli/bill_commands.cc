// `tensorfleet cost audit` and `tensorfleet cost generate-bill`: bills checked against the
// catalog, and synthetic bills with known anomalies to check the checker.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/cost_flags.h"
#include "cli/table.h"
#include "cost/audit/audit.h"
#include "cost/audit/bill_generator.h"
#include "cost/audit/byte_sink.h"
#include "cost/numbers.h"

namespace tf::cli {
namespace {

struct AuditFlags {
  cost::CatalogOptions catalog;
  cost::AuditOptions options;
  std::string bill;    // a CUR file or a folder of parts
  bool rates = false;  // print the effective on-demand rate per instance type
};

struct GenerateBillFlags {
  cost::CatalogOptions catalog;
  cost::GeneratorOptions options;
  std::string out;
  std::string format = "legacy";  // or cur2
  bool gzip = false;
  std::string anomalies;  // comma-separated, "all" or "none"
  std::string invoice_path;
  std::string inventory_path;
  std::string metering_path;
};

Json ReportJson(const cost::AuditReport& r) {
  Json j = {{"files", r.files},
            {"formats", r.formats},
            {"rows", r.rows},
            {"rows_checked", r.good_rows},
            {"billed_usd", r.billed_usd},
            {"usd_at_stake", r.usd_at_stake()},
            {"findings", Json::array()},
            {"skipped_checks", r.skipped},
            {"malformed", {{"count", r.problems.count()}, {"first", Json::array()}}},
            {"effective_rates", Json::array()},
            {"exit_code", r.ExitCode()}};
  for (const auto& f : r.findings) {
    j["findings"].push_back({{"check", std::string(cost::CheckName(f.check))},
                             {"subject", f.subject},
                             {"message", f.message},
                             {"usd_at_stake", f.usd_at_stake},
                             {"evidence", f.evidence},
                             {"evidence_total", f.evidence_total}});
  }
  for (const auto& p : r.problems.kept()) {
    j["malformed"]["first"].push_back(
        {{"file", p.file}, {"line", p.line}, {"column", p.column}, {"message", p.message}});
  }
  if (r.invoice.present) {
    const auto& s = r.invoice;
    j["invoice"] = {{"lines", s.lines},
                    {"hours", s.hours},
                    {"invoiced_usd", s.invoiced_usd},
                    {"priced_usd", s.priced_usd},
                    {"public_on_demand_usd", s.list_usd},
                    {"markup_over_public", s.markup()},
                    {"costed_usd", s.costed_usd},
                    {"reseller_cost_usd", s.reseller_cost_usd},
                    {"reseller_margin", s.margin()},
                    {"lines_within_markup_threshold", s.within_threshold_lines},
                    {"usd_within_markup_threshold", s.within_threshold_usd}};
  }
  for (const auto& t : r.type_rates) {
    j["effective_rates"].push_back({{"instance_type", t.instance_type},
                                    {"region", t.region},
                                    {"hours", t.hours},
                                    {"usd", t.usd},
                                    {"usd_per_hour", t.hours > 0 ? t.usd / t.hours : 0}});
  }
  return j;
}

// Rows that prove a finding, grouped by file: "bill.csv lines 12, 40, 68 ... (720 rows)", then
// the other evidence (inventory entries) one per line.
void PrintEvidence(const cost::Finding& f) {
  std::vector<std::pair<std::string, std::string>> by_file;  // file, "12, 40"
  std::vector<std::string> notes;
  for (const auto& e : f.evidence) {
    size_t colon = e.rfind(':');
    bool row = colon != std::string::npos && colon + 1 < e.size() &&
               e.find_first_not_of("0123456789", colon + 1) == std::string::npos;
    if (!row) {
      notes.push_back(e);
      continue;
    }
    std::string file = e.substr(0, colon), line = e.substr(colon + 1);
    if (by_file.empty() || by_file.back().first != file) {
      by_file.push_back({file, line});
    } else {
      by_file.back().second += ", " + line;
    }
  }
  int64_t rows = f.evidence_total - static_cast<int64_t>(notes.size());
  int64_t shown = static_cast<int64_t>(f.evidence.size() - notes.size());
  for (size_t i = 0; i < by_file.size(); ++i) {
    std::cout << "   proof: " << by_file[i].first << " line"
              << (by_file[i].second.find(',') == std::string::npos ? " " : "s ")
              << by_file[i].second;
    if (i + 1 == by_file.size() && rows > shown) {
      std::cout << " ... (" << cost::FormatGrouped(static_cast<double>(rows)) << " rows in all)";
    }
    std::cout << "\n";
  }
  for (const auto& n : notes) std::cout << "   proof: " << n << "\n";
}

// The invoice in the figures a finance team forwards.
void PrintInvoiceSummary(const cost::AuditReport::InvoiceSummary& s) {
  auto pct = [](double f) { return cost::FormatFixed(f * 100, 1) + "%"; };
  std::cout << "\nThe invoice: " << s.lines << (s.lines == 1 ? " line, " : " lines, ")
            << cost::FormatFixed(s.hours, 1) << " h, " << cost::FormatUsd(s.invoiced_usd)
            << " invoiced\n";
  std::vector<std::pair<std::string, std::string>> facts;
  if (s.list_usd > 0) {
    facts.push_back({"at public on-demand prices",
                     cost::FormatUsd(s.list_usd) + " for the lines the catalog prices (" +
                         cost::FormatUsd(s.priced_usd) + " invoiced): markup " + pct(s.markup())});
  }
  if (s.reseller_cost_usd > 0) {
    facts.push_back({"at the reseller's own cost", cost::FormatUsd(s.reseller_cost_usd) +
                                                       " in the bill for the lines it covers (" +
                                                       cost::FormatUsd(s.costed_usd) +
                                                       " invoiced): margin " + pct(s.margin())});
  }
  facts.push_back({"within the markup threshold",
                   std::to_string(s.within_threshold_lines) +
                       (s.within_threshold_lines == 1 ? " line, " : " lines, ") +
                       cost::FormatUsd(s.within_threshold_usd) + " (not findings)"});
  PrintFacts(facts);
}

void PrintReport(const cost::AuditReport& r, bool rates) {
  std::string formats;
  for (const auto& f : r.formats) {
    if (formats.find(f) == std::string::npos) formats += (formats.empty() ? "" : ", ") + f;
  }
  std::cout << "Audited " << cost::FormatGrouped(static_cast<double>(r.rows)) << " rows in "
            << r.files.size() << (r.files.size() == 1 ? " file" : " files") << " (" << formats
            << "): " << cost::FormatUsd(r.billed_usd) << " billed\n";
  if (r.findings.empty() && r.good_rows == 0 && r.problems.count() > 0) {
    std::cout << "Nothing was checked: no row could be read (below).\n";
  } else if (r.findings.empty()) {
    std::cout << "No findings.\n";
  } else {
    std::cout << r.findings.size() << (r.findings.size() == 1 ? " finding, " : " findings, ")
              << cost::FormatUsd(r.usd_at_stake()) << " at stake\n";
  }
  int n = 0;
  for (const auto& f : r.findings) {
    std::cout << "\n"
              << ++n << ". " << cost::CheckName(f.check) << "  " << f.subject << "  ("
              << cost::FormatUsd(f.usd_at_stake) << " at stake)\n   " << f.message << "\n";
    PrintEvidence(f);
  }
  if (r.invoice.present) PrintInvoiceSummary(r.invoice);
  if (rates && !r.type_rates.empty()) {
    std::cout << "\nEffective on-demand rates\n";
    Table t({"instance type", "region", "hours", "billed", "per hour"});
    for (const auto& x : r.type_rates) {
      t.Add({x.instance_type, x.region, cost::FormatFixed(x.hours, 1), cost::FormatUsd(x.usd),
             x.hours > 0 ? "$" + cost::FormatFixed(x.usd / x.hours, 4) : "-"});
    }
    t.Print(std::cout);
  }
  if (!r.skipped.empty()) {
    std::cout << "\nNot checked:\n";
    for (const auto& s : r.skipped) std::cout << "  " << s << "\n";
  }
  if (r.problems.count() > 0) {
    std::cout << "\nMalformed input: " << r.problems.count()
              << (r.problems.count() == 1 ? " problem" : " problems")
              << "; those rows were left out of the checks:\n";
    for (const auto& p : r.problems.kept()) {
      std::cout << "  " << cost::Where(p.file, p.line) << ": "
                << (p.column.empty() ? "" : p.column + ": ") << p.message << "\n";
    }
    if (r.problems.count() > static_cast<int64_t>(r.problems.kept().size())) {
      std::cout << "  ... and "
                << r.problems.count() - static_cast<int64_t>(r.problems.kept().size()) << " more\n";
    }
  }
}

Result<std::vector<cost::Check>> ParseAnomalies(const std::string& list) {
  if (list.empty() || list == "none") return std::vector<cost::Check>();
  if (list == "all") return cost::AllChecks();
  std::vector<cost::Check> out;
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    cost::Check c;
    if (!cost::ParseCheckName(name, &c)) {
      std::string known;
      for (auto k : cost::AllChecks())
        known += std::string(known.empty() ? "" : ", ") + std::string(cost::CheckName(k));
      return InvalidArgument("--anomalies: unknown anomaly '" + name + "'; known: all, none, " +
                             known);
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

void AddBillCommands(CLI::App* cost_cmd, client::Connection& conn, int& exit_code) {
  {
    auto f = std::make_shared<AuditFlags>();
    auto* cmd = cost_cmd->add_subcommand(
        "audit",
        "Audit an AWS Cost and Usage Report (legacy or CUR 2.0 CSV, plain or gzip, a "
        "file or a folder of parts) against the catalog. Exit code 0: no finding, 1: "
        "findings, 2: bad input");
    cmd->add_option("bill", f->bill, "CUR file (.csv or .csv.gz) or folder of parts")->required();
    cmd->add_option("--invoice", f->options.invoice_path,
                    "Reseller invoice CSV to check against the bill (columns in docs/cost.md)");
    cmd->add_option("--instances", f->options.inventory_paths,
                    "aws ec2 describe-instances / describe-volumes / describe-snapshots JSON "
                    "(repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--metering", f->options.metering_path,
                    "tensorfleet's own metering, the JSON of `tensorfleet cost report --by node "
                    "--json` (nodes labelled instance_id=i-...), for billed-not-running and "
                    "billed-idle");
    cmd->add_option("--threshold", f->options.threshold,
                    "Relative excess over the catalog price that is a finding (default 0.15)");
    cmd->add_option("--markup-threshold", f->options.markup_threshold,
                    "An invoice rate above the public on-demand price by more than this is an "
                    "invoice-markup finding (default 0.15)");
    cmd->add_option("--cluster-tag", f->options.cluster_tag,
                    "User tag that names an instance's cluster (default: cluster)");
    cmd->add_option("--snapshot-max-age-days", f->options.snapshot_max_age_days,
                    "Snapshots older than this are findings (default 90)");
    cmd->add_option("--evidence-rows", f->options.evidence_rows,
                    "Rows shown per finding (all are counted; default 10)");
    cmd->add_flag("--rates", f->rates, "Also print the effective on-demand rate per instance type");
    AddCatalogFlags(cmd, &f->catalog);
    AddJsonFlag(cmd, conn);
    RunExitCode(cmd, exit_code, [&conn, f]() -> Result<int> {
      // Bad input exits 2, as 1 means findings: its error is printed here.
      auto catalog = cost::LoadCatalog(f->catalog);
      if (!catalog.ok()) {
        Fail(catalog.status());
        return 2;
      }
      auto report = cost::RunAudit(f->bill, f->options, *catalog);
      if (!report.ok()) {
        Fail(report.status());
        return 2;
      }
      if (conn.json) {
        PrintJson(ReportJson(*report));
      } else {
        PrintReport(*report, f->rates);
      }
      return report->ExitCode();
    });
  }

  {
    auto f = std::make_shared<GenerateBillFlags>();
    auto* cmd =
        cost_cmd->add_subcommand("generate-bill",
                                 "Write a synthetic AWS bill priced from the catalog, with known "
                                 "anomalies planted (for tests, demos and benchmarks)");
    cmd->add_option("--rows", f->options.rows, "Bill rows (default 10000)");
    cmd->add_option("--format", f->format, "legacy (lineItem/UsageType headers) or cur2")
        ->check(CLI::IsMember({"legacy", "cur2"}));
    cmd->add_option("--out", f->out, "Bill file to write")->required();
    cmd->add_flag("--gzip", f->gzip, "Compress the bill with gzip");
    cmd->add_option("--anomalies", f->anomalies,
                    "Comma-separated anomalies to plant, 'all' or 'none' (default none): "
                    "rate-above-catalog, stale-price, spot-resold, hours-exceed-clock, "
                    "cost-mismatch, cluster-zones, cluster-no-efa, cluster-no-placement-group, "
                    "unattached-volume, old-snapshot, billed-not-running, billed-idle");
    cmd->add_option("--malformed", f->options.malformed,
                    "Rows with a malformed number, date or field count (default 0)");
    cmd->add_option("--seed", f->options.seed, "Seed for ids and choices (default 1)");
    cmd->add_option("--period", f->options.period, "Billing month, YYYY-MM (default 2026-08)");
    cmd->add_option("--invoice", f->invoice_path, "Also write the reseller invoice CSV here");
    cmd->add_option("--instances", f->inventory_path,
                    "Also write the EC2 inventory (describe-* JSON) here");
    cmd->add_option("--metering", f->metering_path,
                    "Also write tensorfleet's metering report (cost report --by node --json) here");
    AddCatalogFlags(cmd, &f->catalog);
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(cost::Catalog catalog, cost::LoadCatalog(f->catalog));
      cost::GeneratorOptions options = f->options;
      TF_ASSIGN_OR_RETURN(options.anomalies, ParseAnomalies(f->anomalies));
      options.cur2 = f->format == "cur2";
      TF_ASSIGN_OR_RETURN(std::unique_ptr<cost::ByteSink> sink,
                          cost::OpenFileSink(f->out, f->gzip));
      std::ofstream invoice, inventory, metering;
      if (!f->invoice_path.empty()) invoice.open(f->invoice_path);
      if (!f->inventory_path.empty()) inventory.open(f->inventory_path);
      if (!f->metering_path.empty()) metering.open(f->metering_path);
      if ((!f->invoice_path.empty() && !invoice) || (!f->inventory_path.empty() && !inventory) ||
          (!f->metering_path.empty() && !metering)) {
        return Unavailable("cannot create the invoice, inventory or metering file");
      }
      TF_ASSIGN_OR_RETURN(cost::GeneratedBill bill,
                          cost::GenerateBill(options, catalog, sink.get(),
                                             f->invoice_path.empty() ? nullptr : &invoice,
                                             f->inventory_path.empty() ? nullptr : &inventory,
                                             f->metering_path.empty() ? nullptr : &metering));
      TF_RETURN_IF_ERROR(sink->Close());
      if (conn.json) {
        Json j = {{"bill", f->out},
                  {"rows", bill.rows},
                  {"planted", Json::array()},
                  {"malformed_lines", bill.malformed_lines}};
        for (const auto& p : bill.planted) {
          j["planted"].push_back(
              {{"check", std::string(cost::CheckName(p.check))},
               {"subject", p.subject},
               {"lines", p.lines},
               {"usd_at_stake", p.usd_at_stake > 0 ? Json(p.usd_at_stake) : Json(nullptr)}});
        }
        PrintJson(j);
        return OkStatus();
      }
      std::cout << "wrote " << cost::FormatGrouped(static_cast<double>(bill.rows)) << " rows to "
                << f->out << " (" << f->format << (f->gzip ? ", gzip" : "") << ")\n";
      if (!bill.planted.empty()) {
        Table t({"planted anomaly", "subject", "lines"});
        for (const auto& p : bill.planted) {
          std::string lines;
          for (auto l : p.lines) lines += (lines.empty() ? "" : " ") + std::to_string(l);
          t.Add({std::string(cost::CheckName(p.check)), p.subject, lines.empty() ? "-" : lines});
        }
        t.Print(std::cout);
      }
      if (!bill.malformed_lines.empty()) {
        std::cout << "malformed lines:";
        for (auto l : bill.malformed_lines) std::cout << " " << l;
        std::cout << "\n";
      }
      return OkStatus();
    });
  }
}

}  // namespace tf::cli
