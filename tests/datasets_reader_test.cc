// The reader (src/datasets/dataset_reader.h) over fake fetchers: every worker of every rank
// together reads each sample once with the right bytes, a shard damaged in the cache or on the
// way is downloaded once more and then reported (never returned), prefetching runs ahead of the
// reader, the cache stays within its bound (sparing what any reader of the directory holds, and
// sweeping dead downloads), resuming skips exactly what was seen, and an error stays an error.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "base/crypto.h"
#include "datasets/dataset_reader.h"
#include "datasets/shard_format.h"
#include "store_test_env.h"

namespace tf::datasets {
namespace {

namespace fs = std::filesystem;
using tf::testing::TempDir;

std::string SampleText(int64_t i) {
  return "sample-" + std::to_string(i) + std::string(i % 7, '.');
}

// Shards in memory, handed out as files; counts downloads and can damage or hold them back.
class FakeFetcher final : public ShardFetcher {
 public:
  Status Fetch(const ShardInfo& shard, const fs::path& dest) override {
    std::unique_lock lock(mu_);
    ++calls_[shard.key];
    ++total_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_gate_ || total_ <= gate_; });
    std::string bytes = objects_.at(shard.key);
    if (damage_[shard.key] > 0) {
      --damage_[shard.key];
      bytes[bytes.size() / 2] ^= 0x40;
    }
    lock.unlock();
    std::ofstream(dest, std::ios::binary) << bytes;
    return OkStatus();
  }

  void Put(const std::string& key, std::string bytes) { objects_[key] = std::move(bytes); }
  void Damage(const std::string& key, int times) {
    std::lock_guard lock(mu_);
    damage_[key] = times;
  }
  int Calls(const std::string& key) {
    std::lock_guard lock(mu_);
    return calls_[key];
  }
  int Total() {
    std::lock_guard lock(mu_);
    return total_;
  }
  // Lets only the first `n` downloads through until Open().
  void Gate(int n) {
    std::lock_guard lock(mu_);
    gate_ = n;
    open_gate_ = false;
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_gate_ = true;
    cv_.notify_all();
  }
  // Waits (up to 10 s) until `n` downloads have been asked for.
  bool WaitForCalls(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return total_ >= n; });
  }

 private:
  std::map<std::string, std::string> objects_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, int> calls_, damage_;
  int total_ = 0;
  int gate_ = 0;
  bool open_gate_ = true;
};

// A dataset of `shards` shards holding `per_shard` samples each, in the fake.
DatasetIndex MakeDataset(FakeFetcher& fake, int shards, int per_shard) {
  DatasetIndex index;
  index.name = "fake";
  index.format = "text";
  int64_t next = 0;
  for (int s = 0; s < shards; ++s) {
    ShardWriter w;
    for (int i = 0; i < per_shard; ++i) EXPECT_TRUE(w.Add(SampleText(next + i)).ok());
    std::string bytes(w.Finish());
    ShardInfo info{s,
                   "datasets",
                   "fake/x/shard-" + std::to_string(s),
                   per_shard,
                   static_cast<int64_t>(bytes.size()),
                   Sha256Hex(bytes),
                   next};
    fake.Put(info.key, bytes);
    next += per_shard;
    index.bytes += info.bytes;
    index.shards.push_back(info);
  }
  index.samples = next;
  return index;
}

struct ReadAll {
  std::vector<Sample> samples;
  std::vector<std::string> data;
  Status status;
};

ReadAll Drain(DatasetReader& reader) {
  ReadAll out;
  for (;;) {
    auto next = reader.Next();
    if (!next.ok()) {
      out.status = next.status();
      return out;
    }
    if (!next->has_value()) return out;
    out.samples.push_back(**next);
    out.data.emplace_back((*next)->data);
  }
}

