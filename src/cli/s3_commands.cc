// `tensorfleet s3 key create|list|revoke`: access keys for the S3-compatible API.
#include <iostream>

#include "cli/commands.h"
#include "cli/table.h"
#include "http/http.h"

namespace tf::cli {

void AddS3Commands(CLI::App& app, Connection& conn, int& exit_code) {
  auto* s3 = app.add_subcommand("s3", "The S3-compatible API: access keys for S3 clients");
  s3->require_subcommand(1);
  auto* key = s3->add_subcommand("key", "Access keys: each reaches one project's buckets");
  key->require_subcommand(1);
  {
    static std::string name = "s3", project;
    auto* cmd =
        key->add_subcommand("create", "Create an access key; its secret is shown only once");
    cmd->add_option("name", name, "What the key is for, e.g. backups (default: s3)");
    cmd->add_option("--project", project, "Project (default: your token's; others need admin)");
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      Json body = {{"name", name}};
      if (!project.empty()) body["project"] = project;
      auto r = api->Call("POST", "/v1/s3-keys", body);
      if (!r.ok()) return void(exit_code = Fail(r.status()));
      if (conn.json) return PrintJson(*r);
      std::cout << "created access key " << Cell((*r)["id"]) << " in project "
                << Cell((*r)["project"]) << "\nsecret (shown once, keep it safe):\n"
                << Cell((*r)["secret"]) << "\n\nuse it with any S3 client, for example:\n"
                << "  export AWS_ACCESS_KEY_ID=" << Cell((*r)["id"])
                << " AWS_SECRET_ACCESS_KEY=<secret> AWS_DEFAULT_REGION=us-east-1\n"
                << "  aws --endpoint-url " << api->server() << " s3 ls\n";
    });
  }
  {
    static std::string project;
    static bool all = false;
    auto* cmd = key->add_subcommand("list", "List access keys (never their secrets)");
    cmd->add_option("--project", project, "Another project's keys (admin)");
    cmd->add_flag("--all", all, "Every project's keys (admin)");
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      std::string target = "/v1/s3-keys?project=" + http::PercentEncode(project);
      if (all) target += "&all=true";
      auto r = api->Call("GET", target);
      if (!r.ok()) return void(exit_code = Fail(r.status()));
      if (conn.json) return PrintJson(*r);
      Table t({"id", "name", "project", "created", "revoked"});
      for (const auto& x : (*r)["keys"]) {
        t.Add({Cell(x["id"]), Cell(x["name"]), Cell(x["project"]), Cell(x["created_at"]),
               Cell(x["revoked_at"])});
      }
      t.Print(std::cout);
    });
  }
  {
    static std::string id;
    auto* cmd = key->add_subcommand("revoke", "Revoke an access key at once");
    cmd->add_option("id", id, "Access key id (TFAK...), from `s3 key list`")->required();
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      auto r = api->Call("DELETE", "/v1/s3-keys/" + http::PercentEncode(id));
      if (!r.ok()) return void(exit_code = Fail(r.status()));
      if (conn.json) return PrintJson(*r);
      std::cout << "revoked " << id << "\n";
    });
  }
}

}  // namespace tf::cli
