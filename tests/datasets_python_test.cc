// The Python binding (python/tensorfleet_data) against a live server: /usr/bin/python3 runs
// torch's DataLoader with two workers over a dataset, for two ranks and two epochs, and every
// sample arrives exactly once per epoch; a resumed epoch continues where it stopped; batched
// mode gives the same samples in the same order; workers keep the position through a resume
// after an odd number of batches, persistent workers and a rank given outright.
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "api_test_util.h"
#include "child_process.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;

// Prints one JSON line per (rank, epoch): the samples in the order the DataLoader gave them.
constexpr const char* kScript = R"py(
import json, sys
import torch.utils.data
import tensorfleet_data

cache = sys.argv[1]
for rank in range(2):
    ds = tensorfleet_data.Dataset("lines", seed=5, rank=rank, world_size=2, batch_size=4,
                                  cache_dir=cache, decode=lambda b: b.decode())
    loader = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2)
    for epoch in range(2):
        ds.set_epoch(epoch)
        got = [s for batch in loader for s in batch]
        print(json.dumps({"rank": rank, "epoch": epoch, "samples": got}), flush=True)
    # Resume epoch 1 of this rank after 8 samples: the rest of the same order.
    ds.set_epoch(1, samples_seen=8)
    print(json.dumps({"rank": rank, "epoch": "1-resumed",
                      "samples": [s for batch in loader for s in batch]}), flush=True)
    # A run resumed at (epoch 1, 8 samples seen) through the constructor: the loop's
    # set_epoch(1) keeps the position, the next epoch is read whole.
    resumed = tensorfleet_data.Dataset("lines", seed=5, rank=rank, world_size=2, batch_size=4,
                                       cache_dir=cache, decode=lambda b: b.decode(), epoch=1,
                                       samples_seen=8)
    resumed_loader = torch.utils.data.DataLoader(resumed, batch_size=4, num_workers=2)
    for epoch in (1, 2):
        resumed.set_epoch(epoch)
        print(json.dumps({"rank": rank, "epoch": "%d-from-constructor" % epoch,
                          "samples": [s for batch in resumed_loader for s in batch]}), flush=True)
    # The same without set_epoch, in this process: only the first pass is resumed.
    plain = tensorfleet_data.Dataset("lines", seed=5, rank=rank, world_size=2, batch_size=4,
                                     cache_dir=cache, decode=lambda b: b.decode(), epoch=1,
                                     samples_seen=8)
    for n in (1, 2):
        print(json.dumps({"rank": rank, "epoch": "1-pass-%d" % n, "samples": list(plain)}),
              flush=True)
    # Epoch 1 again in batches of 4 as (data, offsets) tensors, in the main process and in two
    # workers: the same samples in the same order. Every batch is kept until the epoch is over
    # and read only then: the memory of a batch still held is never another batch's.
    for workers in (0, 2):
        batched = tensorfleet_data.Dataset("lines", seed=5, rank=rank, world_size=2,
                                           batch_size=4, cache_dir=cache, batched=True)
        batched.set_epoch(1)
        kept = list(torch.utils.data.DataLoader(batched, batch_size=None, num_workers=workers))
        got = []
        for data, offsets in kept:
            raw, o = bytes(data.numpy()), offsets.tolist()
            assert len(o) <= 5, o
            got += [raw[o[i]:o[i + 1]].decode() for i in range(len(o) - 1)]
        print(json.dumps({"rank": rank, "epoch": "1-batched-%d" % workers, "samples": got}),
              flush=True)
    # Four prefetch threads under a bound of two read slots: the same samples in the same order.
    tuned = tensorfleet_data.Dataset("lines", seed=5, rank=rank, world_size=2, batch_size=4,
                                     cache_dir=cache, decode=lambda b: b.decode(),
                                     prefetch_threads=4, read_slots=2)
    tuned.set_epoch(1)
    print(json.dumps({"rank": rank, "epoch": "1-tuned",
                      "samples": [s for batch in torch.utils.data.DataLoader(
                          tuned, batch_size=4, num_workers=2) for s in batch]}), flush=True)
