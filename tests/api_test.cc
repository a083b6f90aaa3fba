// The native HTTP API end to end: auth, isolation, bad input, SQS behaviour, long polls.
#include <future>
#include <thread>

#include "api_test_util.h"

namespace tf::testing {
namespace {

class ApiTest : public ApiFixture {
 protected:
  void CreateQueue(const Json& body) {
    auto r = Call("POST", "/v1/queues", body);
    ASSERT_EQ(r.status, 201) << r.body.dump();
  }
  Json Send(const std::string& queue, const Json& messages) {
    auto r = Call("POST", "/v1/queues/" + queue + "/messages", Json{{"messages", messages}});
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body;
  }
  Json Receive(const std::string& queue, const Json& body) {
    auto r = Call("POST", "/v1/queues/" + queue + "/receive", body);
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body["messages"];
  }
  Json Counts(const std::string& queue) {
    auto r = Call("GET", "/v1/queues/" + queue);
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body["messages"];
  }
  std::string ErrorCode(const ApiReply& r) { return r.body["error"].value("code", ""); }
  std::string ErrorMessage(const ApiReply& r) { return r.body["error"].value("message", ""); }
};

TEST_F(ApiTest, HealthzIsOpenAndEverythingElseNeedsAToken) {
  EXPECT_EQ(Call("GET", "/healthz", "", "").status, 200);
  for (const char* target : {"/metrics", "/v1/status", "/v1/queues", "/v1/tokens"}) {
    auto none = Call("GET", target, "", "");
    EXPECT_EQ(none.status, 401) << target;
    EXPECT_EQ(ErrorCode(none), "unauthenticated");
    auto wrong = Call("GET", target, "", "tfk_" + std::string(40, '0'));
    EXPECT_EQ(wrong.status, 401) << target;
    EXPECT_EQ(Call("GET", target, "", "not-a-token").status, 401) << target;
  }
  EXPECT_EQ(Call("GET", "/v1/status").status, 200);
  EXPECT_EQ(Call("GET", "/v1/nothing-here").status, 404);
  EXPECT_EQ(Call("PUT", "/v1/queues").status, 405);
}

// RFC 7235: the scheme is case-insensitive; another scheme is no token.
TEST_F(ApiTest, TheBearerSchemeIsReadInAnyCase) {
  auto client = http::Client::Create(app_->url());
  ASSERT_TRUE(client.ok());
  for (std::string scheme : {"Bearer ", "bearer ", "BEARER  "}) {
    auto r = (*client)->Send("GET", "/v1/status", {{"Authorization", scheme + admin_token_}}, "",
                             std::chrono::seconds(10));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 200) << "'" << scheme << "': " << r->body;
  }
  auto basic = (*client)->Send("GET", "/v1/status", {{"Authorization", "Basic " + admin_token_}},
                               "", std::chrono::seconds(10));
  ASSERT_TRUE(basic.ok());
  EXPECT_EQ(basic->status, 401);
}

TEST_F(ApiTest, ATokenSeesOnlyItsOwnProject) {
  ASSERT_EQ(Call("POST", "/v1/projects", Json{{"name", "team-b"}}).status, 201);
  auto issued = Call("POST", "/v1/tokens", Json{{"name", "bob"}, {"project", "team-b"}});
  ASSERT_EQ(issued.status, 201) << issued.body.dump();
  std::string bob = issued.body["secret"];
  CreateQueue({{"name", "secret-work"}});
  Send("secret-work", Json::array({{{"body", "for team default only"}}}));

  EXPECT_EQ(Call("GET", "/v1/queues", "", bob).body["queues"].size(), 0u);
  auto peek = Call("POST", "/v1/queues/secret-work/receive", "{}", bob);
  EXPECT_EQ(peek.status, 404);
  EXPECT_EQ(Call("DELETE", "/v1/queues/secret-work", "", bob).status, 404);
  // Same name in another project is another queue.
  EXPECT_EQ(Call("POST", "/v1/queues", R"({"name":"secret-work"})", bob).status, 201);
  EXPECT_EQ(Counts("secret-work")["visible"], 1);

  // A project token is not an admin.
  EXPECT_EQ(Call("POST", "/v1/projects", R"({"name":"team-c"})", bob).status, 403);
  EXPECT_EQ(Call("GET", "/v1/projects", "", bob).status, 403);
  EXPECT_EQ(Call("POST", "/v1/tokens", R"({"name":"x","admin":true})", bob).status, 403);
  EXPECT_EQ(Call("POST", "/v1/tokens", R"({"name":"x","project":"default"})", bob).status, 403);

  // Revocation takes effect at once.
  std::string bob_id = issued.body["id"];
  EXPECT_EQ(Call("DELETE", "/v1/tokens/" + bob_id).status, 200);
  auto after = Call("GET", "/v1/queues", "", bob);
  EXPECT_EQ(after.status, 401);
  EXPECT_NE(ErrorMessage(after).find("revoked"), std::string::npos);
}

TEST_F(ApiTest, BadInputIsRefusedPreciselyAndChangesNothing) {
  CreateQueue({{"name", "q"}});
  Send("q", Json::array({{{"body", "keep me"}}}));

  struct Case {
    std::string method, target, body;
    int status;
    std::string needle;  // must appear in the error message
  };
  std::vector<Case> cases = {
      {"POST", "/v1/queues", "{\"name\": ", 400, "not valid JSON"},
      {"POST", "/v1/queues", "[1,2]", 400, "JSON object"},
      {"POST", "/v1/queues", R"({"name":"x","delay_seconds":3e777})", 400, "not valid JSON"},
      // Two readers of a body with a key given twice could disagree about it: refused.
      {"POST", "/v1/queues", R"({"name":"x","name":"y"})", 400,
       "has the key 'name' twice in the object at the top level"},
      {"POST", "/v1/queues/q/messages", R"({"messages":[{"body":"a"},{"body":"b","body":"c"}]})",
       400, "has the key 'body' twice in the object at 'messages[1]'"},
      // A body nested past the limit is refused where the limit is reached, not parsed whole.
      {"POST", "/v1/queues", std::string(100000, '['), 400,
       "nests deeper than 64 arrays and objects"},
      {"POST", "/v1/queues", R"({"name":"x","colour":"red"})", 400, "'colour'"},
      {"POST", "/v1/queues", R"({"name":"x","visibility_timeout_seconds":43201})", 400,
       "visibility_timeout_seconds must be between 0 and 43200"},
      {"POST", "/v1/queues", R"({"name":"x","retention_seconds":59})", 400, "retention_seconds"},
      {"POST", "/v1/queues", R"({"name":"x","delay_seconds":"5"})", 400, "an integer"},
      {"POST", "/v1/queues", R"({"name":"bad name!"})", 400, "letters, digits"},
      {"POST", "/v1/queues", R"({"name":"x","dead_letter_queue":"nope","max_receive_count":3})",
       400, "does not exist"},
      {"POST", "/v1/queues", R"({"name":"x.fifo","fifo":false})", 400, ".fifo"},
      {"POST", "/v1/queues/q/messages", R"({"messages":[]})", 400, "must not be empty"},
      {"POST", "/v1/queues/q/messages", R"({"messages":[{"bodyy":"x"}]})", 400,
       "'messages[0].bodyy'"},
      {"POST", "/v1/queues/q/messages", R"({"messages":[{"body":"x","delay_seconds":901}]})", 200,
       ""},
      {"POST", "/v1/queues/q/receive", R"({"max_messages":11})", 400, "max_messages"},
      // The value as it was sent, not as it was clamped.
      {"POST", "/v1/queues/q/receive", R"({"max_messages":1000000})", 400,
       "max_messages must be between 1 and 10, got 1000000"},
      {"POST", "/v1/queues/q/receive", R"({"wait_seconds":21})", 400, "wait_seconds"},
      {"POST", "/v1/queues/q/delete", R"({"receipt_handles":"abc"})", 400, "an array"},
      {"POST", "/v1/queues/missing/messages", R"({"messages":[{"body":"x"}]})", 404, "'missing'"},
  };
  Json eleven = Json::array();
  for (int i = 0; i < 11; ++i) eleven.push_back({{"body", "m"}});
  cases.push_back(
      {"POST", "/v1/queues/q/messages", Json{{"messages", eleven}}.dump(), 400, "limit is 10"});

  for (const auto& c : cases) {
    auto r = Call(c.method, c.target, c.body, admin_token_);
    EXPECT_EQ(r.status, c.status) << c.target << " " << c.body << " -> " << r.body.dump();
    if (!c.needle.empty()) {
      EXPECT_NE(ErrorMessage(r).find(c.needle), std::string::npos)
          << c.body << " -> " << ErrorMessage(r);
    }
  }
  // The per-message delay of 901 failed alone, as a batch entry.
  // Nothing above changed the store: one queue, one message.
  EXPECT_EQ(Call("GET", "/v1/queues").body["queues"].size(), 1u);
  EXPECT_EQ(Counts("q")["visible"], 1);
  EXPECT_EQ(Counts("q")["delayed"], 0);
}

// As SQS's ReceiptHandleIsInvalid: a receipt handle works on the queue that issued it only.
TEST_F(ApiTest, AReceiptHandleOfAnotherQueueIsRefusedAndDeletesNothing) {
  CreateQueue({{"name", "a"}});
  CreateQueue({{"name", "b"}});
  Send("a", Json::array({{{"body", "from a"}}}));
  Send("b", Json::array({{{"body", "from b"}}}));
  auto from_a = Receive("a", Json::object());
  ASSERT_EQ(from_a.size(), 1u);
  Receive("b", Json::object());
  for (const char* action : {"delete", "visibility"}) {
    Json body = std::string(action) == "delete"
                    ? Json{{"receipt_handles", {from_a[0]["receipt_handle"]}}}
                    : Json{{"changes",
                            {{{"receipt_handle", from_a[0]["receipt_handle"]},
                              {"visibility_timeout_seconds", 0}}}}};
    auto r = Call("POST", std::string("/v1/queues/b/") + action, body);
    ASSERT_EQ(r.status, 200) << r.body.dump();
    EXPECT_EQ(r.body["results"][0]["error"]["code"], "invalid_argument") << r.body.dump();
    EXPECT_NE(
        r.body["results"][0]["error"].value("message", "").find("was issued for another queue"),
        std::string::npos)
        << r.body.dump();
  }
  EXPECT_EQ(Counts("a")["in_flight"], 1);
  EXPECT_EQ(Counts("b")["in_flight"], 1);
  auto deleted =
      Call("POST", "/v1/queues/a/delete", Json{{"receipt_handles", {from_a[0]["receipt_handle"]}}});
  ASSERT_EQ(deleted.status, 200);
  EXPECT_FALSE(deleted.body["results"][0].contains("error")) << deleted.body.dump();
  EXPECT_EQ(Counts("a")["in_flight"], 0);
}

TEST_F(ApiTest, PerEntryErrorsInABatchDoNotFailTheOthers) {
  CreateQueue({{"name", "q"}});
  auto r = Send(
      "q",
      Json::array({{{"body", "good"}},
                   {{"body", "bad"}, {"delay_seconds", 901}},
                   {{"body", std::string("nul\x01", 4)}},
                   {{"body", "binary"},
                    {"attributes", {{"blob", {{"type", "Binary"}, {"binary_value", "AAEC"}}}}}},
                   {{"body", "not binary"},
                    {"attributes", {{"blob", {{"type", "Binary"}, {"binary_value", "%%"}}}}}}}));
  ASSERT_EQ(r["results"].size(), 5u);
  EXPECT_TRUE(r["results"][0]["ok"].get<bool>());
  EXPECT_FALSE(r["results"][1]["ok"].get<bool>());
  EXPECT_NE(r["results"][1]["error"]["message"].get<std::string>().find("delay_seconds"),
            std::string::npos);
  EXPECT_FALSE(r["results"][2]["ok"].get<bool>());
  EXPECT_NE(r["results"][2]["error"]["message"].get<std::string>().find("U+0001"),
            std::string::npos);
  EXPECT_TRUE(r["results"][3]["ok"].get<bool>());
  EXPECT_FALSE(r["results"][4]["ok"].get<bool>());
  EXPECT_NE(r["results"][4]["error"]["message"].get<std::string>().find("is not base64"),
            std::string::npos)
      << r.dump();
  EXPECT_EQ(Counts("q")["visible"], 2);
}

TEST_F(ApiTest, OversizedBodyIsRefusedBeforeTheHandler) {
  std::string huge = R"({"messages":[{"body":")" + std::string(9 << 20, 'a') + R"("}]})";
  auto r = Call("POST", "/v1/queues/q/messages", huge, admin_token_);
  EXPECT_EQ(r.status, 413);
}

TEST_F(ApiTest, VisibilityAndReceiptsFollowTheClock) {
  CreateQueue({{"name", "q"}, {"visibility_timeout_seconds", 30}});
  Send("q", Json::array({{{"body", "m"}}}));
  auto first = Receive("q", Json::object());
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0]["md5_of_body"], "6f8f57715090da2632453988d9a1501b");
  EXPECT_TRUE(Receive("q", Json::object()).empty());
  EXPECT_EQ(Counts("q")["in_flight"], 1);

  clock_.Advance(30 * kSecondMs);
  auto second = Receive("q", Json::object());
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0]["receive_count"], 2);

  auto stale = Call("POST", "/v1/queues/q/delete",
                    Json{{"receipt_handles", {first[0]["receipt_handle"], "rh1.zz.0"}}});
  ASSERT_EQ(stale.status, 200);
  EXPECT_EQ(stale.body["results"][0]["error"]["code"], "aborted");
  EXPECT_EQ(stale.body["results"][1]["error"]["code"], "invalid_argument");
  EXPECT_EQ(Counts("q")["in_flight"], 1);

  auto extend = Call("POST", "/v1/queues/q/visibility",
                     Json{{"changes",
                           {{{"receipt_handle", second[0]["receipt_handle"]},
                             {"visibility_timeout_seconds", 120}}}}});
  EXPECT_TRUE(extend.body["results"][0]["ok"].get<bool>()) << extend.body.dump();
  clock_.Advance(60 * kSecondMs);
  EXPECT_TRUE(Receive("q", Json::object()).empty());

  auto done =
      Call("POST", "/v1/queues/q/delete", Json{{"receipt_handles", {second[0]["receipt_handle"]}}});
  EXPECT_TRUE(done.body["results"][0]["ok"].get<bool>());
  EXPECT_EQ(Counts("q")["in_flight"], 0);
}