class ReaderTest : public ::testing::Test {
 protected:
  std::unique_ptr<DatasetReader> Open(const DatasetIndex& index, PartitionParams p,
                                      int64_t seen = 0, uint64_t cache_bytes = 1 << 30,
                                      int prefetch = 2) {
    ReaderOptions o;
    o.cache_dir = dir_.path() / "cache";
    o.cache_bytes = cache_bytes;
    o.prefetch_shards = prefetch;
    auto r = DatasetReader::Open(index, p, seen, o, fake_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : nullptr;
  }

  // Flips a bit of byte `at` of the sample whose bytes are `text` in the shard's cached file.
  void DamageCachedSample(const ShardInfo& shard, const std::string& text, size_t at) {
    fs::path cached = dir_.path() / "cache" / (shard.sha256 + ".tfs");
    std::string bytes;
    {
      std::ifstream in(cached, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    size_t found = bytes.find(text);
    ASSERT_NE(found, std::string::npos) << text;
    bytes[found + at] ^= 0x01;
    std::ofstream(cached, std::ios::binary | std::ios::trunc) << bytes;
  }

  TempDir dir_;
  std::shared_ptr<FakeFetcher> fake_ = std::make_shared<FakeFetcher>();
};

TEST_F(ReaderTest, AllRanksAndWorkersReadEverySampleOnceWithItsBytes) {
  DatasetIndex index = MakeDataset(*fake_, 7, 13);
  std::map<int64_t, int> seen;
  for (int rank = 0; rank < 3; ++rank) {
    for (int worker = 0; worker < 2; ++worker) {
      PartitionParams p{.seed = 11,
                        .epoch = 1,
                        .num_nodes = 3,
                        .node_rank = rank,
                        .num_workers = 2,
                        .worker_id = worker,
                        .window_shards = 2};
      auto reader = Open(index, p);
      ASSERT_NE(reader, nullptr);
      ReadAll got = Drain(*reader);
      ASSERT_TRUE(got.status.ok()) << got.status.ToString();
      EXPECT_EQ(got.samples.size(), WorkerSamples({13, 13, 13, 13, 13, 13, 13}, p, 0).size());
      for (size_t i = 0; i < got.samples.size(); ++i) {
        EXPECT_EQ(got.data[i], SampleText(got.samples[i].index));
        ++seen[got.samples[i].index];
      }
    }
  }
  ASSERT_EQ(seen.size(), 91u);
  for (const auto& [i, n] : seen) EXPECT_EQ(n, 1) << i;
  // Six readers shared one cache directory: each shard was downloaded once.
  EXPECT_EQ(fake_->Total(), 7);
}

TEST_F(ReaderTest, ADamagedCachedShardIsDownloadedAgainAndReadCorrectly) {
  DatasetIndex index = MakeDataset(*fake_, 2, 20);
  PartitionParams p;
  {
    auto first = Open(index, p);
    ASSERT_TRUE(Drain(*first).status.ok());
  }
  ASSERT_EQ(fake_->Total(), 2);
  // Flip a byte in the middle of a sample of shard 1's cached file.
  DamageCachedSample(index.shards[1], SampleText(25), 3);

  auto second = Open(index, p);
  ReadAll got = Drain(*second);
  ASSERT_TRUE(got.status.ok()) << got.status.ToString();
  ASSERT_EQ(got.samples.size(), 40u);
  for (size_t i = 0; i < got.samples.size(); ++i) {
    EXPECT_EQ(got.data[i], SampleText(got.samples[i].index));
  }
  EXPECT_EQ(fake_->Calls(index.shards[1].key), 2);
  EXPECT_EQ(fake_->Calls(index.shards[0].key), 1);
  // Only the sound shard's samples were trusted from the check on arrival.
  EXPECT_EQ(second->checked_on_arrival(), 20);
}

TEST_F(ReaderTest, ATruncatedCachedShardIsDownloadedAgain) {
  DatasetIndex index = MakeDataset(*fake_, 1, 10);
  {
    auto first = Open(index, {});
    ASSERT_TRUE(Drain(*first).status.ok());
  }
  fs::resize_file(dir_.path() / "cache" / (index.shards[0].sha256 + ".tfs"), 50);
  auto second = Open(index, {});
  ReadAll got = Drain(*second);
  ASSERT_TRUE(got.status.ok()) << got.status.ToString();
  EXPECT_EQ(got.samples.size(), 10u);
  EXPECT_EQ(fake_->Calls(index.shards[0].key), 2);
}

TEST_F(ReaderTest, AShardDamagedOnTheWayTwiceIsReportedAndNeverReturned) {
  DatasetIndex index = MakeDataset(*fake_, 3, 5);
  PartitionParams p{.window_shards = 1};
  fake_->Damage(index.shards[ShardOrder(3, 0, 0)[1]].key, 2);
  auto reader = Open(index, p);
  ReadAll got = Drain(*reader);
  ASSERT_FALSE(got.status.ok());
  EXPECT_EQ(got.status.code(), StatusCode::kInternal);
  const std::string& bad_key = index.shards[ShardOrder(3, 0, 0)[1]].key;
  EXPECT_NE(got.status.message().find(bad_key), std::string::npos) << got.status.ToString();
  EXPECT_NE(got.status.message().find("downloaded twice"), std::string::npos);
  EXPECT_EQ(fake_->Calls(bad_key), 2);
  // Asking again gets the same error, not the samples after the ones the failed step passed.
  for (int i = 0; i < 2; ++i) {
    auto again = reader->Next();
    ASSERT_FALSE(again.ok()) << "call " << i << " after the error went on reading";
    EXPECT_EQ(again.status().ToString(), got.status.ToString());
  }
  // What was returned before the error came from the good shard only, and was right.
  EXPECT_EQ(got.samples.size(), 5u);
  for (size_t i = 0; i < got.samples.size(); ++i) {
    EXPECT_EQ(got.data[i], SampleText(got.samples[i].index));
  }
  // Damaged once only: the second download is good and reading goes on.
  TempDir other;
  auto fresh = std::make_shared<FakeFetcher>();
  DatasetIndex again = MakeDataset(*fresh, 3, 5);
  fresh->Damage(again.shards[0].key, 1);
  ReaderOptions o;
  o.cache_dir = other.path();
  auto r = DatasetReader::Open(again, p, 0, o, fresh);
  ASSERT_TRUE(r.ok());
  ReadAll ok = Drain(**r);
  EXPECT_TRUE(ok.status.ok()) << ok.status.ToString();
  EXPECT_EQ(ok.samples.size(), 15u);
  EXPECT_EQ(fresh->Calls(again.shards[0].key), 2);
}

// A child that tries to take `path`'s flock (exclusive, without waiting) once told to through
// the pipe `go`; exits 0 if it got it (2 if the parent went away first). Only calls that are
// safe in the child of a threaded process.
pid_t ForkLockTaker(const fs::path& path, const int go[2]) {
  const pid_t child = ::fork();
  if (child != 0) return child;
  ::close(go[1]);  // so that a parent that fails first ends the wait
  char byte;
  if (::read(go[0], &byte, 1) != 1) ::_exit(2);
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ::_exit(fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : 1);
}

// A process forked while this one downloads a shard (a DataLoader worker started meanwhile)
// keeps neither the download's lock nor the hold on the shard: once this process gives them
// back, no one holds them. (A child keeping the lock, then asking for it, waited for itself.)
TEST_F(ReaderTest, AProcessForkedMidDownloadKeepsNoneOfItsLocks) {
  DatasetIndex index = MakeDataset(*fake_, 1, 8);
  const ShardInfo& shard = index.shards[0];
  auto cache = ShardCache::Open(dir_.path() / "cache", 1 << 30);
  ASSERT_TRUE(cache.ok());
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  struct ForkingFetcher final : ShardFetcher {
    ShardFetcher* inner;
    fs::path lock;
    const int* go;
    pid_t child = -1;
    Status Fetch(const ShardInfo& s, const fs::path& dest) override {
      child = ForkLockTaker(lock, go);  // while this process holds the download's lock
      return inner->Fetch(s, dest);
    }
  } forking;
  forking.inner = fake_.get();
  forking.lock = dir_.path() / "cache" / (shard.sha256 + ".lock");  // the download lock
  forking.go = go;
  ASSERT_TRUE((*cache)->Ensure(shard, forking).ok());  // downloaded, the lock given back, held
  ASSERT_GT(forking.child, 0);
  const pid_t holder_child = ForkLockTaker((*cache)->PathOf(shard), go);  // while held
  ASSERT_GT(holder_child, 0);
  (*cache)->Release(shard);
  ASSERT_EQ(::write(go[1], "gg", 2), 2);
  for (pid_t child : {forking.child, holder_child}) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << (child == holder_child ? "the shard's hold" : "the download's lock")
        << " is still held by the forked process (status " << status << ")";
  }
  ::close(go[0]);
  ::close(go[1]);
}

// A process forked while another thread of its parent maps a shard (a DataLoader starting its
// workers while a reader of the main process maps one) maps the shard itself: it does not wait
// for a mapping that no thread of the child is making.
TEST_F(ReaderTest, AProcessForkedWhileAShardIsBeingMappedCanMapIt) {
  const fs::path file = dir_.path() / "shard.tfs";
  std::ofstream(file) << "shard bytes";
  std::promise<void> mapping, forked;
  std::shared_future<void> forked_done = forked.get_future().share();
  MappedShard::SetWhileMappingForTesting([&, forked_done] {
    mapping.set_value();
    forked_done.wait();
  });
  std::thread mapper([&] { EXPECT_TRUE(MappedShard::Open(file).ok()); });
  mapping.get_future().wait();
  const pid_t child = ::fork();
  if (child == 0) {
    ::alarm(30);  // a child waiting for the parent's mapping would wait forever: end it instead
    MappedShard::SetWhileMappingForTesting({});
    auto mapped = MappedShard::Open(file);
    ::_exit(mapped.ok() && (*mapped)->bytes() == "shard bytes" ? 0 : 1);
  }
  forked.set_value();
  mapper.join();
  MappedShard::SetWhileMappingForTesting({});
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the forked process could not map the shard (status " << status << ")";
}

TEST_F(ReaderTest, ReadersOfOneProcessShareOneMappingPerShardFile) {
  DatasetIndex index = MakeDataset(*fake_, 1, 8);
  const ShardInfo& shard = index.shards[0];
  auto a = ShardCache::Open(dir_.path() / "cache", 1 << 30);
  auto b = ShardCache::Open(dir_.path() / "cache", 1 << 30);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->Ensure(shard, *fake_).ok());
  ASSERT_TRUE((*b)->Ensure(shard, *fake_).ok());
  EXPECT_EQ(fake_->Calls(shard.key), 1);
  auto first = (*a)->Map(shard);
  auto second = (*b)->Map(shard);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ((*first)->bytes().data(), (*second)->bytes().data());
  // Downloaded again (a new file): a mapping of its own, and the old one stays readable.
  (*a)->Drop(shard, first->get());
  ASSERT_TRUE((*a)->Ensure(shard, *fake_).ok());
  EXPECT_EQ(fake_->Calls(shard.key), 2);
  auto third = (*a)->Map(shard);
  ASSERT_TRUE(third.ok());
  EXPECT_NE((*third)->bytes().data(), (*first)->bytes().data());
  EXPECT_EQ((*third)->bytes(), (*first)->bytes());
  EXPECT_TRUE(ShardView::Open((*first)->bytes(), "old").ok());
  // A second reader that found the old file damaged too drops nothing now: the file there is
  // the new one, which the first reader put in its place.
  (*b)->Drop(shard, second->get());
  EXPECT_TRUE(fs::exists((*a)->PathOf(shard)));
  EXPECT_EQ(fake_->Calls(shard.key), 2);
  (*a)->Release(shard);
  (*a)->Release(shard);
  (*b)->Release(shard);
}

TEST_F(ReaderTest, ThreadsAskingForOneFileAtOnceGetOneMapping) {
  DatasetIndex index = MakeDataset(*fake_, 1, 8);
  auto cache = ShardCache::Open(dir_.path() / "cache", 1 << 30);
  ASSERT_TRUE(cache.ok());
  ASSERT_TRUE((*cache)->Ensure(index.shards[0], *fake_).ok());
  const int64_t before = MappedShard::mappings_made();
  std::vector<std::shared_ptr<const MappedShard>> got(8);
  std::vector<std::thread> threads;
  for (auto& g : got) {
    threads.emplace_back([&] {
      auto m = (*cache)->Map(index.shards[0]);
      if (m.ok()) g = *m;
    });
  }
  for (auto& t : threads) t.join();
  // One of them mapped it; the others waited for that mapping instead of making their own.
  EXPECT_EQ(MappedShard::mappings_made() - before, 1);
  for (const auto& g : got) {
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g, got[0]);
  }
  (*cache)->Release(index.shards[0]);
}