try:
    list(tensorfleet_data.Dataset("lines", cache_dir=cache, prefetch_threads=0))
except ValueError as e:
    print(json.dumps({"refused": str(e)}), flush=True)
print(json.dumps({"index": tensorfleet_data.fetch_index("lines")["samples"]}))
)py";

// Prints one JSON line per run, as above, for the ways a DataLoader's workers can lose track of
// the position: a resume after an odd number of batches (whose next batch belongs to worker 1),
// persistent workers across epochs, and a rank given while the environment names another
// process's local rank. Then the arguments that are refused.
constexpr const char* kPositionScript = R"py(
import json, os, sys
import torch.utils.data
import tensorfleet_data

cache = sys.argv[1]
def dataset(**kw):
    kw = dict(dict(seed=5, batch_size=4, cache_dir=cache, decode=lambda b: b.decode()), **kw)
    return tensorfleet_data.Dataset("lines", **kw)
def show(run, loader):
    samples = [s for b in loader for s in b]
    print(json.dumps({"run": run, "samples": samples}), flush=True)
    return samples
def loader(ds, **kw):
    return torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2, **kw)

full = []
for epoch in range(3):
    ds = dataset(rank=0, world_size=2)
    ds.set_epoch(epoch)
    full.append(show("full-%d" % epoch, loader(ds)))
for seen in (4, 12):
    show("resumed-%d" % seen, loader(dataset(rank=0, world_size=2, epoch=0, samples_seen=seen)))
# Persistent workers: the constructor's position holds for epoch 0 only, and each set_epoch
# reaches the workers started for the first epoch.
ds = dataset(rank=0, world_size=2, epoch=0, samples_seen=4)
persistent = loader(ds, persistent_workers=True)
for epoch in range(3):
    ds.set_epoch(epoch)
    show("persistent-%d" % epoch, persistent)
# No set_epoch at all: the constructor's position holds for the first pass only, with new
# workers each pass and with persistent ones.
for persistent in (False, True):
    again = loader(dataset(rank=0, world_size=2, epoch=0, samples_seen=4),
                   persistent_workers=persistent)
    for run in range(2):
        show("no-set-epoch-%s-%d" % (["new", "persistent"][persistent], run), again)
# Resumed at the end of the epoch, whose last batch was short: nothing is left to read.
assert len(full[0]) % 4, "the rank's share should end on a short batch"
show("ended", loader(dataset(rank=0, world_size=2, epoch=0, samples_seen=len(full[0]))))
# A data-parallel rank given outright, in a process whose environment says it is local rank 3
# of 8 (a job that also splits its model over processes): the rank's own share.
os.environ.update(RANK="11", WORLD_SIZE="16", LOCAL_RANK="3", LOCAL_WORLD_SIZE="8")
given = dataset(rank=0, world_size=2)
given.set_epoch(0)
show("given-rank", loader(given))
for env in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
    del os.environ[env]
def refused(what, make):
    try:
        make()
    except (ValueError, RuntimeError) as e:  # the reader's own refusals are RuntimeErrors
        print(json.dumps({"refused": what, "message": str(e)}), flush=True)
# Refused before any shard is fetched: a cache of its own is left without shards.
unaligned_cache = cache + "-unaligned"
refused("unaligned", lambda: list(loader(dataset(epoch=0, samples_seen=6,
                                                 cache_dir=unaligned_cache))))
print(json.dumps({"run": "unaligned-cache", "samples": sorted(
    f for _, _, files in os.walk(unaligned_cache) for f in files if f.endswith(".tfs"))}),
    flush=True)
refused("past-the-end", lambda: list(loader(dataset(rank=0, world_size=2, epoch=0,
                                                   samples_seen=len(full[0]) + 4))))