TEST_F(ApiTest, DeadLetterAndRedriveThroughTheApi) {
  CreateQueue({{"name", "dlq"}});
  CreateQueue({{"name", "work"},
               {"dead_letter_queue", "dlq"},
               {"max_receive_count", 1},
               {"visibility_timeout_seconds", 5}});
  Send("work", Json::array({{{"body", "poison"}}}));
  EXPECT_EQ(Receive("work", Json::object()).size(), 1u);
  clock_.Advance(5 * kSecondMs);
  EXPECT_TRUE(Receive("work", Json::object()).empty());
  EXPECT_EQ(Counts("dlq")["visible"], 1);
  auto moved = Call("POST", "/v1/queues/dlq/redrive", Json::object());
  EXPECT_EQ(moved.body["moved"], 1);
  EXPECT_EQ(Counts("work")["visible"], 1);
}

TEST_F(ApiTest, FifoThroughTheApi) {
  CreateQueue({{"name", "o.fifo"}, {"fifo", true}, {"content_based_deduplication", true}});
  auto sent = Send("o.fifo", Json::array({{{"body", "1"}, {"group_id", "g"}},
                                          {{"body", "2"}, {"group_id", "g"}},
                                          {{"body", "1"}, {"group_id", "g"}}}));
  EXPECT_FALSE(sent["results"][0]["duplicate"].get<bool>());
  EXPECT_TRUE(sent["results"][2]["duplicate"].get<bool>());
  auto got = Receive("o.fifo", Json{{"max_messages", 10}});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0]["body"], "1");
  EXPECT_EQ(got[1]["body"], "2");
  auto no_group = Call("POST", "/v1/queues/o.fifo/messages", Json{{"messages", {{{"body", "x"}}}}});
  EXPECT_NE(no_group.body["results"][0]["error"]["message"].get<std::string>().find("group_id"),
            std::string::npos);
}

