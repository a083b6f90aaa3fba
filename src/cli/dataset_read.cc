// `tensorfleet dataset read`: one rank's share of an epoch, read by --workers threads as a
// DataLoader's workers would, with the rank from the flags or from RANK and WORLD_SIZE.
#include "cli/dataset_read.h"

#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <thread>

#include "base/mutex.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "client/dataset_client.h"
#include "datasets/dataset_reader.h"
#include "datasets/shard_fetcher.h"

namespace tf::cli {
namespace {

struct ReadFlags {
  std::string name;
  uint64_t seed = 0;
  int64_t epoch = 0;
  int rank = -1;        // -1: $RANK or 0
  int world_size = -1;  // -1: $WORLD_SIZE or 1
  int workers = 1;
  int64_t samples_seen = 0;
  std::string cache_dir;
  int window_shards = 4;
  int prefetch_shards = 4;
  int prefetch_threads = 2;
  int read_slots = 0;
  bool print = false;
};

// $name as a whole number from 0 up, or `fallback` where it is unset or empty.
Result<int> EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  int out = 0;
  const char* end = v + std::strlen(v);
  auto [at, ec] = std::from_chars(v, end, out);
  if (ec != std::errc() || at != end || out < 0) {
    return InvalidArgument(std::string("$") + name + " is '" + v +
                           "', not a whole number from 0 up");
  }
  return out;
}

// Seconds since the epoch with milliseconds, so that several readers' spans can be put
// together (bench/run_dataset_bench.sh does, for ranks run as separate processes).
std::string UnixSeconds(std::chrono::system_clock::time_point t) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  char out[32];
  std::snprintf(out, sizeof out, "%lld.%03lld", static_cast<long long>(ms / 1000),
                static_cast<long long>(ms % 1000));
  return out;
}

Status Read(const client::Connection& conn, ReadFlags f) {
  if (f.rank < 0) {
    TF_ASSIGN_OR_RETURN(f.rank, EnvInt("RANK", 0));
  }
  if (f.world_size < 0) {
    TF_ASSIGN_OR_RETURN(f.world_size, EnvInt("WORLD_SIZE", 1));
  }
  if (f.workers < 1 || f.workers > 256) return InvalidArgument("--workers must be 1 to 256");
  if (f.world_size < 1) {
    return InvalidArgument("--world-size (or $WORLD_SIZE) must be at least 1, got " +
                           std::to_string(f.world_size));
  }
  if (f.rank >= f.world_size) {
    return InvalidArgument("--rank (or $RANK) must be from 0 to " +
                           std::to_string(f.world_size - 1) + " with a world size of " +
                           std::to_string(f.world_size) + ", got " + std::to_string(f.rank));
  }
  if (f.cache_dir.empty()) {
    const char* env = std::getenv("TENSORFLEET_DATASET_CACHE");
    f.cache_dir = env != nullptr && *env != '\0'
                      ? env
                      : (std::filesystem::temp_directory_path() /
                         ("tensorfleet-datasets-" + std::to_string(::geteuid())))
                            .string();
  }
  TF_ASSIGN_OR_RETURN(client::ApiClient api, client::ApiClient::Connect(conn));
  TF_ASSIGN_OR_RETURN(datasets::DatasetIndex index,
                      client::FetchDatasetIndex(api.server(), api.token(), f.name));
  TF_ASSIGN_OR_RETURN(std::unique_ptr<datasets::ShardFetcher> owned,
                      client::MakeHttpShardFetcher(api.server(), api.token()));
  std::shared_ptr<datasets::ShardFetcher> fetcher = std::move(owned);

  const auto start = std::chrono::steady_clock::now();
  const auto wall_start = std::chrono::system_clock::now();
  std::atomic<int64_t> samples{0}, bytes{0};
  Mutex mu;  // guards failed and stdout
  Status failed;
  std::vector<std::thread> threads;
  for (int w = 0; w < f.workers; ++w) {
    threads.emplace_back([&, w] {
      datasets::PartitionParams p;
      p.seed = f.seed;
      p.epoch = f.epoch;
      p.num_nodes = f.world_size;
      p.node_rank = f.rank;
      p.num_workers = f.workers;
      p.worker_id = w;
      p.window_shards = f.window_shards;
      datasets::ReaderOptions o;
      o.cache_dir = f.cache_dir;
      o.prefetch_shards = f.prefetch_shards;
      o.prefetch_threads = f.prefetch_threads;
      o.read_slots = f.read_slots;
      auto reader = datasets::DatasetReader::Open(index, p, f.samples_seen, o, fetcher);
      Status s = reader.status();
      while (s.ok()) {
        auto next = (*reader)->Next();
        if (!next.ok()) {
          s = next.status();
          break;
        }
        if (!next->has_value()) break;
        samples.fetch_add(1, std::memory_order_relaxed);
        bytes.fetch_add((*next)->data.size(), std::memory_order_relaxed);
        if (f.print) {
          MutexLock lock(mu);
          std::cout << (*next)->index << "\t" << (*next)->data << "\n";
        }
      }
      if (!s.ok()) {
        MutexLock lock(mu);
        if (failed.ok()) failed = s;
      }
    });
  }
  for (auto& t : threads) t.join();
  TF_RETURN_IF_ERROR(failed);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << "read " << samples.load() << " samples of " << f.name << " (rank " << f.rank
            << " of " << f.world_size << ", epoch " << f.epoch << ", " << f.workers
            << " workers): " << FormatBytes(bytes.load()) << " in " << seconds << " s, "
            << static_cast<int64_t>(samples.load() / std::max(seconds, 1e-9)) << " samples/s, "
            << bytes.load() / std::max(seconds, 1e-9) / 1e6 << " MB/s, from "
            << UnixSeconds(wall_start) << " to " << UnixSeconds(std::chrono::system_clock::now())
            << " (Unix time)\n";
  return OkStatus();
}

}  // namespace