refused("rank", lambda: dataset(rank=5, world_size=4))
refused("seed", lambda: dataset(seed=-1))
refused("batch_size", lambda: tensorfleet_data.Dataset("lines", batch_size=-3))
refused("local_rank", lambda: dataset(rank=1, world_size=4, local_world_size=2, local_rank=0))
def batched(**kw):
    return tensorfleet_data.Dataset("lines", batched=True, cache_dir=cache, **kw)
refused("handoff_slots", lambda: batched(handoff_slots=-1))
refused("handoff_slot_bytes", lambda: batched(handoff_slot_bytes=0))
)py";

// Prints one JSON line per run of batched=True: the samples in the order they arrived, how the
// batches reached the main process (ds.handoff) and which slots are still held afterwards. Runs:
// the main process alone (the order every other run must give), three workers through the shared
// slots (twice: the slots are free again after a run), persistent workers over two epochs, every
// slot held by this process (each batch goes the ordinary way), slots too small for a batch, a
// collate_fn of the user's (which gets tuples, not through the slots), a run abandoned after two
// batches and one after it, and workers started with "spawn" (not forked with the slots).
constexpr const char* kHandoffScript = R"py(
import json, sys
import torch.utils.data
import tensorfleet_data

def dataset(**kw):
    ds = tensorfleet_data.Dataset("lines", seed=5, batch_size=4, cache_dir=sys.argv[1],
                                  batched=True, **kw)
    ds.set_epoch(1)
    return ds
def split(data, offsets):
    raw, o = bytes(data.numpy()), offsets.tolist()
    return [raw[o[i]:o[i + 1]].decode() for i in range(len(o) - 1)]
def loader(ds, **kw):
    return torch.utils.data.DataLoader(ds, batch_size=None, num_workers=3, **kw)
def show(run, ds, got):
    held = [ds._ring.holder(i) for i in range(ds._ring.slots)] if ds._ring else []
    print(json.dumps({"run": run, "samples": got, "handoff": ds.handoff,
                      "held": sum(1 for h in held if h)}), flush=True)
def samples(batches):
    return [s for data, offsets in batches for s in split(data, offsets)]

def main():
    ds = dataset()
    show("main", ds, samples(torch.utils.data.DataLoader(ds, batch_size=None)))
    ds = dataset()
    show("workers", ds, samples(loader(ds)))
    show("workers-again", ds, samples(loader(ds)))
    ds = dataset()
    persistent = loader(ds, persistent_workers=True)
    show("persistent-1", ds, samples(persistent))
    ds.set_epoch(1)
    show("persistent-2", ds, samples(persistent))
    del persistent
    ds = dataset(handoff_slots=1)
    slot, ticket = ds._ring.claim()
    got = samples(loader(ds))
    ds._ring.release(slot, ticket)
    show("no-free-slot", ds, got)
    show("slot-freed", ds, samples(loader(ds)))
    ds = dataset(handoff_slot_bytes=1)
    show("too-big", ds, samples(loader(ds)))
    ds = dataset()
    def collate(batch):  # what a collate_fn of the user's gets: the pair as a tuple
        assert type(batch) is tuple and len(batch) == 2, type(batch)
        return split(*batch)
    show("collate", ds, [s for batch in loader(ds, collate_fn=collate) for s in batch])
    ds = dataset(handoff_slots=3)
    it = iter(loader(ds))
    first = [next(it), next(it)]
    del it
    show("abandoned", ds, samples(first))
    show("after-abandoned", ds, samples(loader(ds)))
    ds = dataset()
    show("spawn", ds, samples(loader(ds, multiprocessing_context="spawn")))
    # A batch message taken twice: the second take finds the slot freed, and comes back as an
    # ExceptionWrapper (what a DataLoader raises where the batch is consumed), not a raise on
    # whichever thread unpickled it.
    import pickle
    from torch._utils import ExceptionWrapper
    slot, ticket = ds._ring.claim()
    message = pickle.dumps(tensorfleet_data._SharedBatch(
        ds._ring, ds._ring_id, slot, ticket, 0, bytearray(8)))
    first, second = pickle.loads(message), pickle.loads(message)
    print(json.dumps({"run": "taken-twice", "first": type(first).__name__,
                      "second": type(second).__name__,
                      "why": second.exc_msg if isinstance(second, ExceptionWrapper) else ""}),
          flush=True)