// Watches the long-poll gauge until one receive is parked; false if none is after 5,000 looks.
bool OneLongPollParks(const std::string& url, const std::string& token) {
  auto client = http::Client::Create(url);
  if (!client.ok()) return false;
  for (int i = 0; i < 5000; ++i) {
    auto m = (*client)->Send("GET", "/metrics", {{"Authorization", "Bearer " + token}}, "",
                             std::chrono::seconds(5));
    if (!m.ok()) return false;
    if (m->body.find("tensorfleet_long_polls_waiting 1") != std::string::npos) return true;
  }
  return false;
}

TEST_F(ApiTest, LongPollWakesWhenAMessageArrives) {
  CreateQueue({{"name", "q"}});
  auto waiting = std::async(std::launch::async, [&] {
    return Receive("q", Json{{"wait_seconds", 20}});
  });
  // Send once the receive is parked (the long-poll gauge says so); it must then return it.
  ASSERT_TRUE(OneLongPollParks(app_->url(), admin_token_));
  Send("q", Json::array({{{"body", "wake up"}}}));
  auto got = waiting.get();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0]["body"], "wake up");
}

TEST_F(ApiTest, LongPollReturnsEmptyWhenTheWaitEnds) {
  CreateQueue({{"name", "q"}});
  EXPECT_TRUE(Receive("q", Json{{"wait_seconds", 1}}).empty());
}

