// The store contract: every back end must pass every test here (SQLite always, PostgreSQL when
// the test command started one). Times are explicit, so nothing here sleeps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "base/crypto.h"
#include "store/store.h"
#include "store_test_env.h"
#include "store_test_fixture.h"

namespace tf::store {
namespace {

using tf::testing::StoreBackends;

constexpr TimeMs kT0 = 1'700'000'000'000;

class StoreContractTest : public testing::StoreWithProjectTest {
 protected:
  QueueStore& queues() { return store_->queues(); }

  Queue MakeQueue(const std::string& name, QueueConfig config = {}) {
    Queue q;
    q.project_id = project_;
    q.name = name;
    q.config = config;
    q.created_at = q.updated_at = kT0;
    auto created = queues().CreateQueue(q);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? *created : q;
  }

  static NewMessage Msg(const std::string& body, TimeMs now = kT0, TimeMs delay = 0) {
    NewMessage m;
    m.message_id = RandomHex(16);
    m.body = body;
    m.body_md5 = Md5Hex(body);
    m.visible_at = now + delay;
    m.expires_at = now + 4 * kDayMs;
    return m;
  }

  std::vector<SentMessage> Send(const Queue& q, std::vector<NewMessage> ms, TimeMs now = kT0) {
    auto sent = queues().SendMessages(q.id, ms, now, 5 * kMinuteMs);
    EXPECT_TRUE(sent.ok()) << sent.status().ToString();
    return sent.ok() ? *sent : std::vector<SentMessage>{};
  }

  std::vector<ReceivedMessage> Receive(const Queue& q, TimeMs now, int max = 10,
                                       TimeMs visibility = 30 * kSecondMs) {
    ReceiveOptions o;
    o.queue_id = q.id;
    o.fifo = q.config.fifo;
    o.max_messages = max;
    o.visibility_timeout_ms = visibility;
    auto got = queues().ReceiveMessages(o, now);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? *got : std::vector<ReceivedMessage>{};
  }

  static std::vector<std::string> Bodies(const std::vector<ReceivedMessage>& ms) {
    std::vector<std::string> out;
    for (const auto& m : ms) out.push_back(m.body);
    return out;
  }
};

TEST_P(StoreContractTest, ProjectsAreUniqueByName) {
  auto& auth = store_->auth();
  EXPECT_EQ(auth.CreateProject({"prj_other" + RandomHex(4), "p-" + project_, kT0}).code(),
            StatusCode::kAlreadyExists);
  auto by_name = auth.GetProjectByName("p-" + project_);
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->id, project_);
  EXPECT_EQ(auth.GetProject(project_)->name, "p-" + project_);
  EXPECT_EQ(auth.GetProject("prj_missing").status().code(), StatusCode::kNotFound);
  auto all = auth.ListProjects();
  ASSERT_TRUE(all.ok());
  bool found = false;
  for (const auto& p : *all) found = found || p.id == project_;
  EXPECT_TRUE(found);
}

TEST_P(StoreContractTest, TokensAreFoundByHashAndRevokedOnce) {
  auto& auth = store_->auth();
  Token t{"tok_" + RandomHex(6), project_, "ci", Sha256Hex("secret" + project_), false, kT0, {}};
  ASSERT_TRUE(auth.CreateToken(t).ok());
  auto found = auth.FindTokenByHash(t.hash);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->id, t.id);
  EXPECT_EQ(found->project_id, project_);
  EXPECT_FALSE(found->revoked_at.has_value());
  EXPECT_EQ(auth.FindTokenByHash(Sha256Hex("wrong")).status().code(), StatusCode::kNotFound);

  ASSERT_TRUE(auth.RevokeToken(t.id, kT0 + 5).ok());
  ASSERT_TRUE(auth.RevokeToken(t.id, kT0 + 9).ok());
  EXPECT_EQ(*auth.FindTokenByHash(t.hash)->revoked_at, kT0 + 5);
  EXPECT_EQ(auth.RevokeToken("tok_missing", kT0).code(), StatusCode::kNotFound);

  auto listed = auth.ListTokens(project_);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].name, "ci");
}

