// `tensorfleet nodes join-token create|ls|revoke`: the tokens that let new workers register.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/table.h"
#include "http/http.h"
#include "jobs/quantities.h"

namespace tf::cli {
namespace {

struct JoinTokenCreateFlags {
  std::string name;
  std::string ttl = "24h";
  int64_t uses = 0;
};

Status CreateJoinToken(const client::Connection& conn, const JoinTokenCreateFlags& f) {
  auto ttl = jobs::ParseDuration(f.ttl);
  if (!ttl.ok()) return InvalidArgument("--ttl: " + ttl.status().message());
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  TF_ASSIGN_OR_RETURN(
      Json r, api.Call("POST", "/v1/join-tokens",
                       Json{{"name", f.name}, {"ttl_seconds", *ttl / 1000}, {"max_uses", f.uses}}));
  if (conn.json) {
    PrintJson(r);
    return OkStatus();
  }
  std::cout << "created join token " << Cell(r["id"]) << " (" << Cell(r["name"])
            << "), valid until " << Moment(r["expires_at"]) << ", "
            << (f.uses == 0 ? std::string("any number of nodes")
                            : std::to_string(f.uses) + (f.uses == 1 ? " node" : " nodes"))
            << ". Its secret, shown only now:\n"
            << Cell(r["secret"]) << "\n"
            << "It registers new nodes only: start a worker with TENSORFLEET_TOKEN=<secret> "
               "tensorfleet --server URL worker\n";
  return OkStatus();
}

Status ListJoinTokens(const client::Connection& conn) {
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  TF_ASSIGN_OR_RETURN(Json r, api.Call("GET", "/v1/join-tokens"));
  if (conn.json) {
    PrintJson(r);
    return OkStatus();
  }
  Table t({"id", "name", "state", "uses", "created", "expires"});
  for (const Json& x : r["join_tokens"]) {
    int64_t max_uses = x.value("max_uses", int64_t{0});
    std::string uses = std::to_string(x.value("uses", int64_t{0})) + "/" +
                       (max_uses == 0 ? std::string("any") : std::to_string(max_uses));
    t.Add({Cell(x["id"]), Cell(x["name"]), Cell(x["state"]), uses, Moment(x["created_at"]),
           Moment(x["expires_at"])});
  }
  t.Print(std::cout);
  return OkStatus();
}

Status RevokeJoinToken(const client::Connection& conn, const std::string& id) {
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  TF_ASSIGN_OR_RETURN(Json r, api.Call("DELETE", "/v1/join-tokens/" + http::PercentEncode(id)));
  if (conn.json) {
    PrintJson(r);
  } else {
    std::cout << "revoked " << id << ": it registers no more nodes (those it registered stay)\n";
  }
  return OkStatus();
}

}  // namespace

void AddJoinTokenCommands(CLI::App& nodes, client::Connection& conn, int& exit_code) {
  auto* join = nodes.add_subcommand(
      "join-token",
      "Tokens that let a new worker register its node, and nothing else (admin): each node "
      "then acts with a credential of its own");
  join->require_subcommand(1);
  {
    auto f = std::make_shared<JoinTokenCreateFlags>();
    auto* cmd = join->add_subcommand("create", "Create a join token; its secret is shown once");
    cmd->add_option("name", f->name, "What it is for, e.g. rack-2")->required();
    cmd->add_option("--ttl", f->ttl, "How long it registers nodes (1m to 365d)")
        ->capture_default_str();
    cmd->add_option("--uses", f->uses, "How many nodes it registers (0: any number)")
        ->capture_default_str();
    RunStatus(cmd, exit_code, [&conn, f] { return CreateJoinToken(conn, *f); });
  }
  {
    auto* cmd = join->add_subcommand("ls", "List join tokens (never their secrets)");
    cmd->alias("list");
    RunStatus(cmd, exit_code, [&conn] { return ListJoinTokens(conn); });
  }
  {
    auto id = std::make_shared<std::string>();
    auto* cmd = join->add_subcommand("revoke", "Revoke a join token at once");
    cmd->add_option("id", *id, "Join token id (jtk_...), from `nodes join-token ls`")->required();
    RunStatus(cmd, exit_code, [&conn, id] { return RevokeJoinToken(conn, *id); });
  }
}

}  // namespace tf::cli
