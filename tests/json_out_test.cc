// The hand-written JSON of the hot queue answers against what nlohmann::json prints for the same
// values, and the pieces under them (strings, times, ids, digests, random bytes).
#include "api/json_out.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <set>
#include <string>
#include <vector>

#include "api/errors.h"
#include "api/queue_json.h"
#include "base/crypto.h"
#include "base/time_format.h"
#include "queues/message.h"

namespace tf::api {
namespace {

std::string Dumped(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string Written(std::string_view s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

TEST(JsonOutTest, StringsAreEscapedAsNlohmannPrintsThem) {
  std::vector<std::string> cases = {
      "", "plain", "quote \" and backslash \\", "tab\tnew\nline\rcr\bbs\fff", "slash / stays",
      std::string("nul \0 byte", 10), "\x01\x1f\x7f", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
      // Not well-formed UTF-8: a lone continuation byte, a truncated sequence, an overlong form,
      // a surrogate, past U+10FFFF.
      "bad \x80 byte", "cut \xe2\x82", "overlong \xc0\xaf", "surrogate \xed\xa0\x80",
      "too high \xf4\x90\x80\x80", "\xf5\x80\x80\x80 x"};
  for (int c = 0; c < 32; ++c) cases.push_back(std::string(1, static_cast<char>(c)) + "x");
  for (const std::string& s : cases) EXPECT_EQ(Written(s), Dumped(Json(s))) << Dumped(Json(s));
}

TEST(JsonOutTest, NestedValuesAreSeparatedLikeADump) {
  std::string out;
  JsonOut j(out);
  j.BeginObject().Key("a").BeginArray().Int(-5).Bool(true).String("x").BeginObject().EndObject();
  j.BeginArray().EndArray().EndArray().Key("b").Value(Json{{"k", nullptr}}).Key("c").Int(7);
  j.EndObject();
  Json expected = {
      {"a", {-5, true, "x", Json::object(), Json::array()}}, {"b", {{"k", nullptr}}}, {"c", 7}};
  EXPECT_EQ(out, Dumped(expected));
}

// What the route printed before it wrote its answers itself.
std::string ThroughJson(const Json& j) { return JsonResponse(200, j).body; }

TEST(JsonOutTest, ReceivedMessagesMatchMessageToJson) {
  queues::Message plain;
  plain.message_id = "0b7f3c2e-1d2a-4b5c-8d6e-7f8091a2b3c4";
  plain.receipt_handle = "rh1.2a.00000000deadbeef";
  plain.body = "hello \"world\"\n\xe2\x82\xac";
  plain.body_md5 = Md5Hex(plain.body);
  plain.receive_count = 3;
  plain.sent_at = 1'764'500'000'123;
  plain.first_received_at = 0;
  plain.sequence = 42;
  queues::Message fifo = plain;
  fifo.group_id = "g-1";
  fifo.deduplication_id = "d-1";
  fifo.attributes["zeta"] = {"String", "z", ""};
  fifo.attributes["alpha"] = {"Binary", "", "AAEC"};
  fifo.attributes["n"] = {"Number", "12", ""};
  for (const auto& batch : std::vector<std::vector<queues::Message>>{{}, {plain}, {plain, fifo}}) {
    Json messages = Json::array();
    for (const auto& m : batch) messages.push_back(MessageToJson(m));
    EXPECT_EQ(ReceivedJson(batch), ThroughJson({{"messages", messages}}));
  }
}

TEST(JsonOutTest, SendAndDeleteResultsMatchTheirJson) {
  std::vector<queues::SendOutcome> outcomes(3);
  outcomes[0].message_id = "id-0";
  outcomes[0].body_md5 = Md5Hex("a");
  outcomes[0].sequence = 9;
  outcomes[1].status = InvalidArgument("message is 300000 bytes \"too\" big");
  outcomes[2].message_id = "id-2";
  outcomes[2].body_md5 = Md5Hex("b");
  outcomes[2].sequence = 11;
  outcomes[2].duplicate = true;
  Json results = Json::array();
  for (const auto& o : outcomes) {
    if (!o.status.ok()) {
      results.push_back({{"ok", false}, {"error", ErrorJson(o.status)}});
    } else {
      results.push_back({{"ok", true},
                         {"message_id", o.message_id},
                         {"md5_of_body", o.body_md5},
                         {"sequence", o.sequence},
                         {"duplicate", o.duplicate}});
    }
  }
  EXPECT_EQ(SentJson(outcomes), ThroughJson({{"results", results}}));

  std::vector<Status> statuses = {OkStatus(), Aborted("the receipt handle is stale"), OkStatus()};
  Json deleted = Json::array();
  for (const Status& s : statuses) {
    deleted.push_back(s.ok() ? Json{{"ok", true}} : Json{{"ok", false}, {"error", ErrorJson(s)}});
  }
  EXPECT_EQ(BatchResultsJson(statuses), ThroughJson({{"results", deleted}}));
}

// The calendar computed by hand against gmtime, across leap years, centuries and 400-year cycles.
TEST(TimeFormatTest, MatchesGmtime) {
  auto reference = [](TimeMs t) {
    std::time_t secs = static_cast<std::time_t>(t / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[64];  // room for any int year, so that GCC sees no truncation
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(t % 1000));
    return std::string(buf);
  };
  std::vector<TimeMs> times = {0,
                               1,
                               999,
                               1000,
                               86'399'999,
                               86'400'000,
                               951'782'400'000,
                               951'868'799'999,
                               4'107'542'400'000,
                               253'402'300'799'999,
                               253'402'300'800'000,
                               -1,
                               -86'400'001};
  for (TimeMs t = 0; t < 253'402'300'800'000; t += 3'600'000LL * 24 * 37 + 1'234'567) {
    times.push_back(t);
  }
  for (TimeMs t : times) EXPECT_EQ(FormatTime(t), reference(t)) << t;
}

TEST(MessageIdTest, IsAVersion4UuidAndNeverRepeats) {
  std::set<std::string> seen;
  for (int i = 0; i < 2000; ++i) {
    std::string id = queues::NewMessageId();
    ASSERT_EQ(id.size(), 36u) << id;
    for (size_t k : {8, 13, 18, 23}) EXPECT_EQ(id[k], '-') << id;
    EXPECT_EQ(id[14], '4') << id;
    EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos) << id;
    EXPECT_TRUE(seen.insert(id).second) << id;
  }
}

TEST(CryptoTest, DigestsMatchKnownValues) {
  EXPECT_EQ(Md5Hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Md5Hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Md5Hex("abc"), "900150983cd24fb0d6963f7d28e17f72");  // the reused context again
}

// A forked child must not hand out the bytes its parent's thread had in reserve.
TEST(CryptoTest, AForkedChildDrawsOtherRandomBytesThanItsParent) {
  (void)RandomU64();  // the parent now holds a block of random bytes
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    uint64_t v = RandomU64();
    ssize_t n = ::write(pipe_fds[1], &v, sizeof v);
    ::_exit(n == sizeof v ? 0 : 1);
  }
  uint64_t parent = RandomU64();
  uint64_t child = 0;
  ASSERT_EQ(::read(pipe_fds[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  EXPECT_NE(parent, child);
}

}  // namespace
}  // namespace tf::api