TEST_P(StoreContractTest, QueuesCreateListUpdateDelete) {
  Queue a = MakeQueue("alpha");
  MakeQueue("alpha_%");
  MakeQueue("beta");
  Queue dup;
  dup.project_id = project_;
  dup.name = "alpha";
  EXPECT_EQ(queues().CreateQueue(dup).status().code(), StatusCode::kAlreadyExists);

  auto listed = queues().ListQueues(project_, "alpha");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].name, "alpha");
  // A prefix is literal: % and _ are not wildcards.
  EXPECT_EQ(queues().ListQueues(project_, "alpha_")->size(), 1u);
  EXPECT_EQ(queues().ListQueues(project_, "")->size(), 3u);
  EXPECT_EQ(queues().ListQueues("prj_nobody", "")->size(), 0u);

  QueueConfig changed;
  changed.visibility_timeout_ms = 90 * kSecondMs;
  changed.dead_letter_queue = "beta";
  changed.max_receive_count = 3;
  ASSERT_TRUE(queues().UpdateQueueConfig(a.id, changed, kT0 + 1).ok());
  auto got = queues().GetQueue(project_, "alpha");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->config, changed);
  EXPECT_EQ(got->updated_at, kT0 + 1);
  EXPECT_EQ(queues().GetQueueById(a.id)->name, "alpha");

  Send(a, {Msg("x")});
  ASSERT_TRUE(queues().DeleteQueue(a.id).ok());
  EXPECT_EQ(queues().GetQueue(project_, "alpha").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(queues().DeleteQueue(a.id).code(), StatusCode::kNotFound);
  EXPECT_EQ(queues().SendMessages(a.id, {Msg("y")}, kT0, 0).status().code(), StatusCode::kNotFound);
}

TEST_P(StoreContractTest, ReceiveHidesMessagesUntilExactlyTheVisibilityTimeout) {
  Queue q = MakeQueue("work");
  Send(q, {Msg("one"), Msg("two"), Msg("three")});
  auto first = Receive(q, kT0, 2, 30 * kSecondMs);
  EXPECT_EQ(Bodies(first), (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(first[0].receive_count, 1);
  EXPECT_EQ(first[0].first_received_at, kT0);
  EXPECT_EQ(first[0].body_md5, Md5Hex("one"));

  EXPECT_EQ(Bodies(Receive(q, kT0 + 1)), (std::vector<std::string>{"three"}));
  // One millisecond before expiry the first two are still hidden; at expiry they are visible.
  EXPECT_TRUE(Receive(q, kT0 + 30 * kSecondMs - 1).empty());
  auto again = Receive(q, kT0 + 30 * kSecondMs);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].receive_count, 2);
  EXPECT_EQ(again[0].first_received_at, kT0);
  EXPECT_NE(again[0].receipt, first[0].receipt);
}

TEST_P(StoreContractTest, StaleReceiptNeitherDeletesNorExtends) {
  Queue q = MakeQueue("work");
  auto sent = Send(q, {Msg("m")});
  ASSERT_EQ(sent.size(), 1u);
  // A message never received has no valid receipt: receipt 0 must not delete it.
  auto unreceived = queues().DeleteMessages(q.id, {Receipt{sent[0].sequence, 0}});
  ASSERT_TRUE(unreceived.ok());
  EXPECT_EQ((*unreceived)[0].code(), StatusCode::kAborted);
  EXPECT_EQ(queues().CountMessages(q.id, kT0)->visible, 1);
  auto first = Receive(q, kT0, 1, 10 * kSecondMs);
  ASSERT_EQ(first.size(), 1u);
  auto second = Receive(q, kT0 + 10 * kSecondMs, 1, 10 * kSecondMs);
  ASSERT_EQ(second.size(), 1u);
  Receipt stale{first[0].sequence, first[0].receipt};
  Receipt current{second[0].sequence, second[0].receipt};

  auto del = queues().DeleteMessages(q.id, {stale});
  ASSERT_TRUE(del.ok());
  EXPECT_EQ((*del)[0].code(), StatusCode::kAborted);
  auto change = queues().ChangeVisibility(q.id, {{stale, kT0 + kHourMs}}, kT0 + 11 * kSecondMs);
  ASSERT_TRUE(change.ok());
  EXPECT_EQ((*change)[0].code(), StatusCode::kAborted);
  EXPECT_EQ(queues().CountMessages(q.id, kT0 + 11 * kSecondMs)->in_flight, 1);

  del = queues().DeleteMessages(q.id, {current});
  EXPECT_TRUE((*del)[0].ok());
  EXPECT_EQ(queues().CountMessages(q.id, kT0 + 11 * kSecondMs)->in_flight, 0);
  // Deleting again is not an error: the message is gone either way.
  del = queues().DeleteMessages(q.id, {current});
  EXPECT_TRUE((*del)[0].ok());
}

