// `tensorfleet pool create|ls|describe|scale|delete`: node pools (docs/pools.md).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/cost_flags.h"
#include "cli/table.h"
#include "http/http.h"
#include "jobs/quantities.h"

namespace tf::cli {
namespace {

struct PoolFileFlags {
  std::string spec_path;
};

struct PoolNameFlags {
  std::string name;
};

struct PoolScaleFlags {
  std::string name;
  int min = 0;
  int max = 0;
};

std::string Path(const std::string& name) { return "/v1/pools/" + http::PercentEncode(name); }

// "1 GPU (A10G, 24Gi), 4 CPUs, 16Gi, $1.006/h, spot, zone us-east-1a"
std::string ShapeOf(const Json& m) {
  std::ostringstream out;
  int gpus = m["gpus"].get<int>();
  if (gpus > 0) {
    out << gpus << (gpus == 1 ? " GPU" : " GPUs");
    std::string detail = Cell(m["gpu_model"]);
    if (m["gpu_memory_bytes"].get<int64_t>() > 0) {
      detail += (detail.empty() ? "" : ", ") + jobs::FormatMemory(m["gpu_memory_bytes"]);
    }
    if (!detail.empty()) out << " (" << detail << ")";
    out << ", ";
  }
  int cpus = m["cpus"].get<int>();
  out << cpus << (cpus == 1 ? " CPU" : " CPUs");
  if (m["memory_bytes"].get<int64_t>() > 0) {
    out << ", " << jobs::FormatMemory(m["memory_bytes"]);
  }
  char price[32];
  std::snprintf(price, sizeof price, "$%.4g/h", m["price_per_hour"].get<double>());
  out << ", " << price;
  if (m["spot"].get<bool>()) out << ", spot";
  if (!m["zone"].get<std::string>().empty()) out << ", zone " << Cell(m["zone"]);
  if (!m["placement_group"].get<std::string>().empty()) {
    out << ", placement group " << Cell(m["placement_group"]);
  }
  return out.str();
}

// "1 busy, 1 starting", or "none".
std::string MachineSummary(const Json& machines) {
  std::map<std::string, int> by_state;
  for (const Json& m : machines) ++by_state[Cell(m["state"])];
  std::string out;
  for (const auto& [state, n] : by_state) {
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + state;
  }
  return out.empty() ? "none" : out;
}

void PrintPool(const Json& p) {
  std::cout << "pool " << Cell(p["name"]) << "\n";
  PrintFacts({{"provider", Cell(p["provider"]["type"])},
              {"machine", ShapeOf(p["machine"])},
              {"nodes", MachineSummary(p["machines"]) + " (min " + Cell(p["min"]) + ", max " +
                            Cell(p["max"]) + ")"},
              {"idle timeout", jobs::FormatDuration(p["idle_timeout_ms"])},
              {"start timeout", jobs::FormatDuration(p["start_timeout_ms"])},
              {"created", Moment(p["created_at"])},
              {"updated", Moment(p["updated_at"])}});
  if (!p["machines"].empty()) {
    std::cout << "\n";
    Table t({"machine", "state", "node", "since (UTC)"});
    for (const Json& m : p["machines"]) {
      t.Add({Cell(m["id"]), Cell(m["state"]), Cell(m.value("node_id", Json("-"))),
             Moment(m.value("since", Json()))});
    }
    t.Print(std::cout);
  }
  if (!p["decisions"].empty()) {
    std::cout << "\ndecisions (latest first):\n";
    Table t({"at (UTC)", "what", "why"});
    for (const Json& d : p["decisions"]) t.Add({Moment(d["at"]), Cell(d["what"]), Cell(d["why"])});
    t.Print(std::cout);
  }
}

void PrintPools(const Json& list) {
  if (list.empty()) {
    std::cout << "no pools (create one with: tensorfleet pool create pool.yaml)\n";
    return;
  }
  Table t({"name", "provider", "nodes", "min-max", "machine"});
  for (const Json& p : list) {
    t.Add({Cell(p["name"]), Cell(p["provider"]["type"]), MachineSummary(p["machines"]),
           Cell(p["min"]) + "-" + Cell(p["max"]), ShapeOf(p["machine"])});
  }
  t.Print(std::cout);
}

// Runs `verb` on the API's answer: --json prints it whole, otherwise `print` does.
template <typename Print>
Status Answer(const client::Connection& conn, const Json& r, Print print) {
  if (conn.json) {
    PrintJson(r);
  } else {
    print(r);
  }
  return OkStatus();
}

}  // namespace

void AddPoolCommands(CLI::App& app, client::Connection& conn, int& exit_code) {
  auto* pool = app.add_subcommand(
      "pool", "Node pools: machines of one shape, started when work waits for them (admin)");
  pool->require_subcommand(1);
  pool->footer(
      "A pool is described by a YAML spec (docs/pools.md; examples/pools/). The leader server "
      "starts a pool's machines when jobs wait for capacity its shape provides, and stops a "
      "machine after its node has been idle for the pool's idle_timeout.");
  {
    auto f = std::make_shared<PoolFileFlags>();
    auto* cmd = pool->add_subcommand("create", "Create the pool a spec describes");
    cmd->add_option("spec", f->spec_path, "The pool's YAML spec")->required();
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(std::string text, ReadTextFile(f->spec_path));
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      Json body = {{"spec", text},
                   {"source", std::filesystem::path(f->spec_path).filename().string()}};
      TF_ASSIGN_OR_RETURN(Json r, api.Call("POST", "/v1/pools", body));
      return Answer(conn, r, [](const Json& p) {
        std::cout << "created pool " << Cell(p["name"]) << " (" << Cell(p["min"]) << " to "
                  << Cell(p["max"]) << " nodes of " << ShapeOf(p["machine"]) << ")\n";
      });
    });
  }
  {
    auto* cmd = pool->add_subcommand("ls", "List the pools and their nodes");
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("GET", "/v1/pools"));
      return Answer(conn, r, [](const Json& list) { PrintPools(list["pools"]); });
    });
  }
  {
    auto f = std::make_shared<PoolNameFlags>();
    auto* cmd = pool->add_subcommand(
        "describe", "A pool's shape, its machines, and its latest decisions with their reasons");
    cmd->add_option("name", f->name, "Pool name")->required();
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("GET", Path(f->name)));
      return Answer(conn, r, PrintPool);
    });
  }
  {
    auto f = std::make_shared<PoolScaleFlags>();
    auto* cmd = pool->add_subcommand("scale", "Change how few and how many nodes a pool keeps");
    cmd->add_option("name", f->name, "Pool name")->required();
    cmd->add_option("--min", f->min, "Nodes kept even when idle (0: scale to zero)");
    cmd->add_option("--max", f->max, "Most nodes");
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f, cmd] {
      Json body = Json::object();
      if (cmd->count("--min")) body["min"] = f->min;
      if (cmd->count("--max")) body["max"] = f->max;
      if (body.empty()) return InvalidArgument("give --min, --max or both");
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("POST", Path(f->name) + "/scale", body));
      return Answer(conn, r, [](const Json& p) {
        std::cout << "pool " << Cell(p["name"]) << ": from " << Cell(p["min"]) << " to "
                  << Cell(p["max"]) << " nodes\n";
      });
    });
  }
  {
    auto f = std::make_shared<PoolNameFlags>();
    auto* cmd = pool->add_subcommand(
        "delete", "Delete a pool: its machines stop (their work is interrupted and retried)");
    cmd->add_option("name", f->name, "Pool name")->required();
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("DELETE", Path(f->name)));
      return Answer(conn, r, [&f](const Json&) {
        std::cout << "deleted pool " << f->name << ": its machines stop\n";
      });
    });
  }
}

}  // namespace tf::cli
