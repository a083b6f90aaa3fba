#include "cli/cost_report_command.h"

#include <cmath>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/cost_flags.h"
#include "cli/table.h"
#include "cost/numbers.h"
#include "http/url.h"

namespace tf::cli {
namespace {

struct ReportFlags {
  std::string by = "project";
  std::string since, until, project;
  bool csv = false;
  bool lines = false;
};

// Dollars with 2 decimals, 4 below a dollar: "$12.35", "$0.0042".
std::string Money(double usd) { return "$" + cost::FormatFixed(usd, std::fabs(usd) >= 1 ? 2 : 4); }

std::string Hours(double seconds) { return cost::FormatFixed(seconds / 3600.0, 3); }

std::string Number(const Json& v) { return v.is_number() ? v.dump() : Cell(v); }

// A CSV field, quoted when it holds a comma, quote or line break.
std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void PrintCsvRow(const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) std::cout << (i ? "," : "") << CsvField(fields[i]);
  std::cout << "\n";
}

void PrintCsv(const Json& r, bool lines) {
  if (lines) {
    const char* columns[] = {"project",        "job_id",      "job",         "attempt",
                             "node_rank",      "node_id",     "from",        "to",
                             "seconds",        "gpu_seconds", "cpu_seconds", "share",
                             "price_per_hour", "cost",        "spot",        "running"};
    std::vector<std::string> header(std::begin(columns), std::end(columns));
    PrintCsvRow(header);
    for (const Json& l : r["lines"]) {
      std::vector<std::string> row;
      for (const char* c : columns) row.push_back(Number(l[c]));
      PrintCsvRow(row);
    }
    return;
  }
  PrintCsvRow({Cell(r["by"]), "label", "seconds", "gpu_seconds", "cpu_seconds", "cost"});
  auto row = [](const Json& x) {
    PrintCsvRow({Cell(x["key"]), Cell(x["label"]), Number(x["seconds"]), Number(x["gpu_seconds"]),
                 Number(x["cpu_seconds"]), Number(x["cost"])});
  };
  for (const Json& x : r["rows"]) row(x);
  if (r["idle"].is_object()) row(r["idle"]);
}

void PrintTable(const Json& r) {
  std::string by = Cell(r["by"]);
  bool named = by == "job";
  std::cout << "Cost by " << by << ", " << Cell(r["window"]["since"]) << " to "
            << Cell(r["window"]["until"]) << "\n";
  std::vector<std::string> headers = {by};
  if (named) headers.push_back("name");
  for (const char* h : {"hours", "gpu-hours", "cpu-hours", "cost"}) headers.push_back(h);
  Table t(headers);
  auto add = [&](std::vector<std::string> row) {
    if (!named) row.erase(row.begin() + 1);
    t.Add(std::move(row));
  };
  double seconds = 0;
  for (const Json& x : r["rows"]) {
    seconds += x.value("seconds", 0.0);
    add({Cell(x["key"]), Cell(x["label"]), Hours(x.value("seconds", 0.0)),
         Hours(x.value("gpu_seconds", 0.0)), Hours(x.value("cpu_seconds", 0.0)),
         Money(x.value("cost", 0.0))});
  }
  const Json& idle = r["idle"];
  if (idle.is_object()) {
    add({"idle capacity", "", Hours(idle.value("seconds", 0.0)), "", "",
         Money(idle.value("cost", 0.0))});
  }
  const Json& totals = r["totals"];
  add({"total", "", Hours(seconds), Hours(totals.value("gpu_seconds", 0.0)),
       Hours(totals.value("cpu_seconds", 0.0)), Money(totals.value("total_cost", 0.0))});
  t.Print(std::cout);
  std::cout << "burn rate now: " << Money(r.value("burn_rate_per_hour", 0.0)) << " per hour\n";
  if (!idle.is_object())
    std::cout << "(idle capacity is in the whole fleet's report, for admins)\n";
  for (const Json& u : r["unreadable"]) {
    std::cerr << "warning: " << Cell(u["kind"]) << " " << Cell(u["id"])
              << " could not be read and is not counted: " << Cell(u["error"]) << "\n";
  }
}

}  // namespace

void AddCostReportCommand(CLI::App* cost_cmd, client::Connection& conn, int& exit_code) {
  auto flags = std::make_shared<ReportFlags>();
  auto* cmd = cost_cmd->add_subcommand(
      "report",
      "What managed jobs cost, by project, job, node or day, with idle capacity "
      "(needs a server)");
  cmd->add_option("--by", flags->by, "project, job, node or day (UTC)")
      ->check(CLI::IsMember({"project", "job", "node", "day"}));
  cmd->add_option("--since", flags->since,
                  "Start: an RFC 3339 date or time, or epoch ms (default: this month's first day)");
  cmd->add_option("--until", flags->until, "End, not included (default: now)");
  cmd->add_option("--project", flags->project, "Only this project (admin; default: every project)");
  cmd->add_flag("--lines", flags->lines, "With --json or --csv: every rank's line too");
  AddJsonFlag(cmd, conn);
  cmd->add_flag("--csv", flags->csv, "Print CSV instead of a table");
  RunStatus(cmd, exit_code, [&conn, flags] {
    TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
    std::string target = "/v1/cost/report?by=" + http::PercentEncode(flags->by);
    if (!flags->since.empty()) target += "&since=" + http::PercentEncode(flags->since);
    if (!flags->until.empty()) target += "&until=" + http::PercentEncode(flags->until);
    if (!flags->project.empty()) target += "&project=" + http::PercentEncode(flags->project);
    if (flags->lines) target += "&lines=true";
    TF_ASSIGN_OR_RETURN(Json r, api.Call("GET", target));
    if (conn.json) {
      PrintJson(r);
    } else if (flags->csv) {
      PrintCsv(r, flags->lines);
    } else {
      PrintTable(r);
    }
    return OkStatus();
  });
}

}  // namespace tf::cli