TEST_P(StoreContractTest, ChangeVisibilityRacingExpiry) {
  Queue q = MakeQueue("work");
  Send(q, {Msg("m")});
  auto got = Receive(q, kT0, 1, 10 * kSecondMs);
  ASSERT_EQ(got.size(), 1u);
  Receipt r{got[0].sequence, got[0].receipt};
  TimeMs expiry = kT0 + 10 * kSecondMs;

  // One millisecond before expiry the extension wins.
  auto change = queues().ChangeVisibility(q.id, {{r, expiry + 20 * kSecondMs}}, expiry - 1);
  EXPECT_TRUE((*change)[0].ok());
  EXPECT_TRUE(Receive(q, expiry).empty());
  // At the (new) expiry the message is no longer in flight: the change is refused.
  change = queues().ChangeVisibility(q.id, {{r, expiry + kMinuteMs}}, expiry + 20 * kSecondMs);
  EXPECT_EQ((*change)[0].code(), StatusCode::kFailedPrecondition);
  auto again = Receive(q, expiry + 20 * kSecondMs);
  ASSERT_EQ(again.size(), 1u);

  // Setting visibility to now releases the message at once.
  Receipt r2{again[0].sequence, again[0].receipt};
  TimeMs t = expiry + 21 * kSecondMs;
  change = queues().ChangeVisibility(q.id, {{r2, t}}, t);
  EXPECT_TRUE((*change)[0].ok());
  EXPECT_EQ(Receive(q, t).size(), 1u);

  auto gone = queues().ChangeVisibility(q.id, {{Receipt{987654321, 5}, t}}, t);
  EXPECT_EQ((*gone)[0].code(), StatusCode::kNotFound);
}

TEST_P(StoreContractTest, DelayedMessagesAreCountedAndReleasedOnTime) {
  Queue q = MakeQueue("work");
  Send(q, {Msg("now"), Msg("later", kT0, 5 * kSecondMs)});
  auto counts = queues().CountMessages(q.id, kT0);
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->visible, 1);
  EXPECT_EQ(counts->delayed, 1);
  EXPECT_EQ(counts->in_flight, 0);
  EXPECT_EQ(Bodies(Receive(q, kT0)), (std::vector<std::string>{"now"}));
  counts = queues().CountMessages(q.id, kT0);
  EXPECT_EQ(counts->in_flight, 1);
  EXPECT_TRUE(Receive(q, kT0 + 5 * kSecondMs - 1).empty());
  EXPECT_EQ(Bodies(Receive(q, kT0 + 5 * kSecondMs)), (std::vector<std::string>{"later"}));
}

TEST_P(StoreContractTest, PoisonMessageMovesToDeadLetterWhileOthersFlow) {
  Queue dlq = MakeQueue("work-dlq");
  QueueConfig config;
  config.dead_letter_queue = "work-dlq";
  config.max_receive_count = 2;
  Queue q = MakeQueue("work", config);
  Send(q, {Msg("poison")});

  ReceiveOptions o;
  o.queue_id = q.id;
  o.max_messages = 10;
  o.visibility_timeout_ms = kSecondMs;
  o.dead_letter_queue_id = dlq.id;
  o.max_receive_count = 2;
  o.dead_letter_retention_ms = 14 * kDayMs;
  TimeMs t = kT0;
  for (int i = 1; i <= 2; ++i) {
    auto got = queues().ReceiveMessages(o, t);
    ASSERT_EQ(got->size(), 1u);
    EXPECT_EQ((*got)[0].receive_count, i);
    t += kSecondMs;  // the consumer crashed: the visibility timeout runs out
  }
  Send(q, {Msg("good")}, t);
  // The third receive moves the poison message out and still delivers the good one.
  auto got = queues().ReceiveMessages(o, t);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(Bodies(*got), (std::vector<std::string>{"good"}));
  EXPECT_EQ(queues().CountMessages(dlq.id, t)->visible, 1);
  auto dead = Receive(dlq, t, 10, 0);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].body, "poison");
  EXPECT_EQ(dead[0].receive_count, 3);

  // Redrive sends it back to its source queue, ready and with a fresh receive count.
  auto moved = queues().RedriveMessages(dlq.id, 0, t, 100);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(*moved, 1);
  EXPECT_EQ(queues().CountMessages(dlq.id, t)->visible, 0);
  ASSERT_TRUE(queues().DeleteMessages(q.id, {{(*got)[0].sequence, (*got)[0].receipt}}).ok());
  auto back = Receive(q, t + 5 * kSecondMs);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].body, "poison");
  EXPECT_EQ(back[0].receive_count, 1);
}