void AddDatasetReadCommand(CLI::App* dataset, client::Connection& conn, int& exit_code) {
  auto f = std::make_shared<ReadFlags>();
  auto* cmd = dataset->add_subcommand(
      "read", "Read a rank's share of an epoch (statistics on stderr; --print for the samples)");
  cmd->add_option("name", f->name, "Dataset name")->required();
  cmd->add_option("--seed", f->seed, "Shuffle seed")->capture_default_str();
  cmd->add_option("--epoch", f->epoch, "Epoch")->capture_default_str();
  // -1 stands for "not given" in ReadFlags: a negative number given is an error, not that.
  auto at_least = [](int least) {
    return [least](const std::string& v) -> std::string {
      int n = 0;
      auto [at, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec == std::errc() && at == v.data() + v.size() && n >= least) return "";
      return "must be a whole number from " + std::to_string(least) + " up, got '" + v + "'";
    };
  };
  cmd->add_option("--rank", f->rank, "This rank (default: $RANK or 0)")->check(at_least(0));
  cmd->add_option("--world-size", f->world_size, "Ranks in all (default: $WORLD_SIZE or 1)")
      ->check(at_least(1));
  cmd->add_option("--workers", f->workers, "Reader threads, as DataLoader workers")
      ->capture_default_str();
  cmd->add_option("--samples-seen", f->samples_seen, "Resume after this many samples of the rank");
  cmd->add_option("--cache-dir", f->cache_dir,
                  "Shard cache (default: $TENSORFLEET_DATASET_CACHE or a temporary directory)");
  cmd->add_option("--window-shards", f->window_shards, "Shards shuffled together")
      ->capture_default_str();
  cmd->add_option("--prefetch", f->prefetch_shards, "Shards downloaded ahead of the window")
      ->capture_default_str();
  cmd->add_option("--prefetch-threads", f->prefetch_threads,
                  "Threads reading shards ahead, each one shard at a time")
      ->capture_default_str();
  cmd->add_option("--read-slots", f->read_slots,
                  "Shard pieces read from the disk at once by all readers of the cache "
                  "directory (0: no bound; 2 to 4 for a disk that serves few streams best)")
      ->capture_default_str();
  cmd->add_flag("--print", f->print, "Print each sample as INDEX<TAB>BYTES on stdout");
  RunStatus(cmd, exit_code, [&conn, f] { return Read(conn, *f); });
}

}  // namespace tf::cli
