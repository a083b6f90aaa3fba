// `tensorfleet token ...`, `tensorfleet project ...` and `tensorfleet status`.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/table.h"
#include "http/http.h"

namespace tf::cli {
namespace {

struct TokenCreateFlags {
  std::string name;
  std::string project;  // "": the token's own
  bool admin = false;
};

struct TokenListFlags {
  std::string project;  // "": the token's own
  bool all = false;
};

struct TokenRevokeFlags {
  std::string id;
};

struct ProjectCreateFlags {
  std::string name;
};

}  // namespace

void AddAuthCommands(CLI::App& app, client::Connection& conn, int& exit_code) {
  // status
  {
    auto* cmd = app.add_subcommand("status", "Show the server you are talking to and who you are");
    RunStatus(cmd, exit_code, [&conn] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("GET", "/v1/status"));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      Table t({"", ""});
      t.Add({"server", api.server()});
      for (const char* k : {"version", "store", "schema_version", "started_at", "uptime_seconds",
                            "project", "token", "admin", "queues"}) {
        t.Add({k, Cell(r[k])});
      }
      t.Print(std::cout);
      return OkStatus();
    });
  }

  auto* token = app.add_subcommand("token", "API tokens: each belongs to one project");
  token->require_subcommand(1);
  {
    auto f = std::make_shared<TokenCreateFlags>();
    auto* cmd = token->add_subcommand("create", "Create a token; its secret is shown only once");
    cmd->add_option("name", f->name, "What the token is for, e.g. ci or alice")->required();
    cmd->add_option("--project", f->project, "Project (default: your token's; others need admin)");
    cmd->add_flag("--admin", f->admin, "May manage projects and every project's tokens");
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      Json body = {{"name", f->name}, {"admin", f->admin}};
      if (!f->project.empty()) body["project"] = f->project;
      TF_ASSIGN_OR_RETURN(Json r, api.Call("POST", "/v1/tokens", body));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      std::cout << "created token " << Cell(r["id"]) << " in project " << Cell(r["project"])
                << "\nsecret (shown once, keep it safe):\n"
                << Cell(r["secret"]) << "\n";
      return OkStatus();
    });
  }
  {
    auto f = std::make_shared<TokenListFlags>();
    auto* cmd = token->add_subcommand("list", "List tokens (never their secrets)");
    cmd->add_option("--project", f->project, "Another project's tokens (admin)");
    cmd->add_flag("--all", f->all, "Every project's tokens (admin)");
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      std::string target = "/v1/tokens?project=" + http::PercentEncode(f->project);
      if (f->all) target += "&all=true";
      TF_ASSIGN_OR_RETURN(Json r, api.Call("GET", target));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      Table t({"id", "name", "project", "admin", "created", "revoked"});
      for (const auto& x : r["tokens"]) {
        t.Add({Cell(x["id"]), Cell(x["name"]), Cell(x["project"]), Cell(x["admin"]),
               Cell(x["created_at"]), Cell(x["revoked_at"])});
      }
      t.Print(std::cout);
      return OkStatus();
    });
  }
  {
    auto f = std::make_shared<TokenRevokeFlags>();
    auto* cmd = token->add_subcommand("revoke", "Revoke a token at once");
    cmd->add_option("id", f->id, "Token id (tok_...), from `token list`")->required();
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("DELETE", "/v1/tokens/" + http::PercentEncode(f->id)));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      std::cout << "revoked " << f->id << "\n";
      return OkStatus();
    });
  }

  auto* project = app.add_subcommand("project", "Projects: the unit of isolation (admin)");
  project->require_subcommand(1);
  {
    auto f = std::make_shared<ProjectCreateFlags>();
    auto* cmd = project->add_subcommand("create", "Create a project");
    cmd->add_option("name", f->name, "Lowercase letters, digits and -")->required();
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("POST", "/v1/projects", {{"name", f->name}}));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      std::cout << "created project " << f->name << " (" << Cell(r["id"]) << ")\n"
                << "give it a token with: tensorfleet token create NAME --project " << f->name
                << "\n";
      return OkStatus();
    });
  }
  {
    auto* cmd = project->add_subcommand("list", "List projects");
    RunStatus(cmd, exit_code, [&conn] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("GET", "/v1/projects"));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      Table t({"name", "id", "created"});
      for (const auto& x : r["projects"]) {
        t.Add({Cell(x["name"]), Cell(x["id"]), Cell(x["created_at"])});
      }
      t.Print(std::cout);
      return OkStatus();
    });
  }
}

}  // namespace tf::cli