if __name__ == "__main__":  # "spawn" workers import this file again
    main()
)py";

// The JSON objects a script printed, one a line; other lines (logs) are left out, and a line
// that starts like an object but is not one fails the test.
std::vector<Json> JsonLines(const std::string& output) {
  std::vector<Json> out;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '{') continue;
    Json j = Json::parse(line, nullptr, false);
    EXPECT_TRUE(j.is_object()) << line;
    if (j.is_object()) out.push_back(std::move(j));
  }
  return out;
}

class DatasetsPythonTest : public ApiFixture {
 protected:
  // Packs 203 lines into shards of 4 KiB as the dataset "lines", then runs `script` with
  // /usr/bin/python3 and returns its output.
  std::string RunScript(const char* script) {
    const fs::path local = dir_.path() / "local";
    fs::create_directories(local);
    {
      std::ofstream lines(local / "lines.txt");
      for (int i = 0; i < 203; ++i) lines << "line " << i << "\n";
      std::ofstream(local / "read.py") << script;
    }
    ChildProcess create;
    EXPECT_TRUE(
        create.Start({TENSORFLEET_BINARY, "--server", app_->url(), "--token", admin_token_,
                      "dataset", "create", "lines", "--from", (local / "lines.txt").string(),
                      "--format", "text", "--shard-size", "4KiB"}));
    EXPECT_EQ(create.Wait(), 0) << create.output();
    ChildProcess python;
    EXPECT_TRUE(
        python.Start({TF_PYTHON, (local / "read.py").string(), (dir_.path() / "cache").string()},
                     {"PYTHONPATH=" TF_PYTHON_PACKAGE_DIR, "TENSORFLEET_SERVER_URL=" + app_->url(),
                      "TENSORFLEET_TOKEN=" + admin_token_}));
    int status = python.Wait();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << python.output();
    return python.output();
  }
};

TEST_F(DatasetsPythonTest, TorchDataLoaderWithTwoWorkersReadsEverySampleOncePerEpoch) {
#ifndef TF_PYTHON_PACKAGE_DIR
  GTEST_SKIP() << "the tensorfleet_data module is not built here (pybind11 not found)";
#else
  const std::string output = RunScript(kScript);
  if (HasFailure()) return;

  std::map<std::string, std::vector<std::string> > by_run;  // "rank/epoch" -> samples
  int index_samples = 0;
  std::string refused;
  for (const Json& j : JsonLines(output)) {
    if (j.contains("index")) {
      index_samples = j["index"];
      continue;
    }
    if (j.contains("refused")) {
      refused = j["refused"];
      continue;
    }
    std::string epoch = j["epoch"].is_string() ? j["epoch"].get<std::string>()
                                               : std::to_string(j["epoch"].get<int>());
    by_run[std::to_string(j["rank"].get<int>()) + "/" + epoch] = j["samples"];
  }
  EXPECT_EQ(index_samples, 203);
  EXPECT_NE(refused.find("prefetch_threads must be 1 to 16, not 0"), std::string::npos)
      << "refused: " << refused;
  for (const char* epoch : {"0", "1"}) {
    std::multiset<std::string> all;
    for (const char* rank : {"0", "1"}) {
      const auto& got = by_run[std::string(rank) + "/" + epoch];
      EXPECT_GE(got.size(), 101u);
      EXPECT_LE(got.size(), 102u);
      all.insert(got.begin(), got.end());
    }
    ASSERT_EQ(all.size(), 203u) << "epoch " << epoch;
    for (int i = 0; i < 203; ++i) {
      EXPECT_EQ(all.count("line " + std::to_string(i)), 1u) << "epoch " << epoch << " line " << i;
    }
  }
  EXPECT_NE(by_run["0/0"], by_run["0/1"]);  // epochs are shuffled differently
  for (const char* rank : {"0", "1"}) {
    const auto& full = by_run[std::string(rank) + "/1"];
    const auto& resumed = by_run[std::string(rank) + "/1-resumed"];
    ASSERT_GE(full.size(), 8u);
    EXPECT_EQ(resumed, std::vector<std::string>(full.begin() + 8, full.end())) << rank;
    EXPECT_EQ(by_run[std::string(rank) + "/1-from-constructor"], resumed) << rank;
    const auto& next = by_run[std::string(rank) + "/2-from-constructor"];
    EXPECT_GE(next.size(), 101u) << rank;  // epoch 2 whole
    EXPECT_NE(next, full) << rank;
    EXPECT_EQ(by_run[std::string(rank) + "/1-pass-1"], resumed) << rank;
    EXPECT_EQ(by_run[std::string(rank) + "/1-pass-2"], full) << rank;
    EXPECT_EQ(by_run[std::string(rank) + "/1-batched-0"], full) << rank;
    EXPECT_EQ(by_run[std::string(rank) + "/1-batched-2"], full) << rank;
    EXPECT_EQ(by_run[std::string(rank) + "/1-tuned"], full) << rank;
  }
#endif
}