TEST_F(ReaderTest, PopulatingAShardShortenedSinceItWasMappedIsAnErrorNotACrash) {
  std::string big;
  for (int i = 0; i < 64; ++i) big += std::string(1000, static_cast<char>('a' + i % 26));
  const fs::path path = dir_.path() / "shard.tfs";
  std::ofstream(path, std::ios::binary) << big;
  auto mapped = MappedShard::Open(path);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_TRUE((*mapped)->Populate(1000, 5000).ok());
  EXPECT_TRUE((*mapped)->Populate(60000, 1 << 20).ok());  // clipped to the file
  EXPECT_TRUE((*mapped)->Resident(1000, 5000));           // just read in (and written)
  fs::resize_file(path, 8000);
  EXPECT_FALSE((*mapped)->Resident(0, 64000));  // the pages past the new end are gone
  Status s = (*mapped)->PopulateAll();
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find(path.string()), std::string::npos) << s.ToString();
  EXPECT_TRUE((*mapped)->Populate(0, 4000).ok());  // what is still there reads
}

TEST_F(ReaderTest, AnyNumberOfPrefetchThreadsReadsTheSameSamplesInTheSameOrder) {
  DatasetIndex index = MakeDataset(*fake_, 7, 5);
  PartitionParams p{.seed = 9, .window_shards = 2};
  std::vector<int64_t> first;
  for (int threads : {1, 2, 5}) {
    ReaderOptions o;
    o.cache_dir = dir_.path() / ("cache" + std::to_string(threads));
    o.prefetch_threads = threads;
    o.read_slots = threads - 1;  // 0 (no bound), 1 and 4
    auto r = DatasetReader::Open(index, p, 0, o, fake_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ReadAll got = Drain(**r);
    ASSERT_TRUE(got.status.ok()) << got.status.ToString();
    std::vector<int64_t> order;
    for (size_t i = 0; i < got.samples.size(); ++i) {
      order.push_back(got.samples[i].index);
      EXPECT_EQ(got.data[i], SampleText(got.samples[i].index));
    }
    EXPECT_EQ(order.size(), 35u);
    if (first.empty()) first = order;
    EXPECT_EQ(order, first) << threads << " threads";
  }
}

TEST_F(ReaderTest, ReadSlotsAreSharedByEveryCacheObjectOfTheDirectory) {
  auto a = ShardCache::Open(dir_.path() / "cache", 1 << 30);
  auto b = ShardCache::Open(dir_.path() / "cache", 1 << 30);
  ASSERT_TRUE(a.ok() && b.ok());
  auto first = (*a)->TryTakeReadSlot(2);
  auto second = (*b)->TryTakeReadSlot(2);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE(first->has_value() && second->has_value());
  auto third = (*a)->TryTakeReadSlot(2);
  ASSERT_TRUE(third.ok());
  EXPECT_FALSE(third->has_value());  // both taken, by whichever cache object
  second->reset();                   // given back
  auto fourth = (*b)->TryTakeReadSlot(2);
  ASSERT_TRUE(fourth.ok());
  EXPECT_TRUE(fourth->has_value());
  // A blocking take waits for the one given back.
  first->reset();
  auto fifth = (*a)->TakeReadSlot(2);
  EXPECT_TRUE(fifth.ok()) << fifth.status().ToString();
}

TEST_F(ReaderTest, PrefetchRunsAheadOfTheReader) {
  DatasetIndex index = MakeDataset(*fake_, 6, 4);
  PartitionParams p{.window_shards = 1};
  auto reader = Open(index, p, 0, 1 << 30, /*prefetch=*/3);
  // Before anything is read, the first shard and three more are asked for.
  ASSERT_TRUE(fake_->WaitForCalls(4));
  auto first = reader->Next();
  ASSERT_TRUE(first.ok() && first->has_value());
  // Reading the first window does not move the prefetch past three shards ahead of it.
  EXPECT_EQ(fake_->Total(), 4);
  ReadAll rest = Drain(*reader);
  ASSERT_TRUE(rest.status.ok());
  EXPECT_EQ(rest.samples.size(), 23u);
  EXPECT_EQ(fake_->Total(), 6);
}

TEST_F(ReaderTest, AHeldBackDownloadHoldsTheReaderUntilItArrives) {
  DatasetIndex index = MakeDataset(*fake_, 3, 2);
  fake_->Gate(0);
  PartitionParams p{.window_shards = 1};
  auto reader = Open(index, p, 0, 1 << 30, 0);
  ASSERT_TRUE(fake_->WaitForCalls(1));
  std::thread opener([&] { fake_->Open(); });
  ReadAll got = Drain(*reader);
  opener.join();
  ASSERT_TRUE(got.status.ok());
  EXPECT_EQ(got.samples.size(), 6u);
}

TEST_F(ReaderTest, TheCacheStaysWithinItsBound) {
  DatasetIndex index = MakeDataset(*fake_, 10, 50);
  const uint64_t shard_bytes = index.shards[0].bytes;
  PartitionParams p{.window_shards = 1};
  auto reader = Open(index, p, 0, 3 * shard_bytes, 1);
  ReadAll got = Drain(*reader);
  ASSERT_TRUE(got.status.ok()) << got.status.ToString();
  EXPECT_EQ(got.samples.size(), 500u);
  uint64_t kept = 0;
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_.path() / "cache")) {
    if (e.path().extension() == ".tfs") {
      kept += e.file_size();
      ++files;
    }
  }
  EXPECT_LE(kept, 3 * shard_bytes);
  EXPECT_GE(files, 1);
}

