// `tensorfleet queue ...`: create, inspect and use queues.
#include <fstream>
#include <iostream>

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

void AddQueueCommands(CLI::App& app, Connection& conn, int& exit_code) {
  auto* queue = app.add_subcommand("queue", "Durable queues with SQS semantics");
  queue->require_subcommand(1);

  // queue create
  {
    static std::string name;
    static bool fifo = false;
    static SettingsFlags settings;
    auto* cmd = queue->add_subcommand("create", "Create a queue (FIFO queues end in .fifo)");
    cmd->add_option("name", name, "Queue name: letters, digits, - and _, up to 80")->required();
    cmd->add_flag("--fifo", fifo, "Strict order per message group, deduplication");
    settings.Add(cmd);
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      Json body = {{"name", name}};
      if (fifo) body["fifo"] = true;
      settings.Into(body);
      auto q = api->Call("POST", "/v1/queues", body);
      if (!q.ok()) return void(exit_code = Fail(q.status()));
      if (conn.json) return PrintJson(*q);
      std::cout << "created queue " << name << "\n";
    });
  }

  // queue list
  {
    static std::string prefix;
    auto* cmd = queue->add_subcommand("list", "List this project's queues");
    cmd->add_option("--prefix", prefix, "Only queues whose names start with this");
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      auto r = api->Call("GET", "/v1/queues?prefix=" + http::PercentEncode(prefix));
      if (!r.ok()) return void(exit_code = Fail(r.status()));
      if (conn.json) return PrintJson(*r);
      Table t({"name", "type", "visibility", "retention", "dead-letter queue"});
      for (const auto& q : (*r)["queues"]) {
        t.Add({Cell(q["name"]), q["fifo"].get<bool>() ? "fifo" : "standard",
               Cell(q["visibility_timeout_seconds"]) + "s", Cell(q["retention_seconds"]) + "s",
               q["dead_letter_queue"].is_null()
                   ? "-"
                   : Cell(q["dead_letter_queue"]) + " after " + Cell(q["max_receive_count"])});
      }
      t.Print(std::cout);
    });
  }

  // queue send
  {
    static std::string name, file, group, dedup;
    static std::vector<std::string> bodies, attrs;
    static int64_t delay = 0;
    auto* cmd =
        queue->add_subcommand("send", "Send messages (batches of up to 10 are sent together)");
    cmd->add_option("queue", name, "Queue name")->required();
    cmd->add_option("body", bodies, "Message bodies, one message each");
    cmd->add_option("--file", file, "Send each line of FILE as a message ('-' for stdin)");
    auto* o_delay =
        cmd->add_option("--delay", delay, "Seconds before the messages can be received");
    cmd->add_option("--group", group, "FIFO message group");
    cmd->add_option("--dedup-id", dedup, "FIFO deduplication id (single message)");
    cmd->add_option("--attr", attrs, "Message attribute NAME=VALUE (a String), repeatable");
    cmd->callback([&, o_delay] {
      std::vector<std::string> all = bodies;
      if (!file.empty()) {
        std::ifstream f;
        std::istream* in = &std::cin;
        if (file != "-") {
          f.open(file);
          if (!f) return void(exit_code = Fail(InvalidArgument("cannot read " + file)));
          in = &f;
        }
        for (std::string line; std::getline(*in, line);) {
          if (!line.empty()) all.push_back(line);
        }
      }
      if (all.empty())
        return void(exit_code = Fail(InvalidArgument("nothing to send: give bodies or --file")));
      Json attributes = Json::object();
      for (const auto& a : attrs) {
        auto eq = a.find('=');
        if (eq == std::string::npos || eq == 0) {
          return void(exit_code = Fail(InvalidArgument("--attr '" + a + "' is not NAME=VALUE")));
        }
        attributes[a.substr(0, eq)] = {{"type", "String"}, {"string_value", a.substr(eq + 1)}};
      }
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      Json all_results = Json::array();
      for (size_t start = 0; start < all.size(); start += 10) {
        Json messages = Json::array();
        std::vector<std::string> labels;
        for (size_t i = start; i < all.size() && i < start + 10; ++i) {
          Json m = {{"body", all[i]}};
          if (o_delay->count()) m["delay_seconds"] = delay;
          if (!group.empty()) m["group_id"] = group;
          if (!dedup.empty()) m["deduplication_id"] = dedup;
          if (!attributes.empty()) m["attributes"] = attributes;
          messages.push_back(m);
          labels.push_back("message " + std::to_string(i + 1));
        }
        auto r = api->Call("POST", QueuePath(name) + "/messages", {{"messages", messages}});
        if (!r.ok()) return void(exit_code = Fail(r.status()));
        exit_code = std::max(exit_code, ReportBatch((*r)["results"], labels, "sending"));
        for (auto& x : (*r)["results"]) all_results.push_back(x);
      }
      if (conn.json) return PrintJson({{"results", all_results}});
      Table t({"message id", "sequence", "note"});
      for (const auto& x : all_results) {
        if (!x.value("ok", false)) continue;
        t.Add({Cell(x["message_id"]), Cell(x["sequence"]),
               x.value("duplicate", false) ? "duplicate: not enqueued again" : ""});
      }
      t.Print(std::cout);
    });
  }

  // queue receive
  {
    static std::string name;
    static int64_t max = 1, wait = 0, visibility = 0;
    static bool and_delete = false;
    auto* cmd = queue->add_subcommand("receive", "Receive messages (and optionally delete them)");
    cmd->add_option("queue", name, "Queue name")->required();
    cmd->add_option("--max", max, "Messages to receive at most (1-10)")->capture_default_str();
    auto* o_wait = cmd->add_option("--wait", wait, "Long-poll for up to this many seconds (0-20)");
    auto* o_vis = cmd->add_option("--visibility-timeout", visibility,
                                  "Hide the received messages for this many seconds");
    cmd->add_flag("--delete", and_delete, "Delete each message once received");
    cmd->callback([&, o_wait, o_vis] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      Json body = {{"max_messages", max}};
      if (o_wait->count()) body["wait_seconds"] = wait;
      if (o_vis->count()) body["visibility_timeout_seconds"] = visibility;
      auto r = api->Call("POST", QueuePath(name) + "/receive", body, std::chrono::seconds(90));
      if (!r.ok()) return void(exit_code = Fail(r.status()));
      const Json& messages = (*r)["messages"];
      if (and_delete && !messages.empty()) {
        Json handles = Json::array();
        for (const auto& m : messages) handles.push_back(m["receipt_handle"]);
        auto d = api->Call("POST", QueuePath(name) + "/delete", {{"receipt_handles", handles}});
        if (!d.ok()) return void(exit_code = Fail(d.status()));
        exit_code = ReportBatch((*d)["results"], {}, "deleting");
      }
      if (conn.json) return PrintJson(*r);
      if (messages.empty()) {
        std::cout << "no messages\n";
        return;
      }
      Table t({"body", "receives", "receipt handle"});
      for (const auto& m : messages) {
        t.Add({Cell(m["body"]), Cell(m["receive_count"]),
               and_delete ? "(deleted)" : Cell(m["receipt_handle"])});
      }
      t.Print(std::cout);
    });
  }

  // queue delete
  {
    static std::string name;
    static std::vector<std::string> handles;
    auto* cmd = queue->add_subcommand(
        "delete", "Delete received messages by their receipt handles (up to 10)");
    cmd->add_option("queue", name, "Queue name")->required();
    cmd->add_option("receipt-handles", handles, "Receipt handles from `queue receive`")->required();
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      auto r = api->Call("POST", QueuePath(name) + "/delete", {{"receipt_handles", handles}});
      if (!r.ok()) return void(exit_code = Fail(r.status()));
      exit_code = ReportBatch((*r)["results"], handles, "deleting");
      if (conn.json) return PrintJson(*r);
      if (exit_code == 0) std::cout << "deleted " << handles.size() << " message(s)\n";
    });
  }

  // queue remove
  {
    static std::string name;
    auto* cmd = queue->add_subcommand("remove", "Delete a queue and every message in it");
    cmd->add_option("queue", name, "Queue name")->required();
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      auto r = api->Call("DELETE", QueuePath(name));
      if (!r.ok()) return void(exit_code = Fail(r.status()));
      if (conn.json) return PrintJson(*r);
      std::cout << "removed queue " << name << "\n";
    });
  }

  // queue purge
  {
    static std::string name;
    auto* cmd = queue->add_subcommand("purge", "Delete every message in a queue");
    cmd->add_option("queue", name, "Queue name")->required();
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      auto r = api->Call("POST", QueuePath(name) + "/purge", Json::object());
      if (!r.ok()) return void(exit_code = Fail(r.status()));
      if (conn.json) return PrintJson(*r);
      std::cout << "purged " << (*r)["purged"] << " message(s) from " << name << "\n";
    });
  }

  // queue attributes
  {
    static std::string name;
    static SettingsFlags settings;
    auto* cmd = queue->add_subcommand(
        "attributes", "Show a queue's settings and message counts, or change settings");
    cmd->add_option("queue", name, "Queue name")->required();
    settings.Add(cmd);
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      if (settings.Any()) {
        Json body = Json::object();
        settings.Into(body);
        auto u = api->Call("PATCH", QueuePath(name), body);
        if (!u.ok()) return void(exit_code = Fail(u.status()));
      }
      auto q = api->Call("GET", QueuePath(name));
      if (!q.ok()) return void(exit_code = Fail(q.status()));
      if (conn.json) return PrintJson(*q);
      PrintQueue(*q);
    });
  }

  // queue redrive
  {
    static std::string name, to;
    static int64_t max = 0;
    auto* cmd = queue->add_subcommand(
        "redrive", "Move messages out of a dead-letter queue, back to where they came from");
    cmd->add_option("dead-letter-queue", name, "The dead-letter queue")->required();
    cmd->add_option("--to", to, "Send them here instead of to their source queues");
    cmd->add_option("--max", max, "Move at most this many (default: all)");
    cmd->callback([&] {
      auto api = ApiClient::Connect(conn);
      if (!api.ok()) return void(exit_code = Fail(api.status()));
      Json body = {{"max_messages", max}};
      if (!to.empty()) body["to"] = to;
      auto r = api->Call("POST", QueuePath(name) + "/redrive", body);
      if (!r.ok()) return void(exit_code = Fail(r.status()));
      if (conn.json) return PrintJson(*r);
      std::cout << "moved " << (*r)["moved"] << " message(s) out of " << name << "\n";
    });
  }
}

}  // namespace tf::cli
