// `tensorfleet cost budget ...`: budgets with alerts and actions (docs/cost.md, "Budgets").
// Unlike the other cost verbs these talk to the server.
#include "cli/budget_commands.h"

#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/cost_flags.h"
#include "cli/table.h"
#include "cost/numbers.h"
#include "http/http.h"

namespace tf::cli {
namespace {

// The options of `set` apply only when given (cmd->count), so their defaults never reach the
// server.
struct BudgetSetFlags {
  std::string name;
  double amount = 0;
  std::string period;
  std::string start;
  std::string thresholds;  // percentages, comma-separated
  std::string action;
  std::string webhook;
  bool no_webhook = false;
  std::string project;  // "": the token's own
};

struct BudgetListFlags {
  std::string project;  // "": the token's own
  bool all = false;
};

struct BudgetShowFlags {
  std::string name;
  std::string project;  // "": the token's own
};

struct BudgetDeleteFlags {
  std::string name;
  std::string project;  // "": the token's own
};

struct BudgetAlertsFlags {
  std::string project;  // "": the token's own
  bool all = false;
  int64_t after = 0;  // a sequence number
  int limit = 100;
};

// "?project=x" (or "" for the token's own project), with "&all=true" when asked.
std::string ScopeQuery(const std::string& project, bool all) {
  std::string q;
  if (!project.empty()) q = "project=" + http::PercentEncode(project);
  if (all) q += std::string(q.empty() ? "" : "&") + "all=true";
  return q;
}

std::string Target(const std::string& path, const std::string& query) {
  return query.empty() ? path : path + "?" + query;
}

std::string Usd(const Json& v) { return v.is_number() ? cost::FormatUsd(v.get<double>()) : "-"; }

std::string Pct(const Json& v) {
  return v.is_number() ? cost::FormatFixed(v.get<double>(), 1) + "%" : "-";
}

// "2026-11-01T00:00:00.000Z" -> "2026-11-01".
std::string Day(const Json& v) { return v.is_string() ? v.get<std::string>().substr(0, 10) : "-"; }

std::string Thresholds(const Json& v) {
  std::string out;
  for (const Json& t : v) {
    if (!out.empty()) out += ",";
    double x = t.get<double>();
    out += cost::FormatFixed(x, x == static_cast<double>(static_cast<int64_t>(x)) ? 0 : 1);
  }
  return (out.empty() ? "" : out + ",") + "100";
}

std::string Forecast(const Json& current) {
  if (!current["forecast"].is_number()) return "- (too early)";
  return Usd(current["forecast"]) + " (" + Pct(current["forecast_percent"]) + ")";
}

Result<std::vector<double>> ParseThresholds(const std::string& text) {
  std::vector<double> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    auto v = cost::ParseNumber(item);
    if (!v) {
      return InvalidArgument(
          "--thresholds must be percentages separated by commas such as "
          "50,80,90; '" +
          item + "' is not a number");
    }
    out.push_back(*v);
  }
  return out;
}

void PrintBudget(const Json& b) {
  const Json& c = b["current"];
  std::cout << "budget " << Cell(b["name"]) << " (project " << Cell(b["project"]) << ")\n";
  std::vector<std::pair<std::string, std::string>> facts = {
      {"amount", Usd(b["amount"]) + " per period"},
      {"period", Cell(b["period"]) + (b.contains("start") ? " from " + Cell(b["start"]) : "")},
      {"current period", Day(c["period_start"]) + " to " + Day(c["period_end"]) + " (UTC)"},
      {"spent", Usd(c["spend"]) + " (" + Pct(c["percent"]) + ")"},
      {"forecast", Forecast(c)},
      {"state", Cell(c["state"])},
      {"alerts at", Thresholds(b["thresholds"]) + " percent"},
      {"when exhausted", Cell(b["action"])},
      {"webhook", b["webhook"].is_string() ? b["webhook"].get<std::string>() : "none"},
      {"updated", Moment(b["updated_at"])}};
  PrintFacts(facts);
}

void PrintBudgets(const Json& list, bool show_project) {
  if (list.empty()) {
    std::cout << "no budgets (create one with: tensorfleet cost budget set NAME --amount 500)\n";
    return;
  }
  std::vector<std::string> headers = {"name"};
  if (show_project) headers.push_back("project");
  for (const char* h :
       {"period", "current period", "spent", "amount", "used", "forecast", "action", "state"}) {
    headers.push_back(h);
  }
  Table t(headers);
  for (const Json& b : list) {
    const Json& c = b["current"];
    std::vector<std::string> row = {Cell(b["name"])};
    if (show_project) row.push_back(Cell(b["project"]));
    for (std::string cell :
         {Cell(b["period"]), Day(c["period_start"]) + " to " + Day(c["period_end"]),
          Usd(c["spend"]), Usd(b["amount"]), Pct(c["percent"]), Forecast(c), Cell(b["action"]),
          Cell(c["state"])}) {
      row.push_back(std::move(cell));
    }
    t.Add(std::move(row));
  }
  t.Print(std::cout);
}

std::string Delivery(const Json& d) {
  std::string state = Cell(d["state"]);
  if (state == "none") return "-";
  if (state == "pending" && d["attempts"].get<int>() > 0) {
    return "retrying (" + std::to_string(d["attempts"].get<int>()) + " failed)";
  }
  return state;
}

void PrintAlerts(const Json& alerts, bool show_project) {
  if (alerts.empty()) {
    std::cout << "no alerts\n";
    return;
  }
  std::vector<std::string> headers = {"seq", "fired (UTC)", "budget"};
  if (show_project) headers.push_back("project");
  for (const char* h : {"kind", "threshold", "spend", "amount", "webhook", "message"}) {
    headers.push_back(h);
  }
  Table t(headers);
  for (const Json& a : alerts) {
    std::vector<std::string> row = {Cell(a["seq"]), Moment(a["fired_at"]), Cell(a["budget"])};
    if (show_project) row.push_back(Cell(a["project"]));
    for (std::string cell : {Cell(a["kind"]), Pct(a["threshold"]), Usd(a["spend"]),
                             Usd(a["amount"]), Delivery(a["delivery"]), Cell(a["message"])}) {
      row.push_back(std::move(cell));
    }
    t.Add(std::move(row));
  }
  t.Print(std::cout);
  for (const Json& a : alerts) {
    const Json& d = a["delivery"];
    if (d["last_error"].is_string()) {
      std::cout << "alert " << Cell(a["seq"]) << ": webhook " << Cell(d["state"])
                << (d["next_attempt_at"].is_string() ? ", next try " + Moment(d["next_attempt_at"])
                                                     : "")
                << ": " << Cell(d["last_error"]) << "\n";
    }
  }
}

}  // namespace

