// `tensorfleet s3 key create|list|revoke`: access keys for the S3-compatible API.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/table.h"
#include "http/http.h"

namespace tf::cli {
namespace {

struct S3KeyCreateFlags {
  std::string name = "s3";
  std::string project;  // "": the token's own
};

struct S3KeyListFlags {
  std::string project;  // "": the token's own
  bool all = false;
};

struct S3KeyRevokeFlags {
  std::string id;
};

}  // namespace

void AddS3Commands(CLI::App& app, client::Connection& conn, int& exit_code) {
  auto* s3 = app.add_subcommand("s3", "The S3-compatible API: access keys for S3 clients");
  s3->require_subcommand(1);
  auto* key = s3->add_subcommand("key", "Access keys: each reaches one project's buckets");
  key->require_subcommand(1);
  {
    auto f = std::make_shared<S3KeyCreateFlags>();
    auto* cmd =
        key->add_subcommand("create", "Create an access key; its secret is shown only once");
    cmd->add_option("name", f->name, "What the key is for, e.g. backups (default: s3)");
    cmd->add_option("--project", f->project, "Project (default: your token's; others need admin)");
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      Json body = {{"name", f->name}};
      if (!f->project.empty()) body["project"] = f->project;
      TF_ASSIGN_OR_RETURN(Json r, api.Call("POST", "/v1/s3-keys", body));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      std::cout << "created access key " << Cell(r["id"]) << " in project " << Cell(r["project"])
                << "\nsecret (shown once, keep it safe):\n"
                << Cell(r["secret"]) << "\n\nuse it with any S3 client, for example:\n"
                << "  export AWS_ACCESS_KEY_ID=" << Cell(r["id"])
                << " AWS_SECRET_ACCESS_KEY=<secret> AWS_DEFAULT_REGION=us-east-1\n"
                << "  aws --endpoint-url " << api.server() << " s3 ls\n";
      return OkStatus();
    });
  }
  {
    auto f = std::make_shared<S3KeyListFlags>();
    auto* cmd = key->add_subcommand("list", "List access keys (never their secrets)");
    cmd->add_option("--project", f->project, "Another project's keys (admin)");
    cmd->add_flag("--all", f->all, "Every project's keys (admin)");
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      std::string target = "/v1/s3-keys?project=" + http::PercentEncode(f->project);
      if (f->all) target += "&all=true";
      TF_ASSIGN_OR_RETURN(Json r, api.Call("GET", target));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      Table t({"id", "name", "project", "created", "revoked"});
      for (const auto& x : r["keys"]) {
        t.Add({Cell(x["id"]), Cell(x["name"]), Cell(x["project"]), Cell(x["created_at"]),
               Cell(x["revoked_at"])});
      }
      t.Print(std::cout);
      return OkStatus();
    });
  }
  {
    auto f = std::make_shared<S3KeyRevokeFlags>();
    auto* cmd = key->add_subcommand("revoke", "Revoke an access key at once");
    cmd->add_option("id", f->id, "Access key id (TFAK...), from `s3 key list`")->required();
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("DELETE", "/v1/s3-keys/" + http::PercentEncode(f->id)));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      std::cout << "revoked " << f->id << "\n";
      return OkStatus();
    });
  }
}

}  // namespace tf::cli
