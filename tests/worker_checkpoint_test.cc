// Checkpoint snapshots (worker/checkpoint_sync.h) against the in-memory object client, whose
// write hook stands in for a crash mid-sync or a job still writing a file: torn and temporary
// files are never restored, a cut-off sync leaves the previous snapshot, content is checked on
// the way back, and old snapshots are collected.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "client/memory_object_client.h"
#include "eventually.h"
#include "file_test_util.h"
#include "store_test_env.h"
#include "worker/checkpoint_sync.h"
#include "worker/checkpoint_syncer.h"
#include "worker/process_group.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using client::MemoryObjectClient;
using worker::CheckpointSync;
using worker::SyncStats;

// Every regular file below `dir` with its content.
std::map<std::string, std::string> Files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file())
      out[e.path().lexically_relative(dir).generic_string()] = ReadFile(e.path());
  }
  return out;
}

std::string ReasonFor(const SyncStats& stats, const std::string& path) {
  for (const auto& s : stats.skipped) {
    if (s.path == path) return s.reason;
  }
  return "";
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(objects_.EnsureBucket("ckpt").ok()); }

  SyncStats SyncOk(CheckpointSync& sync) {
    auto stats = sync.Sync(work_);
    EXPECT_TRUE(stats.ok()) << stats.status().ToString();
    return stats.ok() ? *stats : SyncStats{};
  }
  // Restores the latest snapshot into a fresh directory, with a fresh CheckpointSync (as the
  // next attempt on another machine would), and returns its files.
  std::map<std::string, std::string> RestoreFresh() {
    fs::path into = dir_.path() / ("restore-" + std::to_string(++restores_));
    CheckpointSync other(objects_, "ckpt", "jobs/job_1");
    auto restored = other.Restore(into);
    EXPECT_TRUE(restored.ok()) << restored.status().ToString();
    return Files(into);
  }
  std::vector<std::string> Keys(const std::string& prefix) {
    auto keys = objects_.ListKeys("ckpt", "jobs/job_1/" + prefix);
    EXPECT_TRUE(keys.ok());
    return keys.ok() ? *keys : std::vector<std::string>{};
  }

  TempDir dir_;
  fs::path work_ = dir_.path() / "checkpoints";
  MemoryObjectClient objects_;
  CheckpointSync sync_{objects_, "ckpt", "jobs/job_1"};
  int restores_ = 0;
};

TEST_F(CheckpointTest, ASnapshotComesBackExactlyWithItsModes) {
  WriteFile(work_ / "step-100" / "model.pt", std::string(3 << 20, 'm'));
  WriteFile(work_ / "step-100" / "optim.pt", "optimizer state");
  WriteFile(work_ / "run.sh", "#!/bin/sh\n");
  fs::permissions(work_ / "run.sh", fs::perms::owner_all);
  WriteFile(work_ / "empty.txt", "");

  SyncStats stats = SyncOk(sync_);
  EXPECT_EQ(stats.seq, 1);
  EXPECT_TRUE(stats.new_snapshot);
  EXPECT_EQ(stats.files, 4);
  EXPECT_EQ(stats.files_uploaded, 4);
  EXPECT_EQ(stats.bytes_uploaded, (3u << 20) + 15 + 10);
  EXPECT_TRUE(stats.skipped.empty());

  fs::path into = dir_.path() / "next-attempt" / "checkpoints";
  CheckpointSync next(objects_, "ckpt", "jobs/job_1");
  auto restored = next.Restore(into);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(restored->seq, 1);
  EXPECT_EQ(restored->files, 4);
  EXPECT_EQ(Files(into), Files(work_));
  EXPECT_EQ(fs::status(into / "run.sh").permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(fs::status(into / "step-100" / "optim.pt").permissions() & fs::perms::all,
            fs::status(work_ / "step-100" / "optim.pt").permissions() & fs::perms::all);

  // What was restored is known: syncing it again reads nothing and writes nothing.
  int puts = objects_.puts();
  auto again = next.Sync(into);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->files_unchanged, 4);
  EXPECT_FALSE(again->new_snapshot);
  EXPECT_EQ(objects_.puts(), puts);
}

