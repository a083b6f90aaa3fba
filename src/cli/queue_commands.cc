// `tensorfleet queue ...`: create, inspect and use queues.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>

#include "base/status.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "http/http.h"

namespace tf::cli {
namespace {

std::string QueuePath(const std::string& name) { return "/v1/queues/" + http::PercentEncode(name); }

// Flags shared by `queue create` and `queue attributes`.
struct SettingsFlags {
  int64_t visibility = 0, retention = 0, delay = 0, wait = 0, max_bytes = 0, max_receives = 0;
  std::string dead_letter_queue;
  bool content_dedup = false;
  CLI::Option *o_visibility, *o_retention, *o_delay, *o_wait, *o_max_bytes, *o_max_receives, *o_dlq,
      *o_content_dedup;

  void Add(CLI::App* cmd) {
    o_visibility = cmd->add_option("--visibility-timeout", visibility,
                                   "Seconds a received message stays hidden (0-43200, default 30)");
    o_retention =
        cmd->add_option("--retention", retention,
                        "Seconds a message is kept (60-1209600, default 345600 = 4 days)");
    o_delay = cmd->add_option("--delay", delay, "Seconds new messages stay hidden (0-900)");
    o_wait = cmd->add_option("--receive-wait", wait, "Default long-poll wait in seconds (0-20)");
    o_max_bytes = cmd->add_option("--max-message-bytes", max_bytes,
                                  "Largest message accepted (1024-1048576, default 262144)");
    o_dlq = cmd->add_option("--dead-letter-queue", dead_letter_queue,
                            "Queue that takes messages received too often ('' to remove)");
    o_max_receives = cmd->add_option("--max-receive-count", max_receives,
                                     "Receives before a message moves to the dead-letter queue");
    o_content_dedup = cmd->add_flag("--content-based-dedup", content_dedup,
                                    "FIFO: use the body's SHA-256 as the deduplication id");
  }

  void Into(Json& body) const {
    if (o_visibility->count()) body["visibility_timeout_seconds"] = visibility;
    if (o_retention->count()) body["retention_seconds"] = retention;
    if (o_delay->count()) body["delay_seconds"] = delay;
    if (o_wait->count()) body["receive_wait_seconds"] = wait;
    if (o_max_bytes->count()) body["max_message_bytes"] = max_bytes;
    if (o_dlq->count()) body["dead_letter_queue"] = dead_letter_queue;
    if (o_max_receives->count()) body["max_receive_count"] = max_receives;
    if (o_content_dedup->count()) body["content_based_deduplication"] = content_dedup;
  }
  bool Any() const {
    for (auto* o : {o_visibility, o_retention, o_delay, o_wait, o_max_bytes, o_dlq, o_max_receives,
                    o_content_dedup}) {
      if (o->count()) return true;
    }
    return false;
  }
};

void PrintQueue(const Json& q) {
  Table t({"attribute", "value"});
  for (auto it = q.begin(); it != q.end(); ++it) {
    if (it.key() == "messages") continue;
    t.Add({it.key(), Cell(*it)});
  }
  if (q.contains("messages")) {
    for (auto it = q["messages"].begin(); it != q["messages"].end(); ++it) {
      t.Add({"messages." + it.key(), Cell(*it)});
    }
  }
  t.Print(std::cout);
}

struct QueueCreateFlags {
  std::string name;
  bool fifo = false;
  SettingsFlags settings;
};

struct QueueListFlags {
  std::string prefix;
};

struct QueueSendFlags {
  std::string name;
  std::vector<std::string> bodies;
  std::string file;   // a message per line; "-" for stdin
  int64_t delay = 0;  // sent only when --delay is given
  std::string group;
  std::string dedup;
  std::vector<std::string> attrs;  // NAME=VALUE
};

struct QueueReceiveFlags {
  std::string name;
  int64_t max = 1;
  int64_t wait = 0;        // sent only when --wait is given
  int64_t visibility = 0;  // sent only when --visibility-timeout is given
  bool and_delete = false;
};

struct QueueDeleteFlags {
  std::string name;
  std::vector<std::string> handles;
};

struct QueueRemoveFlags {
  std::string name;
};

struct QueuePurgeFlags {
  std::string name;
};

struct QueueAttributesFlags {
  std::string name;
  SettingsFlags settings;
};

struct QueueRedriveFlags {
  std::string name;  // the dead-letter queue
  std::string to;    // "": each message's source queue
  int64_t max = 0;   // 0: all
};

// Prints per-entry failures of a batch call; returns 1 if any entry failed.
int ReportBatch(const Json& results, const std::vector<std::string>& labels, const char* verb) {
  int failed = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].value("ok", false)) continue;
    ++failed;
    std::cerr << "error: " << verb << " " << (i < labels.size() ? labels[i] : std::to_string(i))
              << ": " << results[i]["error"].value("message", "") << "\n";
  }
  return failed ? 1 : 0;
}

}  // namespace