TEST_P(StoreContractTest, RedriveToAnExplicitQueue) {
  Queue dlq = MakeQueue("dlq");
  Queue other = MakeQueue("other");
  Send(dlq, {Msg("a"), Msg("b"), Msg("c")});
  auto moved = queues().RedriveMessages(dlq.id, other.id, kT0, 2);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(*moved, 2);
  EXPECT_EQ(Bodies(Receive(other, kT0)), (std::vector<std::string>{"a", "b"}));
  // Messages that were never dead-lettered have no source to go back to.
  EXPECT_EQ(*queues().RedriveMessages(dlq.id, 0, kT0, 10), 0);
}

TEST_P(StoreContractTest, UnmovableMessagesDoNotBlockARedrive) {
  Queue dlq = MakeQueue("dlq");
  Queue source = MakeQueue("source");
  // Older messages with no source queue to go back to sit at the head of the dead-letter queue.
  Send(dlq, {Msg("orphan-1"), Msg("orphan-2"), Msg("orphan-3")});
  Send(source, {Msg("poison")});
  ReceiveOptions o;
  o.queue_id = source.id;
  o.max_messages = 1;
  o.visibility_timeout_ms = 0;
  o.dead_letter_queue_id = dlq.id;
  o.max_receive_count = 1;
  o.dead_letter_retention_ms = kDayMs;
  ASSERT_EQ(queues().ReceiveMessages(o, kT0)->size(), 1u);
  ASSERT_TRUE(queues().ReceiveMessages(o, kT0)->empty());  // moved to the dead-letter queue

  auto moved = queues().RedriveMessages(dlq.id, 0, kT0, 1);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(*moved, 1);
  EXPECT_EQ(Bodies(Receive(source, kT0)), (std::vector<std::string>{"poison"}));
  EXPECT_EQ(queues().CountMessages(dlq.id, kT0)->visible, 3);
}

TEST_P(StoreContractTest, FifoDeliversEachGroupInOrderOneBatchAtATime) {
  QueueConfig config;
  config.fifo = true;
  Queue q = MakeQueue("orders.fifo", config);
  auto m = [](const std::string& body, const std::string& group) {
    NewMessage n = Msg(body);
    n.group_id = group;
    n.deduplication_id = body;
    return n;
  };
  Send(q, {m("a1", "a"), m("b1", "b"), m("a2", "a"), m("b2", "b"), m("a3", "a")});

  auto first = Receive(q, kT0, 2);
  EXPECT_EQ(Bodies(first), (std::vector<std::string>{"a1", "b1"}));
  // Both groups have a message in flight: nothing else may be delivered.
  EXPECT_TRUE(Receive(q, kT0 + 1).empty());
  ASSERT_TRUE(queues().DeleteMessages(q.id, {{first[0].sequence, first[0].receipt}}).ok());
  // Group a is free again and continues in order; b stays blocked behind b1.
  EXPECT_EQ(Bodies(Receive(q, kT0 + 2)), (std::vector<std::string>{"a2", "a3"}));
  // b1's visibility runs out: it comes back before b2.
  EXPECT_EQ(Bodies(Receive(q, kT0 + 30 * kSecondMs, 1)), (std::vector<std::string>{"b1"}));
}