// The .tfs files in the cache directory.
std::set<std::string> CachedShards(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".tfs") out.insert(e.path().stem().string());
  }
  return out;
}

TEST_F(ReaderTest, AShardHeldByAnyCacheObjectOfTheDirectoryIsNeverEvicted) {
  // Two cache objects on one directory, as two dataloader workers or ranks have, with a bound
  // smaller than one shard: each eviction wants everything out.
  DatasetIndex index = MakeDataset(*fake_, 2, 5);
  const ShardInfo &s0 = index.shards[0], &s1 = index.shards[1];
  const fs::path dir = dir_.path() / "cache";
  auto a = ShardCache::Open(dir, 1);
  auto b = ShardCache::Open(dir, 1);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->Ensure(s0, *fake_).ok());
  ASSERT_TRUE((*b)->Ensure(s1, *fake_).ok());  // its eviction finds s0 held by the other
  EXPECT_EQ(CachedShards(dir), (std::set<std::string>{s0.sha256, s1.sha256}));
  auto mapped = (*a)->Map(s0);
  EXPECT_TRUE(mapped.ok()) << mapped.status().ToString();
  // Once given back, each goes: the directory is within its bound again after the reading.
  (*b)->Release(s1);
  EXPECT_EQ(CachedShards(dir), std::set<std::string>{s0.sha256});
  (*a)->Release(s0);
  EXPECT_TRUE(CachedShards(dir).empty());
}

