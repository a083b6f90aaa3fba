// `tensorfleet token ...`, `tensorfleet project ...` and `tensorfleet status`.
#include <iostream>

#include "cli/commands.h"
#include "cli/table.h"
#include "http/http.h"

namespace tf::cli {

void AddAuthCommands(CLI::App& app, Connection& conn, int& exit_code) {
  // status
  {
    auto* cmd = app.add_subcommand("status", "Show the server you are talking to and who you are");
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      auto r = api->Call("GET", "/v1/status");
      if (!r.ok()) return void(exit_code = Fail(r.status()));
      if (conn.json) return PrintJson(*r);
      Table t({"", ""});
      t.Add({"server", api->server()});
      for (const char* k : {"version", "store", "schema_version", "started_at", "uptime_seconds",
                            "project", "token", "admin", "queues"}) {
        t.Add({k, Cell((*r)[k])});
      }
      t.Print(std::cout);
    });
  }

  auto* token = app.add_subcommand("token", "API tokens: each belongs to one project");
  token->require_subcommand(1);
  {
    static std::string name, project;
    static bool admin = false;
    auto* cmd = token->add_subcommand("create", "Create a token; its secret is shown only once");
    cmd->add_option("name", name, "What the token is for, e.g. ci or alice")->required();
    cmd->add_option("--project", project, "Project (default: your token's; others need admin)");
    cmd->add_flag("--admin", admin, "May manage projects and every project's tokens");
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      Json body = {{"name", name}, {"admin", admin}};
      if (!project.empty()) body["project"] = project;
      auto r = api->Call("POST", "/v1/tokens", body);
      if (!r.ok()) return void(exit_code = Fail(r.status()));
      if (conn.json) return PrintJson(*r);
      std::cout << "created token " << Cell((*r)["id"]) << " in project " << Cell((*r)["project"])
                << "\nsecret (shown once, keep it safe):\n"
                << Cell((*r)["secret"]) << "\n";
    });
  }
  {
    static std::string project;
    static bool all = false;
    auto* cmd = token->add_subcommand("list", "List tokens (never their secrets)");
    cmd->add_option("--project", project, "Another project's tokens (admin)");
    cmd->add_flag("--all", all, "Every project's tokens (admin)");
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      std::string target = "/v1/tokens?project=" + http::PercentEncode(project);
      if (all) target += "&all=true";
      auto r = api->Call("GET", target);
      if (!r.ok()) return void(exit_code = Fail(r.status()));
      if (conn.json) return PrintJson(*r);
      Table t({"id", "name", "project", "admin", "created", "revoked"});
      for (const auto& x : (*r)["tokens"]) {
        t.Add({Cell(x["id"]), Cell(x["name"]), Cell(x["project"]), Cell(x["admin"]),
               Cell(x["created_at"]), Cell(x["revoked_at"])});
      }
      t.Print(std::cout);
    });
  }
  {
    static std::string id;
    auto* cmd = token->add_subcommand("revoke", "Revoke a token at once");
    cmd->add_option("id", id, "Token id (tok_...), from `token list`")->required();
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      auto r = api->Call("DELETE", "/v1/tokens/" + http::PercentEncode(id));
      if (!r.ok()) return void(exit_code = Fail(r.status()));
      if (conn.json) return PrintJson(*r);
      std::cout << "revoked " << id << "\n";
    });
  }

  auto* project = app.add_subcommand("project", "Projects: the unit of isolation (admin)");
  project->require_subcommand(1);
  {
    static std::string name;
    auto* cmd = project->add_subcommand("create", "Create a project");
    cmd->add_option("name", name, "Lowercase letters, digits and -")->required();
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      auto r = api->Call("POST", "/v1/projects", {{"name", name}});
      if (!r.ok()) return void(exit_code = Fail(r.status()));
      if (conn.json) return PrintJson(*r);
      std::cout << "created project " << name << " (" << Cell((*r)["id"]) << ")\n"
                << "give it a token with: tensorfleet token create NAME --project " << name << "\n";
    });
  }
  {
    auto* cmd = project->add_subcommand("list", "List projects");
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      auto r = api->Call("GET", "/v1/projects");
      if (!r.ok()) return void(exit_code = Fail(r.status()));
      if (conn.json) return PrintJson(*r);
      Table t({"name", "id", "created"});
      for (const auto& x : (*r)["projects"]) {
        t.Add({Cell(x["name"]), Cell(x["id"]), Cell(x["created_at"])});
      }
      t.Print(std::cout);
    });
  }
}

}  // namespace tf::cli
