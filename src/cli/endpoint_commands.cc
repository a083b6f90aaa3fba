// `tensorfleet endpoint up|ls|describe|logs|scale|down`: inference endpoints (docs/endpoints.md).
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "cli/cost_flags.h"
#include "cli/table.h"
#include "http/http.h"
#include "jobs/quantities.h"

namespace tf::cli {
namespace {

struct EndpointUpFlags {
  std::string spec_path;
};

struct EndpointListFlags {
  bool all = false;
};

struct EndpointNameFlags {
  std::string name;
};

struct EndpointLogsFlags {
  std::string name;
  std::string replica;  // an id, or a position as describe lists them (1 = the first)
  bool follow = false;
};

struct EndpointScaleFlags {
  std::string name;
  int min = 0;
  int max = 0;
};

std::string Path(const std::string& name) { return "/v1/endpoints/" + http::PercentEncode(name); }

int CountOf(const Json& counts, const char* state) {
  return counts.contains(state) ? counts[state].get<int>() : 0;
}

// "2 ready, 1 starting, 1 warm", or "none".
std::string ReplicaSummary(const Json& counts) {
  std::string out;
  for (const auto& [state, n] : counts.items()) {
    if (!out.empty()) out += ", ";
    out += std::to_string(n.get<int>()) + " " + state;
  }
  return out.empty() ? "none" : out;
}

std::string ModelOf(const Json& spec) {
  const Json& m = spec["model"];
  std::string kind = Cell(m["kind"]);
  return kind == "job" ? "job " + Cell(m["location"]) + " (its output/model)" : Cell(m["location"]);
}

std::string EngineOf(const Json& spec) {
  const Json& e = spec["engine"];
  if (Cell(e["kind"]) == "command") {
    std::string argv;
    for (const Json& a : e["command"]) argv += (argv.empty() ? "" : " ") + a.get<std::string>();
    return "command: " + argv;
  }
  return "builtin (quantize " + Cell(e["quantize"]) + ", max batch " + Cell(e["max_batch"]) + ")";
}

// 300000 -> "5m", as specs write durations.
std::string Seconds(const Json& ms) {
  return ms.is_number_integer() ? jobs::FormatDuration(ms.get<int64_t>()) : "-";
}

std::string AutoscalingOf(const Json& spec) {
  const Json& a = spec["autoscaling"];
  std::string metric = Cell(a["metric"]) == "queue_depth" ? "queue depth" : "ongoing requests";
  return "target " + Cell(a["target"]) + " " + metric + " per replica; up after " +
         Seconds(a["upscale_delay_ms"]) + ", down after " + Seconds(a["downscale_delay_ms"]) +
         ", to zero after " + Seconds(a["scale_to_zero_after_ms"]) + " idle";
}

// "12.3" with `decimals` places.
std::string Fixed(const Json& v, int decimals) {
  if (!v.is_number()) return "-";
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << v.get<double>();
  return out.str();
}

// describe's traffic lines: what the gateway saw lately, and what the replicas cost.
std::vector<std::pair<std::string, std::string>> TrafficFacts(const Json& t) {
  if (!t.is_object()) return {};
  const Json& l = t["latency_ms"];
  std::string cost =
      "$" + Fixed(t["replica_cost_usd"], 4) + " for the replicas over the same minutes";
  if (t["cost_per_million_tokens_usd"].is_number()) {
    cost += " ($" + Fixed(t["cost_per_million_tokens_usd"], 2) + " per million tokens)";
  }
  const int servers = t.value("servers", 0);
  // Other servers publish what they answered every few seconds (endpoints/shared_traffic.h).
  const std::string through = servers > 1
                                  ? " through " + std::to_string(servers) +
                                        " servers' gateways (the others' up to about 6 s behind)"
                                  : " through the gateway";
  return {{"traffic", Cell(t["requests"]) + " requests (" + Fixed(t["requests_per_second"], 2) +
                          "/s), " + Cell(t["errors"]) + " failed, in the last " +
                          Seconds(t["window_seconds"].get<int64_t>() * 1000) + through},
          {"latency", "p50 " + Fixed(l["p50"], 1) + " ms, p90 " + Fixed(l["p90"], 1) + " ms, p99 " +
                          Fixed(l["p99"], 1) + " ms; first token p50 " +
                          Fixed(t["first_byte_ms_p50"], 1) + " ms"},
          {"tokens", Cell(t["completion_tokens"]) + " generated (" +
                         Fixed(t["tokens_per_second"], 1) + "/s)"},
          {"cost", cost}};
}

void PrintEndpoint(const Json& e) {
  const Json& spec = e["spec"];
  std::cout << "endpoint " << Cell(e["name"]) << " (project " << Cell(e["project"]) << ")\n";
  std::vector<std::pair<std::string, std::string>> facts = {
      {"state", Cell(e["state"])},
      {"model", ModelOf(spec)},
      {"engine", EngineOf(spec)},
      {"generation", Cell(e["generation"])},
      {"replicas", ReplicaSummary(e["replica_counts"]) + " (min " + Cell(spec["replicas"]["min"]) +
                       ", max " + Cell(spec["replicas"]["max"]) + ", warm pool " +
                       Cell(spec["warm_pool"]) + ")"},
      {"autoscaling", AutoscalingOf(spec)},
      {"queue", "up to " + Cell(spec["max_queue"]) + " requests, each waiting at most " +
                    Seconds(spec["queue_timeout_ms"])},
      {"spot", Cell(spec["spot"])},
      {"created", Moment(e["created_at"])},
      {"updated", Moment(e["updated_at"])}};
  for (auto& fact : TrafficFacts(e["traffic"])) facts.push_back(std::move(fact));
  PrintFacts(facts);
  if (!e["replicas"].empty()) {
    std::cout << "\n";
    Table t({"#", "replica", "generation", "state", "job", "node", "address", "since (UTC)"});
    int position = 0;
    for (const Json& r : e["replicas"]) {
      std::string state = Cell(r["state"]);
      if (r.value("node_draining", false)) state += " (node draining)";
      t.Add({std::to_string(++position), Cell(r["id"]), Cell(r["generation"]), state,
             Cell(r["job_id"]), Cell(r["node_id"]), Cell(r["address"]), Moment(r["since"])});
    }
    t.Print(std::cout);
  }
  if (!e["scaling"].empty()) {
    std::cout << "\nscaling decisions (latest last):\n";
    Table t({"at (UTC)", "serving", "warm", "reason"});
    for (const Json& s : e["scaling"]) {
      t.Add({Moment(s["at"]), Cell(s["serving"]), Cell(s["warm"]), Cell(s["reason"])});
    }
    t.Print(std::cout);
  }
}

// The replica `which` names (its id, or its position in describe's list, from 1), or by default
// the first ready one, else the first; kNotFound saying what there is.
Result<Json> PickReplica(const Json& endpoint, const std::string& which) {
  const Json& replicas = endpoint["replicas"];
  const std::string name = Cell(endpoint["name"]);
  if (replicas.empty()) {
    return NotFound("endpoint " + name +
                    " has no replica now (the logs of one that has gone are its job's: "
                    "tensorfleet ps --all, then tensorfleet logs JOB)");
  }
  if (which.empty()) {
    for (const Json& r : replicas) {
      if (r["state"] == "ready") return r;
    }
    return replicas[0];
  }
  std::string ids;
  for (size_t i = 0; i < replicas.size(); ++i) {
    const Json& r = replicas[i];
    if (Cell(r["id"]) == which || std::to_string(i + 1) == which) return r;
    ids += (ids.empty() ? "" : ", ") + std::to_string(i + 1) + " " + Cell(r["id"]);
  }
  return NotFound("endpoint " + name + " has no replica '" + which + "'; it has: " + ids);
}

void PrintEndpoints(const Json& list, bool show_project) {
  if (list.empty()) {
    std::cout << "no endpoints (create one with: tensorfleet endpoint up chat.yaml)\n";
    return;
  }
  std::vector<std::string> headers = {"name"};
  if (show_project) headers.push_back("project");
  for (const char* h : {"state", "ready", "min-max", "generation", "model", "updated (UTC)"}) {
    headers.push_back(h);
  }
  Table t(headers);
  for (const Json& e : list) {
    const Json& spec = e["spec"];
    std::vector<std::string> row = {Cell(e["name"])};
    if (show_project) row.push_back(Cell(e["project"]));
    for (std::string cell :
         {Cell(e["state"]), std::to_string(CountOf(e["replica_counts"], "ready")),
          Cell(spec["replicas"]["min"]) + "-" + Cell(spec["replicas"]["max"]),
          Cell(e["generation"]), ModelOf(spec), Moment(e["updated_at"])}) {
      row.push_back(std::move(cell));
    }
    t.Add(std::move(row));
  }
  t.Print(std::cout);
}

std::string OutcomeLine(const Json& e) {
  std::string outcome = Cell(e["outcome"]);
  std::string name = Cell(e["name"]);
  if (outcome == "created") return "created endpoint " + name;
  if (outcome == "updated") {
    return "updated endpoint " + name + " to generation " + Cell(e["generation"]) +
           ": new replicas replace the old ones, one at a time";
  }
  if (outcome == "rescaled") return "updated endpoint " + name + "'s scaling (replicas kept)";
  return "endpoint " + name + " unchanged";
}

}  // namespace

void AddEndpointCommands(CLI::App& app, client::Connection& conn, int& exit_code) {
  auto* endpoint = app.add_subcommand(
      "endpoint", "Inference endpoints: replicas of a model server behind the gateway, autoscaled");
  endpoint->require_subcommand(1);
  endpoint->footer(
      "An endpoint is described by a YAML spec (docs/endpoints.md; examples/endpoints/). Clients "
      "reach it with any OpenAI client: base URL http://SERVER/openai/v1, a project token as "
      "the API key, and the endpoint's name as the model.");
  {
    auto f = std::make_shared<EndpointUpFlags>();
    auto* cmd = endpoint->add_subcommand(
        "up", "Create the endpoint a spec describes, or update it (new replicas roll in)");
    cmd->add_option("spec", f->spec_path, "The endpoint's YAML spec")->required();
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(std::string text, ReadTextFile(f->spec_path));
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      Json body = {{"spec", text},
                   {"source", std::filesystem::path(f->spec_path).filename().string()}};
      TF_ASSIGN_OR_RETURN(Json r, api.Call("POST", "/v1/endpoints", body));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      std::cout << OutcomeLine(r) << "\n";
      return OkStatus();
    });
  }
  {
    auto f = std::make_shared<EndpointListFlags>();
    auto* cmd = endpoint->add_subcommand("ls", "List the project's endpoints");
    cmd->add_flag("--all", f->all, "Every project's endpoints (admin)");
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r,
                          api.Call("GET", f->all ? "/v1/endpoints?all=true" : "/v1/endpoints"));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      PrintEndpoints(r["endpoints"], f->all);
      return OkStatus();
    });
  }
  {
    auto f = std::make_shared<EndpointNameFlags>();
    auto* cmd = endpoint->add_subcommand(
        "describe", "An endpoint's spec, replicas and latest scaling decisions with their reasons");
    cmd->add_option("name", f->name, "Endpoint name")->required();
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("GET", Path(f->name)));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      PrintEndpoint(r);
      return OkStatus();
    });
  }
  {
    auto f = std::make_shared<EndpointLogsFlags>();
    auto* cmd = endpoint->add_subcommand(
        "logs", "A replica's output (its job's log): the first ready replica unless --replica");
    cmd->add_option("name", f->name, "Endpoint name")->required();
    cmd->add_option("--replica", f->replica,
                    "Replica id, or its position as describe lists them (1 = the first)");
    cmd->add_flag("-f,--follow", f->follow, "Keep printing until the replica stops");
    RunExitCode(cmd, exit_code, [&conn, f]() -> Result<int> {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json e, api.Call("GET", Path(f->name)));
      TF_ASSIGN_OR_RETURN(Json replica, PickReplica(e, f->replica));
      std::string job = Cell(replica["job_id"]);
      if (job.empty() || job == "-") {
        return FailedPrecondition("replica " + Cell(replica["id"]) +
                                  " has no job yet: its start is on the way");
      }
      return PrintJobLogs(conn, job, f->follow, 0, 0, 0);
    });
  }
  {
    auto f = std::make_shared<EndpointScaleFlags>();
    auto* cmd = endpoint->add_subcommand(
        "scale", "Change an endpoint's replica bounds (the autoscaler moves within them)");
    cmd->add_option("name", f->name, "Endpoint name")->required();
    cmd->add_option("--min", f->min, "Fewest replicas (0: scale to zero when idle)");
    cmd->add_option("--max", f->max, "Most replicas");
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f, cmd] {
      Json body = Json::object();
      if (cmd->count("--min")) body["min"] = f->min;
      if (cmd->count("--max")) body["max"] = f->max;
      if (body.empty()) return InvalidArgument("give --min, --max or both");
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("POST", Path(f->name) + "/scale", body));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      const Json& replicas = r["spec"]["replicas"];
      std::cout << "endpoint " << f->name << ": replicas from " << Cell(replicas["min"]) << " to "
                << Cell(replicas["max"]) << "\n";
      return OkStatus();
    });
  }
  {
    auto f = std::make_shared<EndpointNameFlags>();
    auto* cmd = endpoint->add_subcommand(
        "down", "Delete an endpoint: routing stops at once, its replicas drain and stop");
    cmd->add_option("name", f->name, "Endpoint name")->required();
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("DELETE", Path(f->name)));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      std::cout << (r.value("removed", false)
                        ? "deleted endpoint " + f->name
                        : "endpoint " + f->name + " is being deleted: its replicas drain first")
                << "\n";
      return OkStatus();
    });
  }
}

}  // namespace tf::cli