TEST_F(ReaderTest, ADeadDownloadsTemporaryFileIsRemovedAndALiveOnesKept) {
  DatasetIndex index = MakeDataset(*fake_, 1, 5);
  const fs::path dir = dir_.path() / "cache";
  fs::create_directories(dir);
  const std::string dead(64, 'a'), live(64, 'b');
  std::ofstream(dir / (dead + ".tmp-0d0d0d0d")) << "left by a download killed half way";
  std::ofstream(dir / (live + ".tmp-1e1e1e1e")) << "a download under way in another process";
  // The download under way holds its shard's lock.
  int live_lock = ::open((dir / (live + ".lock")).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(live_lock, 0);
  ASSERT_EQ(::flock(live_lock, LOCK_EX), 0);
  auto cache = ShardCache::Open(dir, 1 << 30);
  ASSERT_TRUE(cache.ok());
  ASSERT_TRUE((*cache)->Ensure(index.shards[0], *fake_).ok());  // a download: the cache is swept
  EXPECT_FALSE(fs::exists(dir / (dead + ".tmp-0d0d0d0d")));
  EXPECT_TRUE(fs::exists(dir / (live + ".tmp-1e1e1e1e")));
  ::close(live_lock);
  (*cache)->Release(index.shards[0]);
}

TEST_F(ReaderTest, ResumeSkipsExactlyTheSamplesSeen) {
  DatasetIndex index = MakeDataset(*fake_, 5, 9);
  PartitionParams p{.seed = 3, .epoch = 4, .window_shards = 2};
  auto full = Drain(*Open(index, p));
  ASSERT_TRUE(full.status.ok());
  ASSERT_EQ(full.samples.size(), 45u);
  for (int64_t seen : {1, 17, 44, 45}) {
    auto rest = Drain(*Open(index, p, seen));
    ASSERT_TRUE(rest.status.ok());
    ASSERT_EQ(rest.samples.size(), 45u - seen);
    for (size_t i = 0; i < rest.samples.size(); ++i) {
      EXPECT_EQ(rest.samples[i].index, full.samples[seen + i].index);
      EXPECT_EQ(rest.samples[i].position, seen + static_cast<int64_t>(i));
    }
  }
  // Past the end is no position of this rank: a count of every rank's samples, say.
  ReaderOptions o;
  o.cache_dir = dir_.path() / "cache";
  auto past = DatasetReader::Open(index, p, 46, o, fake_);
  ASSERT_EQ(past.status().code(), StatusCode::kInvalidArgument) << past.status().ToString();
  EXPECT_NE(past.status().message().find(
                "samples_seen 46 is past the end of this rank's share of the epoch (45 samples"),
            std::string::npos)
      << past.status().message();
}

TEST_F(ReaderTest, EverySampleIsCheckedOnArrivalWhenTheShardsAreSound) {
  DatasetIndex index = MakeDataset(*fake_, 5, 9);
  // One worker from the start, two workers, and a resume in the middle of a window: each worker
  // returns only samples its prefetch threads checked, and exactly its own.
  struct Case {
    int workers;
    int64_t seen;
  };
  for (Case c : {Case{1, 0}, Case{2, 0}, Case{1, 13}, Case{3, 13}}) {
    for (int worker = 0; worker < c.workers; ++worker) {
      PartitionParams p{
          .seed = 5, .num_workers = c.workers, .worker_id = worker, .window_shards = 2, .block = 2};
      auto reader = Open(index, p, c.seen);
      ASSERT_NE(reader, nullptr);
      ReadAll got = Drain(*reader);
      ASSERT_TRUE(got.status.ok()) << got.status.ToString();
      const std::vector<SampleRef> want = WorkerSamples({9, 9, 9, 9, 9}, p, c.seen);
      ASSERT_EQ(got.samples.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got.samples[i].index, index.shards[want[i].shard].first_sample + want[i].index);
        EXPECT_EQ(got.data[i], SampleText(got.samples[i].index));
      }
      EXPECT_EQ(reader->checked_on_arrival(), static_cast<int64_t>(want.size()))
          << c.workers << " workers, worker " << worker << ", seen " << c.seen;
    }
  }
}