TEST_F(CheckpointTest, TemporaryAndHiddenFilesAreNeverSyncedOrRestored) {
  WriteFile(work_ / "step-1.pt", "complete");
  WriteFile(work_ / "step-2.pt.tmp", "torn: the job was killed while writ");
  WriteFile(work_ / ".step-3.pt", "hidden, half written");
  WriteFile(work_ / ".cache" / "blob", "hidden directory");
  SyncStats stats = SyncOk(sync_);
  EXPECT_EQ(stats.files, 1);
  EXPECT_EQ(ReasonFor(stats, "step-2.pt.tmp"), "temporary name");
  EXPECT_EQ(ReasonFor(stats, ".step-3.pt"), "temporary name");
  EXPECT_EQ(ReasonFor(stats, ".cache"), "temporary name");
  EXPECT_EQ(RestoreFresh(), (std::map<std::string, std::string>{{"step-1.pt", "complete"}}));
}

TEST_F(CheckpointTest, AJobKilledWhileWritingACheckpointLeavesNoTornFile) {
  // The job writes step 1 as the contract asks (a temporary name, renamed into place), then is
  // killed while step 2 is half written.
  fs::create_directories(work_);
  worker::ProcessSpec spec;
  spec.argv = {"sh", "-c",
               "printf 'step 1 weights' > model.pt.tmp && mv model.pt.tmp model.pt && "
               "printf 'step 2 wei' > model.pt.tmp && echo ready && exec sleep 1000"};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.working_dir = work_;
  spec.log_file = dir_.path() / "job.log";
  auto job = worker::ProcessGroup::Start(spec);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ASSERT_TRUE(Eventually([&] { return ReadFile(dir_.path() / "job.log") == "ready\n"; }, 30s, 5ms))
      << ReadFile(dir_.path() / "job.log");
  auto killed = (*job)->Terminate(0ms);
  ASSERT_TRUE(killed.ok());
  EXPECT_FALSE(killed->success());

  // The sync after the process exited, and the next attempt's restore.
  SyncStats stats = SyncOk(sync_);
  EXPECT_EQ(ReasonFor(stats, "model.pt.tmp"), "temporary name");
  EXPECT_EQ(RestoreFresh(), (std::map<std::string, std::string>{{"model.pt", "step 1 weights"}}));
}

