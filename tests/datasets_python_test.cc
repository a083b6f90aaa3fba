// The Python binding (python/tensorfleet_data) against a live server: /usr/bin/python3 runs
// torch's DataLoader with two workers over a dataset, for two ranks and two epochs, and every
// sample arrives exactly once per epoch; a resumed epoch continues where it stopped; batched
// mode gives the same samples in the same order.
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
    # workers: the same samples in the same order.
    for workers in (0, 2):
        batched = tensorfleet_data.Dataset("lines", seed=5, rank=rank, world_size=2,
                                           batch_size=4, cache_dir=cache, batched=True)
        batched.set_epoch(1)
        got = []
        for data, offsets in torch.utils.data.DataLoader(batched, batch_size=None,
                                                         num_workers=workers):
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

class DatasetsPythonTest : public ApiFixture {};

TEST_F(DatasetsPythonTest, TorchDataLoaderWithTwoWorkersReadsEverySampleOncePerEpoch) {
#ifndef TF_PYTHON_PACKAGE_DIR
  GTEST_SKIP() << "the tensorfleet_data module is not built here (pybind11 not found)";
#else
  const fs::path local = dir_.path() / "local";
  fs::create_directories(local);
  {
    std::ofstream lines(local / "lines.txt");
    for (int i = 0; i < 203; ++i) lines << "line " << i << "\n";
    std::ofstream(local / "read.py") << kScript;
  }
  ChildProcess create;
  ASSERT_TRUE(create.Start({TENSORFLEET_BINARY, "--server", app_->url(), "--token", admin_token_,
                            "dataset", "create", "lines", "--from", (local / "lines.txt").string(),
                            "--format", "text", "--shard-size", "4KiB"}));
  ASSERT_EQ(create.Wait(), 0) << create.output();

  ChildProcess python;
  ASSERT_TRUE(
      python.Start({TF_PYTHON, (local / "read.py").string(), (dir_.path() / "cache").string()},
                   {"PYTHONPATH=" TF_PYTHON_PACKAGE_DIR, "TENSORFLEET_SERVER_URL=" + app_->url(),
                    "TENSORFLEET_TOKEN=" + admin_token_}));
  int status = python.Wait();
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << python.output();

  std::map<std::string, std::vector<std::string> > by_run;  // "rank/epoch" -> samples
  std::istringstream out(python.output());
  std::string line;
  int index_samples = 0;
  std::string refused;
  while (std::getline(out, line)) {
    if (line.empty() || line[0] != '{') continue;
    Json j = Json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
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

}  // namespace
}  // namespace tf::testing