TEST_F(ReaderTest, ADamagedSampleIsFoundOnArrivalOnlyByTheWorkerThatReadsIt) {
  DatasetIndex index = MakeDataset(*fake_, 1, 40);
  PartitionParams p0{.num_workers = 2, .worker_id = 0, .block = 4};
  PartitionParams p1 = p0;
  p1.worker_id = 1;
  // A sample worker 1 reads: worker 0's check of the same shard never looks at it.
  const std::vector<SampleRef> theirs = WorkerSamples({40}, p1, 0);
  ASSERT_FALSE(theirs.empty());
  const int64_t damaged = theirs.front().index;
  {
    auto warm = Open(index, {});
    ASSERT_TRUE(Drain(*warm).status.ok());
  }
  DamageCachedSample(index.shards[0], SampleText(damaged), 2);

  auto w0 = Open(index, p0);
  ReadAll got0 = Drain(*w0);
  ASSERT_TRUE(got0.status.ok()) << got0.status.ToString();
  EXPECT_EQ(w0->checked_on_arrival(), static_cast<int64_t>(got0.samples.size()));
  EXPECT_EQ(fake_->Calls(index.shards[0].key), 1);  // worker 0 had no reason to download it again

  auto w1 = Open(index, p1);
  ReadAll got1 = Drain(*w1);
  ASSERT_TRUE(got1.status.ok()) << got1.status.ToString();
  ASSERT_EQ(got1.samples.size(), theirs.size());
  for (size_t i = 0; i < got1.samples.size(); ++i) {
    EXPECT_EQ(got1.data[i], SampleText(got1.samples[i].index));
  }
  // The arrival check failed, so worker 1 checked each sample as it returned it, found the
  // damaged one and read the shard downloaded again.
  EXPECT_EQ(w1->checked_on_arrival(), 0);
  EXPECT_EQ(fake_->Calls(index.shards[0].key), 2);
}