TEST_F(CheckpointTest, ASyncCutOffBeforeLatestLeavesThePreviousSnapshot) {
  WriteFile(work_ / "model.pt", "version 1");
  ASSERT_EQ(SyncOk(sync_).seq, 1);
  WriteFile(work_ / "model.pt", "version 2, longer");
  WriteFile(work_ / "extra.pt", "new file");

  // Cut off in the middle of the content.
  objects_.set_write_hook([](const std::string&, const std::string& key) {
    return key.find("/blobs/") != std::string::npos ? Unavailable("crashed") : OkStatus();
  });
  EXPECT_EQ(sync_.Sync(work_).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(RestoreFresh(), (std::map<std::string, std::string>{{"model.pt", "version 1"}}));

  // Cut off after the content, before the manifest.
  objects_.set_write_hook([](const std::string&, const std::string& key) {
    return key.find("/manifests/") != std::string::npos ? Unavailable("crashed") : OkStatus();
  });
  EXPECT_FALSE(sync_.Sync(work_).ok());
  EXPECT_EQ(RestoreFresh(), (std::map<std::string, std::string>{{"model.pt", "version 1"}}));

  // Cut off after the content and the manifest, before the pointer.
  objects_.set_write_hook([](const std::string&, const std::string& key) {
    return key.ends_with("/latest") ? Unavailable("the worker crashed") : OkStatus();
  });
  EXPECT_FALSE(sync_.Sync(work_).ok());
  EXPECT_EQ(RestoreFresh(), (std::map<std::string, std::string>{{"model.pt", "version 1"}}));

  // The next sync that completes gives the new snapshot, numbered after the orphan manifest.
  objects_.set_write_hook(nullptr);
  SyncStats stats = SyncOk(sync_);
  EXPECT_EQ(stats.seq, 3);
  EXPECT_EQ(RestoreFresh(), (std::map<std::string, std::string>{
                                {"extra.pt", "new file"}, {"model.pt", "version 2, longer"}}));
}

TEST_F(CheckpointTest, AFileChangingWhileReadIsNotUploadedHalfWritten) {
  WriteFile(work_ / "model.pt", "version 1 complete");
  ASSERT_EQ(SyncOk(sync_).seq, 1);

  // The job rewrites both files in place (against the contract) and is still writing them
  // while they are read for upload: each upload finds both longer than when they were hashed.
  WriteFile(work_ / "model.pt", "version 2 halfway");
  WriteFile(work_ / "new.pt", "new halfway");
  objects_.set_write_hook([&](const std::string&, const std::string& key) {
    if (key.find("/blobs/") != std::string::npos) {
      std::ofstream(work_ / "model.pt", std::ios::app) << " and more";
      std::ofstream(work_ / "new.pt", std::ios::app) << " and more";
    }
    return OkStatus();
  });
  SyncStats stats = SyncOk(sync_);
  objects_.set_write_hook(nullptr);
  EXPECT_EQ(stats.files_uploaded, 0);
  EXPECT_NE(ReasonFor(stats, "model.pt")
                .find("changed while being read (kept the version of "
                      "snapshot 1)"),
            std::string::npos)
      << ReasonFor(stats, "model.pt");
  EXPECT_NE(ReasonFor(stats, "new.pt").find("left out"), std::string::npos);
  // The snapshot is still the complete version 1, and nothing half written was stored.
  EXPECT_EQ(RestoreFresh(),
            (std::map<std::string, std::string>{{"model.pt", "version 1 complete"}}));
  EXPECT_EQ(Keys("blobs/").size(), 1u);

  // Once the job is done writing, the next sync takes the files.
  SyncStats later = SyncOk(sync_);
  EXPECT_EQ(later.files_uploaded, 2);
  EXPECT_EQ(RestoreFresh(),
            (std::map<std::string, std::string>{{"model.pt", "version 2 halfway and more and more"},
                                                {"new.pt", "new halfway and more and more"}}));
}

TEST_F(CheckpointTest, UnchangedFilesAreNotReadAgainAndContentIsStoredOnce) {
  WriteFile(work_ / "a.pt", "same content");
  WriteFile(work_ / "b.pt", "same content");
  WriteFile(work_ / "c.pt", "other");
  SyncStats first = SyncOk(sync_);
  EXPECT_EQ(first.files_uploaded, 2);
  EXPECT_EQ(first.files_already_stored, 1);
  EXPECT_EQ(Keys("blobs/").size(), 2u);

  SyncStats second = SyncOk(sync_);
  EXPECT_EQ(second.files_unchanged, 3);
  EXPECT_EQ(second.files_uploaded, 0);
  EXPECT_FALSE(second.new_snapshot);
  EXPECT_EQ(second.seq, 1);

  WriteFile(work_ / "c.pt", "changed");
  SyncStats third = SyncOk(sync_);
  EXPECT_EQ(third.files_unchanged, 2);
  EXPECT_EQ(third.files_uploaded, 1);
  EXPECT_EQ(third.seq, 2);
}

TEST_F(CheckpointTest, OnlyTheLastTwoSnapshotsAndTheirContentAreKept) {
  for (int step = 1; step <= 4; ++step) {
    fs::remove_all(work_);
    WriteFile(work_ / ("step-" + std::to_string(step) + ".pt"), "weights " + std::to_string(step));
    WriteFile(work_ / "config.json", "{}");
    SyncStats stats = SyncOk(sync_);
    EXPECT_EQ(stats.seq, step);
    EXPECT_TRUE(stats.cleanup_error.empty()) << stats.cleanup_error;
  }
  EXPECT_EQ(Keys("manifests/"), (std::vector<std::string>{"jobs/job_1/manifests/0000000003.json",
                                                          "jobs/job_1/manifests/0000000004.json"}));
  // config.json, step-3 and step-4.
  EXPECT_EQ(Keys("blobs/").size(), 3u);
  EXPECT_EQ(RestoreFresh(), (std::map<std::string, std::string>{{"config.json", "{}"},
                                                                {"step-4.pt", "weights 4"}}));
}

TEST_F(CheckpointTest, DamagedContentFailsTheRestoreAndLeavesNothing) {
  WriteFile(work_ / "a.pt", "good a");
  WriteFile(work_ / "sub" / "b.pt", "good b");
  ASSERT_EQ(SyncOk(sync_).seq, 1);
  std::vector<std::string> blobs = Keys("blobs/");
  ASSERT_EQ(blobs.size(), 2u);
  objects_.Overwrite("ckpt", blobs[1], "flipped bits");

  fs::path into = dir_.path() / "restore";
  CheckpointSync next(objects_, "ckpt", "jobs/job_1");
  auto restored = next.Restore(into);
  EXPECT_EQ(restored.status().code(), StatusCode::kInternal);
  EXPECT_NE(restored.status().message().find("does not match its SHA-256"), std::string::npos)
      << restored.status().message();
  EXPECT_TRUE(fs::is_empty(into));

  // A missing blob is an error too.
  ASSERT_TRUE(objects_.Delete("ckpt", blobs[1]).ok());
  EXPECT_EQ(next.Restore(into).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(fs::is_empty(into));
}

TEST_F(CheckpointTest, AHostileManifestCannotWriteOutsideTheDirectory) {
  WriteFile(work_ / "a.pt", "a");
  ASSERT_EQ(SyncOk(sync_).seq, 1);
  std::string sha = Keys("blobs/")[0].substr(std::string("jobs/job_1/blobs/").size());
  for (const std::string path : {"../escape.pt", "/etc/escape.pt", "x/../../escape.pt", ""}) {
    objects_.Overwrite("ckpt", "jobs/job_1/manifests/0000000001.json",
                       R"({"version": 1, "seq": 1, "files": [{"path": ")" + path +
                           R"(", "size": 1, "sha256": ")" + sha + R"(", "mode": 420}]})");
    fs::path into = dir_.path() / "restore" / "checkpoints";
    CheckpointSync next(objects_, "ckpt", "jobs/job_1");
    auto restored = next.Restore(into);
    EXPECT_EQ(restored.status().code(), StatusCode::kInternal) << path;
    EXPECT_FALSE(fs::exists(dir_.path() / "restore" / "escape.pt"));
    EXPECT_TRUE(fs::is_empty(into));
  }
}