TEST_P(StoreContractTest, FifoDeduplicatesWithinTheWindow) {
  QueueConfig config;
  config.fifo = true;
  Queue q = MakeQueue("dedup.fifo", config);
  NewMessage n = Msg("hello");
  n.group_id = "g";
  n.deduplication_id = "d1";
  auto first = Send(q, {n});
  ASSERT_EQ(first.size(), 1u);
  EXPECT_FALSE(first[0].duplicate);

  NewMessage again = n;
  again.message_id = RandomHex(16);
  auto second = queues().SendMessages(q.id, {again}, kT0 + 4 * kMinuteMs, 5 * kMinuteMs);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE((*second)[0].duplicate);
  EXPECT_EQ((*second)[0].message_id, first[0].message_id);
  // Still deduplicated after the first was received and deleted.
  auto got = Receive(q, kT0 + 4 * kMinuteMs);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(queues().DeleteMessages(q.id, {{got[0].sequence, got[0].receipt}}).ok());
  auto third = queues().SendMessages(q.id, {again}, kT0 + 5 * kMinuteMs - 1, 5 * kMinuteMs);
  EXPECT_TRUE((*third)[0].duplicate);
  // After the window the same id is a new message.
  auto fourth = queues().SendMessages(q.id, {again}, kT0 + 5 * kMinuteMs, 5 * kMinuteMs);
  EXPECT_FALSE((*fourth)[0].duplicate);
  EXPECT_EQ(queues().CountMessages(q.id, kT0 + 5 * kMinuteMs)->visible, 1);
}

TEST_P(StoreContractTest, PurgeAndRetentionDeleteMessages) {
  Queue q = MakeQueue("work");
  Send(q, {Msg("a"), Msg("b")});
  EXPECT_EQ(*queues().PurgeQueue(q.id), 2);
  EXPECT_EQ(queues().CountMessages(q.id, kT0)->visible, 0);

  NewMessage short_lived = Msg("short");
  short_lived.expires_at = kT0 + kMinuteMs;
  Send(q, {short_lived, Msg("long")});
  auto deleted = queues().DeleteExpired(kT0 + kMinuteMs);
  ASSERT_TRUE(deleted.ok());
  EXPECT_GE(*deleted, 1);
  EXPECT_EQ(Bodies(Receive(q, kT0 + kMinuteMs)), (std::vector<std::string>{"long"}));
}

TEST_P(StoreContractTest, ListenerHearsSends) {
  std::mutex mu;
  std::condition_variable cv;
  std::set<int64_t> heard;
  store_->SetQueueListener([&](int64_t id) {
    std::lock_guard lock(mu);
    heard.insert(id);
    cv.notify_all();
  });
  Queue q = MakeQueue("loud");
  Send(q, {Msg("x")});
  std::unique_lock lock(mu);
  EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return heard.count(q.id) > 0; }));
}

// Waits for a non-blocking queue write's `done`, checking that it runs exactly once.
template <typename T>
class Completion {
 public:
  std::function<void(Result<T>)> Callback() {
    return [this](Result<T> r) {
      std::lock_guard lock(mu_);
      ++calls_;
      result_ = std::move(r);
      cv_.notify_all();
    };
  }
  Result<T> Wait() {
    std::unique_lock lock(mu_);
    EXPECT_TRUE(cv_.wait_for(lock, std::chrono::seconds(10), [&] { return calls_ > 0; }));
    EXPECT_EQ(calls_, 1);
    return result_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int calls_ = 0;
  Result<T> result_ = Internal("never completed");
};

TEST_P(StoreContractTest, NonBlockingWritesAnswerAsTheBlockingOnes) {
  Queue q = MakeQueue("async");
  Completion<std::vector<SentMessage>> sent;
  queues().SendMessagesAsync(q.id, {Msg("a"), Msg("b")}, kT0, 5 * kMinuteMs, sent.Callback());
  auto s = sent.Wait();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_LT((*s)[0].sequence, (*s)[1].sequence);

  ReceiveOptions o;
  o.queue_id = q.id;
  o.max_messages = 10;
  o.visibility_timeout_ms = 30 * kSecondMs;
  Completion<std::vector<ReceivedMessage>> got;
  queues().ReceiveMessagesAsync(o, kT0, got.Callback());
  auto g = got.Wait();
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(Bodies(*g), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ((*g)[0].receive_count, 1);

  // One fresh receipt and one stale one (the message is received again after it expires).
  auto again = Receive(q, kT0 + 30 * kSecondMs, 10);
  ASSERT_EQ(again.size(), 2u);
  Completion<std::vector<Status>> deleted;
  queues().DeleteMessagesAsync(
      q.id, {{again[0].sequence, again[0].receipt}, {(*g)[1].sequence, (*g)[1].receipt}},
      deleted.Callback());
  auto d = deleted.Wait();
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->size(), 2u);
  EXPECT_TRUE((*d)[0].ok());
  EXPECT_EQ((*d)[1].code(), StatusCode::kAborted);
  auto counts = queues().CountMessages(q.id, kT0 + 30 * kSecondMs);
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->visible + counts->in_flight + counts->delayed, 1);