// A receive on `queue` with its own client, waiting up to `wait_seconds`, answered later.
std::future<Result<http::ClientResponse>> ReceiveInBackground(const std::string& url,
                                                              const std::string& token,
                                                              const std::string& queue,
                                                              int wait_seconds) {
  return std::async(std::launch::async, [=] {
    auto client = http::Client::Create(url);
    if (!client.ok()) return Result<http::ClientResponse>(client.status());
    return (*client)->Send("POST", "/v1/queues/" + queue + "/receive",
                           {{"Authorization", "Bearer " + token}},
                           Json{{"wait_seconds", wait_seconds}}.dump(), std::chrono::seconds(30));
  });
}

// A receive waiting 20 s, far past the 2 s grace, is answered at once, as if its wait had
// ended: 200 with no messages, not a 503 when the grace runs out.
TEST_F(ApiTest, ShutdownEndsAWaitingLongPollWithAnEmptyAnswer) {
  CreateQueue({{"name", "q"}});
  auto waiting = ReceiveInBackground(app_->url(), admin_token_, "q", 20);
  ASSERT_TRUE(OneLongPollParks(app_->url(), admin_token_));
  app_->Stop();
  app_->Wait();
  auto r = waiting.get();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Json::parse(r->body)["messages"], Json::array()) << r->body;
}

TEST_F(ApiTest, GracefulShutdownAnswersWaitingLongPolls) {
  CreateQueue({{"name", "q"}});
  auto waiting = ReceiveInBackground(app_->url(), admin_token_, "q", 3);
  app_->Stop();
  app_->Wait();
  auto r = waiting.get();
  // Either the long poll finished inside the grace period, or it was refused cleanly: never a
  // dropped connection with no answer... unless it arrived after the listener closed.
  if (r.ok()) {
    EXPECT_TRUE(r->status == 200 || r->status == 503) << r->status;
  } else {
    EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  }
}

}  // namespace
}  // namespace tf::testing