TEST_F(CheckpointTest, RestoreWantsAnEmptyDirectoryAndFindsNothingToRestoreAtFirst) {
  fs::path into = dir_.path() / "restore";
  auto nothing = sync_.Restore(into);
  ASSERT_TRUE(nothing.ok()) << nothing.status().ToString();
  EXPECT_EQ(nothing->seq, 0);
  EXPECT_TRUE(fs::is_empty(into));

  WriteFile(into / "left-over.pt", "from before");
  EXPECT_EQ(sync_.Restore(into).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadFile(into / "left-over.pt"), "from before");
  EXPECT_EQ(sync_.Sync(dir_.path() / "missing").status().code(), StatusCode::kInvalidArgument);
}

TEST(CheckpointManifestTest, MalformedManifestsAndPointersAreRefused) {
  const std::string sha(64, 'a');
  auto file = [&](const std::string& fields) {
    return R"({"version": 1, "seq": 2, "files": [)" + fields + "]}";
  };
  auto good = worker::ParseManifest(
      file(R"({"path": "a/b.pt", "size": 3, "sha256": ")" + sha + R"(", "mode": 420})"));
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->seq, 2);
  EXPECT_EQ(good->files[0].mode, 0644u);
  EXPECT_EQ(worker::ParseManifest(worker::ManifestToJson(*good))->files, good->files);

  const std::string bad[] = {
      "",
      "[]",
      "{}",
      R"({"version": 2, "seq": 1, "files": []})",
      R"({"version": 1, "seq": 0, "files": []})",
      R"({"version": 1, "seq": 1})",
      file(R"({"path": "a", "size": -1, "sha256": ")" + sha + R"(", "mode": 420})"),
      file(R"({"path": "a", "size": 1, "sha256": "zz", "mode": 420})"),
      file(R"({"path": "a", "size": 1, "sha256": ")" + sha + R"(", "mode": 99999})"),
      file(R"({"path": "a/./b", "size": 1, "sha256": ")" + sha + R"(", "mode": 420})"),
      file(R"({"path": "a", "size": 1, "sha256": ")" + sha +
           R"(", "mode": 420},)"
           R"({"path": "a", "size": 1, "sha256": ")" +
           sha + R"(", "mode": 420})"),
      file(R"({"path": "a", "size": 1, "sha256": ")" + sha +
           R"(", "mode": 420},)"
           R"({"path": "a/b", "size": 1, "sha256": ")" +
           sha + R"(", "mode": 420})"),
      file(R"("just a string")"),
  };
  for (const auto& text : bad) {
    EXPECT_EQ(worker::ParseManifest(text).status().code(), StatusCode::kInvalidArgument) << text;
  }
  EXPECT_EQ(*worker::ParseLatest(worker::LatestToJson(7)), 7);
  EXPECT_FALSE(worker::ParseLatest(R"({"version": 1, "seq": 7, "manifest": "../x"})").ok());
  EXPECT_FALSE(worker::ParseLatest("not json").ok());

  worker::CheckpointKeys keys("jobs/j/");
  EXPECT_EQ(keys.Manifest(12), "jobs/j/manifests/0000000012.json");
  EXPECT_EQ(keys.ManifestSeq("jobs/j/manifests/0000000012.json"), 12);
  EXPECT_EQ(keys.ManifestSeq("jobs/j/manifests/12.json"), -1);
  EXPECT_EQ(keys.ManifestSeq("jobs/j/manifests/000000001x.json"), -1);
  EXPECT_EQ(worker::CheckpointKeys("").Latest(), "latest");
}

TEST_F(CheckpointTest, TheSyncerSyncsOnItsOwnAndOnceMoreWhenStopped) {
  std::mutex mu;
  std::condition_variable cv;
  int observed = 0;
  worker::CheckpointSyncer syncer(sync_, work_, 1ms, [&](const Result<SyncStats>& r) {
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::lock_guard lock(mu);
    ++observed;
    cv.notify_all();
  });
  fs::create_directories(work_);
  syncer.Start();
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 30s, [&] { return observed >= 2; }));
  }
  // The job writes its last checkpoint and exits; the final sync takes it.
  WriteFile(work_ / "final.pt", "last words");
  auto last = syncer.Stop();
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(RestoreFresh(), (std::map<std::string, std::string>{{"final.pt", "last words"}}));
  EXPECT_GE(syncer.syncs(), 3);
}

TEST_F(CheckpointTest, SyncNowWorksWithoutTheThread) {
  worker::CheckpointSyncer syncer(sync_, work_, 24h);
  WriteFile(work_ / "a.pt", "a");
  auto now = syncer.SyncNow();
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->seq, 1);
  EXPECT_EQ(syncer.syncs(), 1);
}

}  // namespace
}  // namespace tf::testing