TEST_F(DatasetsPythonTest, WorkersKeepThePositionAcrossResumesEpochsAndGivenRanks) {
#ifndef TF_PYTHON_PACKAGE_DIR
  GTEST_SKIP() << "the tensorfleet_data module is not built here (pybind11 not found)";
#else
  const std::string output = RunScript(kPositionScript);
  if (HasFailure()) return;
  std::map<std::string, std::vector<std::string> > by_run;
  std::map<std::string, std::string> refused;  // what -> message
  for (const Json& j : JsonLines(output)) {
    if (j.contains("refused")) {
      refused[j["refused"]] = j["message"];
    } else {
      by_run[j["run"]] = j["samples"];
    }
  }
  const auto& full = by_run["full-0"];
  ASSERT_GE(full.size(), 101u) << output;
  EXPECT_NE(by_run["full-1"], full);
  EXPECT_NE(by_run["full-2"], by_run["full-1"]);
  // After one batch (worker 1's turn next) and after three: the rest of the rank's order.
  EXPECT_EQ(by_run["resumed-4"], std::vector<std::string>(full.begin() + 4, full.end()));
  EXPECT_EQ(by_run["resumed-12"], std::vector<std::string>(full.begin() + 12, full.end()));
  EXPECT_EQ(by_run["persistent-0"], by_run["resumed-4"]);
  EXPECT_EQ(by_run["persistent-1"], by_run["full-1"]);
  EXPECT_EQ(by_run["persistent-2"], by_run["full-2"]);
  EXPECT_EQ(by_run["given-rank"], full);
  for (const char* workers : {"new", "persistent"}) {
    EXPECT_EQ(by_run[std::string("no-set-epoch-") + workers + "-0"], by_run["resumed-4"])
        << workers;
    EXPECT_EQ(by_run[std::string("no-set-epoch-") + workers + "-1"], full) << workers;
  }
  ASSERT_TRUE(by_run.count("ended")) << output;
  EXPECT_TRUE(by_run["ended"].empty()) << output;

  auto says = [&](const std::string& what, const std::string& words) {
    EXPECT_NE(refused[what].find(words), std::string::npos) << what << ": " << refused[what];
  };
  says("unaligned",
       "samples_seen 6 is not a whole number of batches of 4: with 2 DataLoader "
       "workers an epoch can only be resumed at a batch boundary or at its end");
  ASSERT_TRUE(by_run.count("unaligned-cache")) << output;
  EXPECT_TRUE(by_run["unaligned-cache"].empty()) << "shards fetched before the refusal";
  says("past-the-end", "samples_seen " + std::to_string(full.size() + 4) +
                           " is past the end of this rank's share of the epoch (" +
                           std::to_string(full.size()) + " samples of dataset 'lines')");
  says("rank", "rank 5 is not one of world_size 4's ranks (0 to 3)");
  says("seed", "seed cannot be negative (got -1)");
  says("batch_size", "batch_size must be at least 1 (got -3)");
  says("local_rank", "local_rank 0 does not go with rank 1 on nodes of 2 (expected 1)");
  says("handoff_slots", "handoff_slots must be 0 to 1024 (got -1)");
  says("handoff_slot_bytes", "handoff_slot_bytes must be 1 to 1 GiB (got 0)");
#endif
}

