// `tensorfleet sweep start|ls|describe|stop|best`: sweeps whose trials are managed jobs
// (docs/sweeps.md).
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/cost_flags.h"
#include "cli/table.h"
#include "sweeps/sweep_spec.h"

namespace tf::cli {
namespace {

namespace fs = std::filesystem;

struct SweepStartFlags {
  std::string path;
  bool dry_run = false;
};

struct SweepNameFlags {
  std::string name;
  bool all = false;
};

std::string Path(const std::string& name) { return "/v1/sweeps/" + name; }

std::string Value(const Json& v) {
  if (!v.is_number()) return Cell(v);
  std::ostringstream out;
  out << std::setprecision(6) << v.get<double>();
  return out.str();
}

std::string Params(const Json& params) {
  std::string out;
  for (const auto& [k, v] : params.items()) {
    out += (out.empty() ? "" : " ") + k + "=" + (v.is_string() ? v.get<std::string>() : Value(v));
  }
  return out;
}

std::string Dollars(const Json& v) {
  std::ostringstream out;
  out << "$" << std::fixed << std::setprecision(4) << v.get<double>();
  return out.str();
}

std::string Counts(const Json& counts) {
  std::string out;
  for (const auto& [state, n] : counts.items()) {
    out += (out.empty() ? "" : ", ") + std::to_string(n.get<int>()) + " " + state;
  }
  return out.empty() ? "-" : out;
}

// The sweep's file and the job file it names (read relative to it), and the code bundle of
// the trials' jobs, for POST /v1/sweeps.
Result<Json> StartBody(client::ApiClient& api, const std::string& path) {
  TF_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  const fs::path folder = fs::path(path).parent_path();
  Json files = Json::object();
  fs::path job_file = path;  // an inline job's code is relative to the sweep file
  auto read_job = [&](const std::string& job_path) -> Result<std::string> {
    const fs::path p(job_path);
    fs::path full = p.is_absolute() ? p : folder / p;
    TF_ASSIGN_OR_RETURN(std::string job_text, ReadTextFile(full.string()));
    files[job_path] = job_text;
    job_file = full;
    return job_text;
  };
  const std::string source = fs::path(path).filename().string();
  TF_ASSIGN_OR_RETURN(sweeps::SweepSpec spec, sweeps::ParseSweepSpec(text, source, read_job));
  std::string code_key;
  if (!spec.job.code.empty()) {
    TF_ASSIGN_OR_RETURN(code_key, UploadJobCode(api, job_file, spec.job));
  }
  return Json{{"spec", text}, {"source", source}, {"files", files}, {"code_key", code_key}};
}

void PrintSweep(const Json& s) {
  std::cout << "sweep " << s.value("name", "") << " (" << s.value("id", "")
            << "): " << s.value("state", "") << " -- " << s.value("reason", "") << "\n";
  if (s.contains("objective")) {
    const Json& o = s["objective"];
    std::cout << "objective: " << o.value("goal", "") << " " << o.value("metric", "") << " ("
              << o.value("value", "") << ")   strategy: " << s.value("strategy", "")
              << "   trials: " << Counts(s["trial_counts"]) << " of " << s.value("max_trials", 0)
              << ", " << s.value("max_parallel", 0) << " at a time\n";
    if (s.contains("early_stopping")) {
      std::cout << "early stopping: " << s["early_stopping"].value("type", "") << " by "
                << s["early_stopping"].value("resource", "") << "\n";
    }
  }
  std::cout << "spent: " << Dollars(s["spent_usd"]);
  if (s.contains("budget_usd") && !s["budget_usd"].is_null()) {
    std::cout << " of " << Dollars(s["budget_usd"]);
  }
  std::cout << "\n";
  if (s.contains("best")) {
    std::cout << "best: trial " << s["best"].value("trial", 0) << " " << Value(s["best"]["value"])
              << "  " << Params(s["best"]["params"]) << "\n";
  }
  if (s.contains("trials")) {
    std::cout << "\n";
    Table table({"TRIAL", "STATE", "VALUE", "STEP", "RUNG", "COST", "PARAMS", "REASON"});
    for (const Json& t : s["trials"]) {
      table.Add({std::to_string(t.value("number", 0)), t.value("state", ""), Value(t["value"]),
                 Value(t["last_step"]),
                 t.value("rung", -1) < 0 ? "-" : std::to_string(t.value("rung", -1) + 1),
                 Dollars(t["cost_usd"]), Params(t["params"]), t.value("reason", "")});
    }
    table.Print(std::cout);
  }
  if (s.contains("best_so_far") && !s["best_so_far"].empty()) {
    std::cout << "\nbest so far, as trials ended:\n";
    std::cout << "  "
              << "trial  best\n";
    for (const Json& p : s["best_so_far"]) {
      std::cout << "  " << std::setw(5) << p.value("trial", 0) << "  " << Value(p["best"]) << "\n";
    }
  }
  if (s.contains("events") && !s["events"].empty()) {
    std::cout << "\nlatest decisions:\n";
    const Json& events = s["events"];
    size_t from = events.size() > 10 ? events.size() - 10 : 0;
    for (size_t i = from; i < events.size(); ++i) {
      std::cout << "  " << Moment(events[i]["at"]) << "  " << events[i].value("text", "") << "\n";
    }
  }
}

}  // namespace

void AddSweepServerCommands(CLI::App& sweep, client::Connection& conn, int& exit_code) {
  auto st = std::make_shared<SweepStartFlags>();
  auto* start = sweep.add_subcommand(
      "start", "Start a sweep: its trials run as managed jobs (--dry-run: its plan only)");
  start->add_option("file", st->path, "The sweep spec (YAML)")->required();
  start->add_flag("--dry-run", st->dry_run,
                  "Check the spec and print the first suggestions, as `sweep check` does");
  AddJsonFlag(start, conn);
  RunStatus(start, exit_code, [st, &conn]() -> Status {
    if (st->dry_run) {
      TF_ASSIGN_OR_RETURN(Json plan, SweepPlan(st->path, 5));
      if (conn.json) {
        PrintJson(plan);
      } else {
        PrintSweepPlan(plan);
      }
      return OkStatus();
    }
    TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
    TF_ASSIGN_OR_RETURN(Json body, StartBody(api, st->path));
    TF_ASSIGN_OR_RETURN(Json s, api.Call("POST", "/v1/sweeps", body));
    if (conn.json) {
      PrintJson(s);
    } else {
      std::cout << "sweep " << s.value("name", "") << " started (" << s.value("id", "")
                << "): `tensorfleet sweep describe " << s.value("name", "") << "`\n";
    }
    return OkStatus();
  });

  auto ls_flags = std::make_shared<SweepNameFlags>();
  auto* ls = sweep.add_subcommand("ls", "The project's sweeps");
  ls->add_flag("--all", ls_flags->all, "Every project's (an admin token)");
  AddJsonFlag(ls, conn);
  RunStatus(ls, exit_code, [ls_flags, &conn]() -> Status {
    TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
    TF_ASSIGN_OR_RETURN(Json r,
                        api.Call("GET", ls_flags->all ? "/v1/sweeps?all=true" : "/v1/sweeps"));
    if (conn.json) {
      PrintJson(r);
      return OkStatus();
    }
    Table table({"NAME", "STATE", "STRATEGY", "TRIALS", "BEST", "SPENT", "UPDATED"});
    for (const Json& s : r["sweeps"]) {
      table.Add({s.value("name", ""), s.value("state", ""), s.value("strategy", "-"),
                 Counts(s["trial_counts"]), s.contains("best") ? Value(s["best"]["value"]) : "-",
                 Dollars(s["spent_usd"]), Moment(s["updated_at"])});
    }
    table.Print(std::cout);
    return OkStatus();
  });

  auto d = std::make_shared<SweepNameFlags>();
  auto* describe = sweep.add_subcommand(
      "describe",
      "A sweep's leaderboard: trials by the objective, their parameters, state, rung and cost, "
      "the best-so-far curve and the latest decisions");
  describe->add_option("name", d->name, "The sweep")->required();
  AddJsonFlag(describe, conn);
  RunStatus(describe, exit_code, [d, &conn]() -> Status {
    TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
    TF_ASSIGN_OR_RETURN(Json s, api.Call("GET", Path(d->name)));
    if (conn.json) {
      PrintJson(s);
    } else {
      PrintSweep(s);
    }
    return OkStatus();
  });

  auto sp = std::make_shared<SweepNameFlags>();
  auto* stop = sweep.add_subcommand(
      "stop", "Stop a sweep: no new trials, and its running trials stop (checkpoints kept)");
  stop->add_option("name", sp->name, "The sweep")->required();
  AddJsonFlag(stop, conn);
  RunStatus(stop, exit_code, [sp, &conn]() -> Status {
    TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
    TF_ASSIGN_OR_RETURN(Json s, api.Call("POST", Path(sp->name) + "/stop", Json::object()));
    if (conn.json) {
      PrintJson(s);
    } else {
      std::cout << "sweep " << sp->name << " " << s.value("state", "") << "\n";
    }
    return OkStatus();
  });

  auto b = std::make_shared<SweepNameFlags>();
  auto* best = sweep.add_subcommand(
      "best",
      "The best complete trial: its value, hyperparameters and job (whose output holds "
      "its model)");
  best->add_option("name", b->name, "The sweep")->required();
  AddJsonFlag(best, conn);
  RunStatus(best, exit_code, [b, &conn]() -> Status {
    TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
    TF_ASSIGN_OR_RETURN(Json s, api.Call("GET", Path(b->name)));
    if (!s.contains("best")) {
      return NotFound("sweep '" + b->name + "' has no complete trial with a value yet (" +
                      s.value("state", "") + ")");
    }
    if (conn.json) {
      PrintJson(s["best"]);
    } else {
      std::cout << "trial " << s["best"].value("trial", 0) << ": " << Value(s["best"]["value"])
                << "  " << Params(s["best"]["params"]) << "  job " << s["best"].value("job_id", "")
                << "\n";
    }
    return OkStatus();
  });
}

}  // namespace tf::cli