  Completion<std::vector<SentMessage>> missing;
  queues().SendMessagesAsync(-1, {Msg("c")}, kT0, 5 * kMinuteMs, missing.Callback());
  EXPECT_EQ(missing.Wait().status().code(), StatusCode::kNotFound);
}

TEST_P(StoreContractTest, ConcurrentReceiversNeverShareAMessage) {
  Queue q = MakeQueue("shared");
  constexpr int kMessages = 200;
  for (int i = 0; i < kMessages; i += 10) {
    std::vector<NewMessage> batch;
    for (int j = 0; j < 10; ++j) batch.push_back(Msg(std::to_string(i + j)));
    Send(q, batch);
  }
  std::mutex mu;
  std::multiset<std::string> seen;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (;;) {
        auto got = Receive(q, kT0, 10, kHourMs);
        if (got.empty()) return;
        std::vector<Receipt> receipts;
        for (auto& m : got) receipts.push_back({m.sequence, m.receipt});
        auto del = queues().DeleteMessages(q.id, receipts);
        ASSERT_TRUE(del.ok());
        std::lock_guard lock(mu);
        for (auto& m : got) seen.insert(m.body);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(seen.size(), static_cast<size_t>(kMessages));
  for (const auto& body : seen) EXPECT_EQ(seen.count(body), 1u) << body;
}

// S3 access keys: found by id with their secret, listed per project, revoked once.
TEST_P(StoreContractTest, AccessKeysAreFoundListedPerProjectAndRevoked) {
  AccessKeyStore& keys = store_->access_keys();
  const std::string other = "prj_" + RandomHex(8);
  ASSERT_TRUE(store_->auth().CreateProject({other, "p-" + other, kT0}).ok());
  auto key = [](const std::string& project, TimeMs at) {
    return AccessKey{"TFAK" + RandomHex(8), project, RandomHex(20), "ci", at, std::nullopt};
  };
  AccessKey a = key(project_, kT0), b = key(project_, kT0 + 1), c = key(other, kT0);
  for (const auto& k : {b, a, c}) ASSERT_TRUE(keys.CreateAccessKey(k).ok());
  EXPECT_EQ(keys.CreateAccessKey(a).code(), StatusCode::kAlreadyExists);

  auto found = keys.FindAccessKey(a.id);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->secret, a.secret);
  EXPECT_EQ(found->project_id, project_);
  EXPECT_EQ(found->name, "ci");
  EXPECT_FALSE(found->revoked_at.has_value());
  EXPECT_EQ(keys.FindAccessKey("TFAKNOSUCHKEY000000").status().code(), StatusCode::kNotFound);

  auto mine = keys.ListAccessKeys(project_);
  ASSERT_TRUE(mine.ok());
  ASSERT_EQ(mine->size(), 2u);
  EXPECT_EQ((*mine)[0].id, a.id);  // in the order they were made
  EXPECT_EQ((*mine)[1].id, b.id);
  auto all = keys.ListAccessKeys("");
  ASSERT_TRUE(all.ok());
  std::set<std::string> ids;
  for (const auto& k : *all) ids.insert(k.id);
  EXPECT_TRUE(ids.count(a.id) && ids.count(b.id) && ids.count(c.id));

  ASSERT_TRUE(keys.RevokeAccessKey(a.id, kT0 + 5).ok());
  ASSERT_TRUE(keys.RevokeAccessKey(a.id, kT0 + 9).ok());
  EXPECT_EQ(keys.FindAccessKey(a.id)->revoked_at, std::optional<TimeMs>(kT0 + 5));
  EXPECT_FALSE(keys.FindAccessKey(b.id)->revoked_at.has_value());
  EXPECT_EQ(keys.RevokeAccessKey("TFAKNOSUCHKEY000000", kT0).code(), StatusCode::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreContractTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::store