TEST_F(DatasetsPythonTest, BatchedWorkersHandBatchesOverThroughSharedSlots) {
#ifndef TF_PYTHON_PACKAGE_DIR
  GTEST_SKIP() << "the tensorfleet_data module is not built here (pybind11 not found)";
#else
  const std::string output = RunScript(kHandoffScript);
  if (HasFailure()) return;
  std::map<std::string, Json> runs;
  for (Json& j : JsonLines(output)) {
    const std::string run = j["run"];
    runs[run] = std::move(j);
  }
  const std::vector<std::string> order = runs["main"]["samples"];
  ASSERT_EQ(order.size(), 203u) << output;
  EXPECT_EQ(std::set<std::string>(order.begin(), order.end()).size(), 203u);
  const int64_t batches = 51;                  // 203 samples in batches of 4
  using Counts = std::pair<int64_t, int64_t>;  // (shared, fallbacks)
  auto handoff = [&](const std::string& run) {
    const Json& h = runs[run]["handoff"];
    return Counts(h.value("shared", -1), h.value("fallbacks", -1));
  };
  for (const char* run :
       {"workers", "workers-again", "persistent-1", "persistent-2", "no-free-slot", "slot-freed",
        "too-big", "collate", "after-abandoned", "spawn"}) {
    EXPECT_EQ(runs[run]["samples"].get<std::vector<std::string> >(), order) << run;
    // (After the abandoned run slots may stay held by its workers, which are gone: they are
    // claimed again when needed.)
    if (std::string(run) != "after-abandoned") {
      EXPECT_EQ(runs[run]["held"], 0) << run << ": slots still held after the run";
    }
  }
  // Counts are the ring's since the dataset was made.
  EXPECT_EQ(handoff("workers"), Counts(batches, 0));
  EXPECT_EQ(handoff("workers-again"), Counts(2 * batches, 0));
  EXPECT_EQ(handoff("no-free-slot"), Counts(0, batches));
  // One slot for three workers: each batch goes through it or falls back, the first through it.
  EXPECT_EQ(handoff("slot-freed").first + handoff("slot-freed").second - batches, batches);
  EXPECT_GT(handoff("slot-freed").first, 0);
  EXPECT_EQ(handoff("too-big"), Counts(0, batches));
  EXPECT_EQ(handoff("persistent-1"), Counts(batches, 0));
  EXPECT_EQ(handoff("persistent-2"), Counts(2 * batches, 0));
  EXPECT_EQ(handoff("collate"), Counts(0, 0));
  const std::vector<std::string> first = runs["abandoned"]["samples"];
  EXPECT_EQ(first, std::vector<std::string>(order.begin(), order.begin() + 8));
  // Three slots, perhaps all held by the abandoned run's workers: the next run's first batch
  // claims one of theirs at least, and every batch arrives one way or the other.
  const auto [abandoned_shared, abandoned_fallbacks] = handoff("abandoned");
  const auto [after_shared, after_fallbacks] = handoff("after-abandoned");
  EXPECT_GT(after_shared, abandoned_shared);
  EXPECT_EQ(after_shared - abandoned_shared + after_fallbacks - abandoned_fallbacks, batches);
  EXPECT_EQ(handoff("spawn"), Counts(0, 0));
  EXPECT_EQ(runs["taken-twice"]["first"], "list");
  EXPECT_EQ(runs["taken-twice"]["second"], "ExceptionWrapper");
  EXPECT_NE(runs["taken-twice"]["why"].get<std::string>().find("no longer holds this batch"),
            std::string::npos)
      << runs["taken-twice"];
#endif
}

}  // namespace
}  // namespace tf::testing