void AddBudgetCommands(CLI::App* cost_cmd, client::Connection& conn, int& exit_code) {
  auto* budget = cost_cmd->add_subcommand(
      "budget",
      "Budgets on the server: a spending limit per project and period, alerts at thresholds "
      "(on actual and forecast spend) and an action when exhausted");
  budget->require_subcommand(1);
  budget->footer(
      "Spend is what the project's jobs cost (see `tensorfleet cost report`). Alerts fire once "
      "per period, kind and threshold; they are listed by `cost budget alerts` and POSTed to "
      "the budget's webhook if it has one.");

  {
    auto f = std::make_shared<BudgetSetFlags>();
    auto* cmd = budget->add_subcommand(
        "set",
        "Create a budget, or change the options given of an existing one (the others are "
        "kept)");
    cmd->add_option("name", f->name, "Budget name, unique in the project (e.g. gpu-monthly)")
        ->required();
    cmd->add_option("--amount", f->amount, "Dollars per period (required for a new budget)");
    cmd->add_option("--period", f->period,
                    "monthly (calendar month, default), weekly (from Monday), daily, or a "
                    "number of days such as 30d; all in UTC");
    cmd->add_option("--start", f->start,
                    "First day (YYYY-MM-DD, UTC) of an N-day period (default: today)");
    cmd->add_option("--thresholds", f->thresholds,
                    "Alert at these percentages of the amount (default 50,80,90); 100 "
                    "(exhausted) is always added");
    cmd->add_option("--action", f->action,
                    "When exhausted: notify (default), refuse-submissions (new jobs of the "
                    "project are refused) or stop-spot (its jobs on spot capacity are "
                    "cancelled)");
    cmd->add_option("--webhook", f->webhook, "POST each alert as JSON to this http:// URL");
    cmd->add_flag("--no-webhook", f->no_webhook, "Remove the budget's webhook");
    cmd->add_option("--project", f->project, "Project (default: your token's; others need admin)");
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f, cmd] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      std::string query = ScopeQuery(f->project, false);
      std::string target = Target("/v1/budgets/" + http::PercentEncode(f->name), query);
      // Start from the budget as it is, if it exists: `set` changes only what it is given.
      Json doc = Json::object();
      auto existing = api.Call("GET", target);
      if (existing.ok()) {
        for (const char* field : {"amount", "period", "start", "thresholds", "action", "webhook"}) {
          if (existing->contains(field) && !(*existing)[field].is_null()) {
            doc[field] = (*existing)[field];
          }
        }
      } else if (existing.status().code() != StatusCode::kNotFound) {
        return existing.status();
      } else if (cmd->count("--amount") == 0) {
        return InvalidArgument("budget '" + f->name + "' does not exist yet: give its --amount");
      }
      if (cmd->count("--amount")) doc["amount"] = f->amount;
      if (cmd->count("--period")) {
        doc["period"] = f->period;
        if (!cmd->count("--start")) doc.erase("start");
      }
      if (cmd->count("--start")) doc["start"] = f->start;
      if (cmd->count("--thresholds")) {
        TF_ASSIGN_OR_RETURN(doc["thresholds"], ParseThresholds(f->thresholds));
      }
      if (cmd->count("--action")) doc["action"] = f->action;
      if (cmd->count("--webhook")) doc["webhook"] = f->webhook;
      if (f->no_webhook) doc.erase("webhook");
      TF_ASSIGN_OR_RETURN(Json r, api.Call("PUT", target, doc));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      std::cout << (existing.ok() ? "updated" : "created") << " budget " << f->name << "\n";
      PrintBudget(r);
      return OkStatus();
    });
  }

  {
    auto f = std::make_shared<BudgetListFlags>();
    auto* cmd = budget->add_subcommand(
        "list", "List budgets with their spend, forecast and state in the current period");
    cmd->add_option("--project", f->project, "Another project's budgets (admin)");
    cmd->add_flag("--all", f->all, "Every project's budgets (admin)");
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r,
                          api.Call("GET", Target("/v1/budgets", ScopeQuery(f->project, f->all))));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      PrintBudgets(r["budgets"], f->all);
      return OkStatus();
    });
  }

  {
    auto f = std::make_shared<BudgetShowFlags>();
    auto* cmd = budget->add_subcommand("show", "Show one budget and where it stands");
    cmd->add_option("name", f->name, "Budget name")->required();
    cmd->add_option("--project", f->project, "Another project's budget (admin)");
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r,
                          api.Call("GET", Target("/v1/budgets/" + http::PercentEncode(f->name),
                                                 ScopeQuery(f->project, false))));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      PrintBudget(r);
      return OkStatus();
    });
  }

  {
    auto f = std::make_shared<BudgetDeleteFlags>();
    auto* cmd = budget->add_subcommand("delete", "Delete a budget and its alerts");
    cmd->add_option("name", f->name, "Budget name")->required();
    cmd->add_option("--project", f->project, "Another project's budget (admin)");
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r,
                          api.Call("DELETE", Target("/v1/budgets/" + http::PercentEncode(f->name),
                                                    ScopeQuery(f->project, false))));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      std::cout << "deleted budget " << f->name << "\n";
      return OkStatus();
    });
  }

  {
    auto f = std::make_shared<BudgetAlertsFlags>();
    auto* cmd = budget->add_subcommand(
        "alerts", "List the alerts budgets fired, oldest first, with their webhook delivery");
    cmd->add_option("--after", f->after, "Only alerts after this sequence number (for polling)");
    cmd->add_option("--limit", f->limit, "At most this many (1-1000, default 100)");
    cmd->add_option("--project", f->project, "Another project's alerts (admin)");
    cmd->add_flag("--all", f->all, "Every project's alerts (admin)");
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      std::string query = ScopeQuery(f->project, f->all);
      query += std::string(query.empty() ? "" : "&") + "after=" + std::to_string(f->after) +
               "&limit=" + std::to_string(f->limit);
      TF_ASSIGN_OR_RETURN(Json r, api.Call("GET", Target("/v1/budgets/alerts", query)));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      PrintAlerts(r["alerts"], f->all);
      return OkStatus();
    });
  }
}

}  // namespace tf::cli