void AddQueueCommands(CLI::App& app, client::Connection& conn, int& exit_code) {
  auto* queue = app.add_subcommand("queue", "Durable queues with SQS semantics");
  queue->require_subcommand(1);

  // queue create
  {
    auto f = std::make_shared<QueueCreateFlags>();
    auto* cmd = queue->add_subcommand("create", "Create a queue (FIFO queues end in .fifo)");
    cmd->add_option("name", f->name, "Queue name: letters, digits, - and _, up to 80")->required();
    cmd->add_flag("--fifo", f->fifo, "Strict order per message group, deduplication");
    f->settings.Add(cmd);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      Json body = {{"name", f->name}};
      if (f->fifo) body["fifo"] = true;
      f->settings.Into(body);
      TF_ASSIGN_OR_RETURN(Json q, api.Call("POST", "/v1/queues", body));
      if (conn.json) {
        PrintJson(q);
        return OkStatus();
      }
      std::cout << "created queue " << f->name << "\n";
      return OkStatus();
    });
  }

  // queue list
  {
    auto f = std::make_shared<QueueListFlags>();
    auto* cmd = queue->add_subcommand("list", "List this project's queues");
    cmd->add_option("--prefix", f->prefix, "Only queues whose names start with this");
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r,
                          api.Call("GET", "/v1/queues?prefix=" + http::PercentEncode(f->prefix)));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      Table t({"name", "type", "visibility", "retention", "dead-letter queue"});
      for (const auto& q : r["queues"]) {
        t.Add({Cell(q["name"]), q["fifo"].get<bool>() ? "fifo" : "standard",
               Cell(q["visibility_timeout_seconds"]) + "s", Cell(q["retention_seconds"]) + "s",
               q["dead_letter_queue"].is_null()
                   ? "-"
                   : Cell(q["dead_letter_queue"]) + " after " + Cell(q["max_receive_count"])});
      }
      t.Print(std::cout);
      return OkStatus();
    });
  }

  // queue send: exits 1 when some message was not sent, as for any error.
  {
    auto f = std::make_shared<QueueSendFlags>();
    auto* cmd =
        queue->add_subcommand("send", "Send messages (batches of up to 10 are sent together)");
    cmd->add_option("queue", f->name, "Queue name")->required();
    cmd->add_option("body", f->bodies, "Message bodies, one message each");
    cmd->add_option("--file", f->file, "Send each line of FILE as a message ('-' for stdin)");
    auto* o_delay =
        cmd->add_option("--delay", f->delay, "Seconds before the messages can be received");
    cmd->add_option("--group", f->group, "FIFO message group");
    cmd->add_option("--dedup-id", f->dedup, "FIFO deduplication id (single message)");
    cmd->add_option("--attr", f->attrs, "Message attribute NAME=VALUE (a String), repeatable");
    RunExitCode(cmd, exit_code, [&conn, f, o_delay]() -> Result<int> {
      std::vector<std::string> all = f->bodies;
      if (!f->file.empty()) {
        std::ifstream input;
        std::istream* in = &std::cin;
        if (f->file != "-") {
          input.open(f->file);
          if (!input) return InvalidArgument("cannot read " + f->file);
          in = &input;
        }
        for (std::string line; std::getline(*in, line);) {
          if (!line.empty()) all.push_back(line);
        }
      }
      if (all.empty()) return InvalidArgument("nothing to send: give bodies or --file");
      Json attributes = Json::object();
      for (const auto& a : f->attrs) {
        auto eq = a.find('=');
        if (eq == std::string::npos || eq == 0) {
          return InvalidArgument("--attr '" + a + "' is not NAME=VALUE");
        }
        attributes[a.substr(0, eq)] = {{"type", "String"}, {"string_value", a.substr(eq + 1)}};
      }
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      int code = 0;
      Json all_results = Json::array();
      for (size_t start = 0; start < all.size(); start += 10) {
        Json messages = Json::array();
        std::vector<std::string> labels;
        for (size_t i = start; i < all.size() && i < start + 10; ++i) {
          Json m = {{"body", all[i]}};
          if (o_delay->count()) m["delay_seconds"] = f->delay;
          if (!f->group.empty()) m["group_id"] = f->group;
          if (!f->dedup.empty()) m["deduplication_id"] = f->dedup;
          if (!attributes.empty()) m["attributes"] = attributes;
          messages.push_back(m);
          labels.push_back("message " + std::to_string(i + 1));
        }
        TF_ASSIGN_OR_RETURN(
            Json r, api.Call("POST", QueuePath(f->name) + "/messages", {{"messages", messages}}));
        code = std::max(code, ReportBatch(r["results"], labels, "sending"));
        for (auto& x : r["results"]) all_results.push_back(x);
      }
      if (conn.json) {
        PrintJson({{"results", all_results}});
        return code;
      }
      Table t({"message id", "sequence", "note"});
      for (const auto& x : all_results) {
        if (!x.value("ok", false)) continue;
        t.Add({Cell(x["message_id"]), Cell(x["sequence"]),
               x.value("duplicate", false) ? "duplicate: not enqueued again" : ""});
      }
      t.Print(std::cout);
      return code;
    });
  }

  // queue receive: with --delete, exits 1 when some message was not deleted.
  {
    auto f = std::make_shared<QueueReceiveFlags>();
    auto* cmd = queue->add_subcommand("receive", "Receive messages (and optionally delete them)");
    cmd->add_option("queue", f->name, "Queue name")->required();
    cmd->add_option("--max", f->max, "Messages to receive at most (1-10)")->capture_default_str();
    auto* o_wait =
        cmd->add_option("--wait", f->wait, "Long-poll for up to this many seconds (0-20)");
    auto* o_vis = cmd->add_option("--visibility-timeout", f->visibility,
                                  "Hide the received messages for this many seconds");
    cmd->add_flag("--delete", f->and_delete, "Delete each message once received");
    RunExitCode(cmd, exit_code, [&conn, f, o_wait, o_vis]() -> Result<int> {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      Json body = {{"max_messages", f->max}};
      if (o_wait->count()) body["wait_seconds"] = f->wait;
      if (o_vis->count()) body["visibility_timeout_seconds"] = f->visibility;
      TF_ASSIGN_OR_RETURN(Json r, api.Call("POST", QueuePath(f->name) + "/receive", body,
                                           std::chrono::seconds(90)));
      int code = 0;
      const Json& messages = r["messages"];
      if (f->and_delete && !messages.empty()) {
        Json handles = Json::array();
        for (const auto& m : messages) handles.push_back(m["receipt_handle"]);
        TF_ASSIGN_OR_RETURN(Json d, api.Call("POST", QueuePath(f->name) + "/delete",
                                             {{"receipt_handles", handles}}));
        code = ReportBatch(d["results"], {}, "deleting");
      }
      if (conn.json) {
        PrintJson(r);
        return code;
      }
      if (messages.empty()) {
        std::cout << "no messages\n";
        return code;
      }
      Table t({"body", "receives", "receipt handle"});
      for (const auto& m : messages) {
        t.Add({Cell(m["body"]), Cell(m["receive_count"]),
               f->and_delete ? "(deleted)" : Cell(m["receipt_handle"])});
      }
      t.Print(std::cout);
      return code;
    });
  }

  // queue delete: exits 1 when some message was not deleted.
  {
    auto f = std::make_shared<QueueDeleteFlags>();
    auto* cmd = queue->add_subcommand(
        "delete", "Delete received messages by their receipt handles (up to 10)");
    cmd->add_option("queue", f->name, "Queue name")->required();
    cmd->add_option("receipt-handles", f->handles, "Receipt handles from `queue receive`")
        ->required();
    RunExitCode(cmd, exit_code, [&conn, f]() -> Result<int> {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("POST", QueuePath(f->name) + "/delete",
                                           {{"receipt_handles", f->handles}}));
      int code = ReportBatch(r["results"], f->handles, "deleting");
      if (conn.json) {
        PrintJson(r);
        return code;
      }
      if (code == 0) std::cout << "deleted " << f->handles.size() << " message(s)\n";
      return code;
    });
  }

  // queue remove
  {
    auto f = std::make_shared<QueueRemoveFlags>();
    auto* cmd = queue->add_subcommand("remove", "Delete a queue and every message in it");
    cmd->add_option("queue", f->name, "Queue name")->required();
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("DELETE", QueuePath(f->name)));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      std::cout << "removed queue " << f->name << "\n";
      return OkStatus();
    });
  }

  // queue purge
  {
    auto f = std::make_shared<QueuePurgeFlags>();
    auto* cmd = queue->add_subcommand("purge", "Delete every message in a queue");
    cmd->add_option("queue", f->name, "Queue name")->required();
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      TF_ASSIGN_OR_RETURN(Json r, api.Call("POST", QueuePath(f->name) + "/purge", Json::object()));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      std::cout << "purged " << r["purged"] << " message(s) from " << f->name << "\n";
      return OkStatus();
    });
  }

  // queue attributes
  {
    auto f = std::make_shared<QueueAttributesFlags>();
    auto* cmd = queue->add_subcommand(
        "attributes", "Show a queue's settings and message counts, or change settings");
    cmd->add_option("queue", f->name, "Queue name")->required();
    f->settings.Add(cmd);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      if (f->settings.Any()) {
        Json body = Json::object();
        f->settings.Into(body);
        TF_RETURN_IF_ERROR(api.Call("PATCH", QueuePath(f->name), body).status());
      }
      TF_ASSIGN_OR_RETURN(Json q, api.Call("GET", QueuePath(f->name)));
      if (conn.json) {
        PrintJson(q);
        return OkStatus();
      }
      PrintQueue(q);
      return OkStatus();
    });
  }

  // queue redrive
  {
    auto f = std::make_shared<QueueRedriveFlags>();
    auto* cmd = queue->add_subcommand(
        "redrive", "Move messages out of a dead-letter queue, back to where they came from");
    cmd->add_option("dead-letter-queue", f->name, "The dead-letter queue")->required();
    cmd->add_option("--to", f->to, "Send them here instead of to their source queues");
    cmd->add_option("--max", f->max, "Move at most this many (default: all)");
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
      Json body = {{"max_messages", f->max}};
      if (!f->to.empty()) body["to"] = f->to;
      TF_ASSIGN_OR_RETURN(Json r, api.Call("POST", QueuePath(f->name) + "/redrive", body));
      if (conn.json) {
        PrintJson(r);
        return OkStatus();
      }
      std::cout << "moved " << r["moved"] << " message(s) out of " << f->name << "\n";
      return OkStatus();
    });
  }
}

}  // namespace tf::cli