TEST_F(ReaderTest, BadOptionsAreRefused) {
  DatasetIndex index = MakeDataset(*fake_, 1, 1);
  ReaderOptions o;
  o.cache_dir = dir_.path();
  PartitionParams p;
  p.worker_id = 3;
  EXPECT_EQ(DatasetReader::Open(index, p, 0, o, fake_).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(DatasetReader::Open(index, {}, -1, o, fake_).status().code(),
            StatusCode::kInvalidArgument);
  for (int threads : {0, 17}) {
    o.prefetch_threads = threads;
    EXPECT_EQ(DatasetReader::Open(index, {}, 0, o, fake_).status().code(),
              StatusCode::kInvalidArgument);
  }
  o.prefetch_threads = 2;
  for (int slots : {-1, 65}) {
    o.read_slots = slots;
    EXPECT_EQ(DatasetReader::Open(index, {}, 0, o, fake_).status().code(),
              StatusCode::kInvalidArgument);
  }
  o.read_slots = 2;
  o.cache_dir.clear();
  EXPECT_EQ(DatasetReader::Open(index, {}, 0, o, fake_).status().code(),
            StatusCode::kInvalidArgument);
}

// Whoever can write into the cache decides what training reads (shards are checked for damage,
// not for who put them there): a new directory is the user's alone, and one another user owns or
// every user may write into is refused, saying what to do instead.
TEST_F(ReaderTest, TheCacheDirectoryMustBeTheUsersOwn) {
  const fs::path made = dir_.path() / "parent" / "cache";
  ASSERT_TRUE(ShardCache::Open(made, 1 << 20).ok());
  struct stat st {};
  ASSERT_EQ(::stat(made.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  const fs::path slashed = dir_.path() / "slashed" / "";  // as a flag or $VAR may give it
  ASSERT_TRUE(ShardCache::Open(slashed, 1 << 20).ok());
  ASSERT_EQ(::stat((dir_.path() / "slashed").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);

  const fs::path open_to_all = dir_.path() / "everyone";
  fs::create_directories(open_to_all);
  ASSERT_EQ(::chmod(open_to_all.c_str(), 0777), 0);
  auto refused = ShardCache::Open(open_to_all, 1 << 20);
  ASSERT_EQ(refused.status().code(), StatusCode::kPermissionDenied) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find(open_to_all.string() +
                                            " is writable by every user (mode 0777): another "
                                            "user could put shards there"),
            std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("--cache-dir"), std::string::npos);

  // Another user's directory: one made and given away as root, else the root directory.
  fs::path foreign = "/";
  if (::geteuid() == 0) {
    foreign = dir_.path() / "nobodys";
    fs::create_directories(foreign);
    ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);
  }
  auto theirs = ShardCache::Open(foreign, 1 << 20);
  ASSERT_EQ(theirs.status().code(), StatusCode::kPermissionDenied) << theirs.status().ToString();
  EXPECT_NE(theirs.status().message().find(" belongs to uid "), std::string::npos)
      << theirs.status().message();
  EXPECT_NE(
      theirs.status().message().find("not to this user (uid " + std::to_string(::geteuid()) + ")"),
      std::string::npos)
      << theirs.status().message();

  // A file where the directory should be.
  const fs::path file = dir_.path() / "file";
  std::ofstream(file) << "x";
  EXPECT_EQ(ShardCache::Open(file, 1 << 20).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tf::datasets
