#include "datasets/dataset_reader.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <thread>
#include <tuple>
#include <vector>

#include "base/mutex.h"
#include "datasets/shard_format.h"

namespace tf::datasets {
namespace {

// A window this worker reads from, with the shards it needs in order.
struct PlannedWindow {
  int64_t index = 0;
  Window window;
};

// A shard piece to bring in: the shard, and the samples of it the reader will read.
struct Scheduled {
  ShardInfo shard;
  ShardPiece piece;
};

// Which samples of `piece` (a piece of window `w`, whose order is `order`) one worker returns:
// those at a position past `seen` that the worker takes, by their index in the shard, in the
// shard's order.
std::vector<int64_t> WorkerSamplesOf(const ShardPiece& piece, const PlannedWindow& w,
                                     const std::vector<SampleRef>& order,
                                     const PartitionParams& params, int64_t seen) {
  std::vector<int64_t> out;
  if (params.num_workers == 1 && w.window.first_position >= seen) {
    out.reserve(static_cast<size_t>(piece.end - piece.begin));
    for (int64_t i = piece.begin; i < piece.end; ++i) out.push_back(i);
    return out;
  }
  for (size_t k = 0; k < order.size(); ++k) {
    const int64_t position = w.window.first_position + static_cast<int64_t>(k);
    if (order[k].shard != piece.shard || position < seen || !WorkerTakes(position, params)) {
      continue;
    }
    out.push_back(order[k].index);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Downloads the shards of `schedule` in order on `threads` threads of its own, maps each and
// reads in the bytes of its piece (which puts them in the page cache and in the mapping), staying
// at most `ahead` shards past the one the reader last asked for: the disk reads the next window
// while the reader works through this one, with a bounded number of bytes in flight. With two
// threads two shards are read at once: the disk serves two streams faster than one.
class Prefetcher {
 public:
  Prefetcher(std::vector<Scheduled> schedule, int ahead, int threads, int read_slots,
             ShardCache& cache, ShardFetcher& fetcher)
      : schedule_(std::move(schedule)),
        ahead_(ahead),
        read_slots_(read_slots),
        cache_(cache),
        fetcher_(fetcher) {
    for (int t = 0; t < threads; ++t) threads_.emplace_back([this] { Run(); });
  }
  ~Prefetcher() {
    {
      MutexLock lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
    // Whatever was brought in and not taken is released.
    for (auto& [i, t] : done_) {
      if (t.downloaded.ok()) cache_.Release(schedule_[i].shard);
    }
  }

  // Waits for schedule entry i and returns the shard mapped, with its piece read in, or why it
  // could not be: a failed download, or a mapping or read that failed (then the caller maps it
  // again itself, downloading it once more if needed). Either way after a successful download
  // the caller owns the hold on the shard (ShardCache::Release).
  struct Taken {
    Status downloaded;
    Result<std::shared_ptr<const MappedShard>> mapped = Internal("not mapped");
  };
  Taken Take(size_t i) {
    MutexLock lock(mu_);
    wanted_ = std::max(wanted_, i);
    cv_.notify_all();
    lock.Wait(cv_, [&]() REQUIRES(mu_) { return done_.count(i) > 0; });
    Taken t = std::move(done_.at(i));
    done_.erase(i);
    return t;
  }

 private:
  void Run() {
    for (;;) {
      size_t i = 0;
      {
        MutexLock lock(mu_);
        if (next_ >= schedule_.size()) return;
        i = next_++;
        lock.Wait(cv_, [&]() REQUIRES(mu_) { return stop_ || i <= wanted_ + ahead_; });
        if (stop_) return;
      }
      Taken t = Bring(schedule_[i]);
      {
        MutexLock lock(mu_);
        done_.emplace(i, std::move(t));
      }
      cv_.notify_all();
    }
  }

  // Here, on a prefetch thread, so that the disk reads the next shards while the reader works
  // through the current window. Only the piece's bytes are read in: a shard cut between two
  // ranks is half read by each. With a turn from the node's read slots: a slot that cannot be
  // had (the lock file cannot be made) only loses the bound, never the read.
  Taken Bring(const Scheduled& s) {
    Taken t;
    t.downloaded = cache_.Ensure(s.shard, fetcher_);
    if (!t.downloaded.ok()) return t;
    t.mapped = cache_.Map(s.shard);
    if (!t.mapped.ok()) return t;
    const MappedShard& mapped = **t.mapped;
    // A whole shard is read in at once; for a piece, its range is looked up in the shard's table
    // first (a small read at its end, which waits behind the other readers' large ones). A
    // damaged structure is left for the reader to find (it downloads the shard again).
    uint64_t offset = 0, length = mapped.bytes().size();
    if (s.piece.begin != 0 || s.piece.end != s.shard.samples) {
      auto view = ShardView::Open(mapped.bytes(), s.shard.key);
      if (!view.ok()) return t;
      std::tie(offset, length) = view->SampleBytes(s.piece.begin, s.piece.end);
    }
    // Bytes another reader brought into the page cache need no turn at the disk: only this
    // process's page tables are filled (the workers of a DataLoader each map every shard).
    std::optional<Result<ReadSlot>> slot;
    if (read_slots_ > 0 && !mapped.Resident(offset, length)) {
      slot.emplace(cache_.TakeReadSlot(read_slots_));
    }
    Status read = mapped.Populate(offset, length);
    if (!read.ok()) t.mapped = read;
    return t;
  }

  const std::vector<Scheduled> schedule_;
  const size_t ahead_;
  const int read_slots_;
  ShardCache& cache_;
  ShardFetcher& fetcher_;
  Mutex mu_;
  std::condition_variable cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  size_t wanted_ GUARDED_BY(mu_) = 0;
  size_t next_ GUARDED_BY(mu_) = 0;  // the next entry a thread takes up
  std::map<size_t, Taken> done_ GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

class ReaderImpl final : public DatasetReader {
 public:
  ReaderImpl(DatasetIndex index, PartitionParams params, int64_t seen, RankPlan plan,
             std::unique_ptr<ShardCache> cache, std::shared_ptr<ShardFetcher> fetcher,
             const ReaderOptions& options)
      : index_(std::move(index)),
        params_(params),
        seen_(seen),
        rank_samples_(plan.samples),
        cache_(std::move(cache)),
        fetcher_(std::move(fetcher)) {
    std::vector<Scheduled> schedule;
    for (size_t w = 0; w < plan.windows.size(); ++w) {
      const Window& window = plan.windows[w];
      if (!HasWork(window)) continue;
      windows_.push_back(PlannedWindow{static_cast<int64_t>(w), window});
      for (const ShardPiece& piece : window.pieces) {
        schedule.push_back(Scheduled{index_.shards[piece.shard], piece});
      }
    }
    prefetcher_ = std::make_unique<Prefetcher>(std::move(schedule), options.prefetch_shards,
                                               options.prefetch_threads, options.read_slots,
                                               *cache_, *fetcher_);
  }

  ~ReaderImpl() override {
    ReleaseWindow();
    prefetcher_.reset();
  }

  Result<std::optional<Sample>> Next() override {
    if (!failed_.ok()) return failed_;
    Result<std::optional<Sample>> next = ReadNext();
    if (!next.ok()) failed_ = next.status();
    return next;
  }

  int64_t rank_samples() const override { return rank_samples_; }
  const ShardCache& cache() const override { return *cache_; }
  int64_t checked_on_arrival() const override { return checked_on_arrival_; }

 private:
  // Next's work. A step that fails may already have moved on (past the sample it could not
  // check, or into the window it could not enter), so Next keeps the first error for good.
  Result<std::optional<Sample>> ReadNext() {
    for (;;) {
      while (at_ < order_.size()) {
        const int64_t position = current_.window.first_position + static_cast<int64_t>(at_);
        const SampleRef ref = order_[at_++];
        if (position < seen_ || !WorkerTakes(position, params_)) continue;
        PrefetchNext();  // before this sample's check, which then overlaps the next one's loads
        TF_ASSIGN_OR_RETURN(std::string_view data, Read(ref));
        return std::optional<Sample>(
            Sample{index_.shards[ref.shard].first_sample + ref.index, position, data});
      }
      if (next_window_ >= windows_.size()) return std::optional<Sample>();
      TF_RETURN_IF_ERROR(EnterWindow(windows_[next_window_++]));
    }
  }

  struct Open {
    std::shared_ptr<const MappedShard> mapped;
    std::optional<ShardView> view;
    bool refetched = false;
    bool checked = false;  // this worker's samples of it were checked on arrival
  };

  bool HasWork(const Window& w) const {
    const int64_t end = w.first_position + w.samples;
    for (int64_t p = std::max(seen_, w.first_position); p < end; ++p) {
      if (WorkerTakes(p, params_)) return true;
      // Positions go to workers in blocks: past one whole round, no position is this worker's.
      if (p - std::max(seen_, w.first_position) > params_.block * params_.num_workers) break;
    }
    return false;
  }

  // Takes the window's pieces as the prefetch threads bring them in, and checks each piece's
  // samples that this worker returns against their CRC-32C as soon as it has it, front to back
  // in the shard, while the disk is still reading the window's next pieces: the checks of a
  // rank's last window then no longer all wait until its disk reading is done, and Next()
  // returns the samples unchecked. If any of them fails, none of the piece is trusted: Next()
  // checks each sample as it returns it, and downloads the shard again at the first that fails.
  Status EnterWindow(const PlannedWindow& w) {
    ReleaseWindow();
    current_ = w;
    std::vector<SampleRef> order = WindowOrder(w.window, params_, w.index);
    for (const ShardPiece& piece : w.window.pieces) {
      Prefetcher::Taken got = prefetcher_->Take(scheduled_++);
      if (!got.downloaded.ok()) return got.downloaded;
      const ShardInfo& shard = index_.shards[piece.shard];
      held_.push_back(shard);
      std::shared_ptr<const MappedShard> mapped;
      if (got.mapped.ok()) mapped = std::move(got.mapped).value();
      TF_RETURN_IF_ERROR(MapShard(piece.shard, /*refetched=*/false, std::move(mapped)));
      Open& o = open_.at(piece.shard);
      o.checked = CheckOnArrival(*o.view, piece, w, order);
    }
    order_ = std::move(order);
    at_ = 0;
    return OkStatus();
  }

  bool CheckOnArrival(const ShardView& view, const ShardPiece& piece, const PlannedWindow& w,
                      const std::vector<SampleRef>& order) const {
    for (int64_t i : WorkerSamplesOf(piece, w, order, params_, seen_)) {
      if (!view.Sample(static_cast<uint64_t>(i)).ok()) return false;
    }
    return true;
  }

  void ReleaseWindow() {
    for (const ShardInfo& s : held_) cache_->Release(s);
    held_.clear();
    open_.clear();
    order_.clear();
    at_ = 0;
  }

  std::string ShardName(const ShardInfo& s) const { return "tf://" + s.bucket + "/" + s.key; }

  // Checks the structure of a shard the cache holds, mapping it and reading it in unless
  // `premapped` is given; a damaged one is downloaded again once (unless it already was).
  Status MapShard(int64_t shard, bool refetched,
                  std::shared_ptr<const MappedShard> premapped = nullptr) {
    const ShardInfo& info = index_.shards[shard];
    for (;;) {
      Open o;
      o.refetched = refetched;
      const bool own = premapped == nullptr;
      Result<std::shared_ptr<const MappedShard>> mapped =
          own ? cache_->Map(info)
              : Result<std::shared_ptr<const MappedShard>>(std::move(premapped));
      premapped = nullptr;
      if (mapped.ok() && own) {
        Status read = (*mapped)->PopulateAll();
        if (!read.ok()) mapped = read;
      }
      Status problem = mapped.status();
      if (mapped.ok()) {
        o.mapped = std::move(mapped).value();
        auto view = ShardView::Open(o.mapped->bytes(), ShardName(info));
        if (view.ok() && view->sample_count() != static_cast<uint64_t>(info.samples)) {
          problem = InvalidArgument("shard " + ShardName(info) + " holds " +
                                    std::to_string(view->sample_count()) +
                                    " samples, the index says " + std::to_string(info.samples));
        } else if (view.ok()) {
          o.view = std::move(view).value();
          open_[shard] = std::move(o);
          return OkStatus();
        } else {
          problem = view.status();
        }
      }
      if (refetched) return Internal(problem.message() + " (also after downloading it again)");
      refetched = true;
      TF_RETURN_IF_ERROR(Refetch(info, o.mapped.get()));
    }
  }

  // Downloads a shard found damaged again; `damaged` is its mapping, if it could be mapped.
  Status Refetch(const ShardInfo& info, const MappedShard* damaged) {
    cache_->Drop(info, damaged);
    TF_RETURN_IF_ERROR(cache_->Ensure(info, *fetcher_));
    held_.push_back(info);
    return OkStatus();
  }

  // Starts loading the sample after the one being returned into the CPU's caches, so that its
  // CRC-32C does not wait on memory: the window's order jumps around the shards, and the loads
  // overlap the check of the current sample and the caller's work on it.
  void PrefetchNext() {
    // Positions go to workers in blocks: within one round of blocks, one is this worker's.
    const size_t round = static_cast<size_t>(params_.block) * params_.num_workers;
    for (size_t i = at_; i < order_.size() && i < at_ + round; ++i) {
      const int64_t position = current_.window.first_position + static_cast<int64_t>(i);
      if (position < seen_ || !WorkerTakes(position, params_)) continue;
      auto it = open_.find(order_[i].shard);
      if (it != open_.end() && !it->second.checked) it->second.view->Prefetch(order_[i].index);
      return;
    }
  }

  Result<std::string_view> Read(const SampleRef& ref) {
    Open& o = open_.at(ref.shard);
    if (o.checked) {
      ++checked_on_arrival_;
      return o.view->SampleAlreadyChecked(ref.index);
    }
    auto sample = o.view->Sample(ref.index);
    if (sample.ok()) return sample;
    if (o.refetched) {
      return Internal(sample.status().message() + " (also after downloading it again)");
    }
    const ShardInfo& info = index_.shards[ref.shard];
    TF_RETURN_IF_ERROR(Refetch(info, o.mapped.get()));
    open_.erase(ref.shard);
    TF_RETURN_IF_ERROR(MapShard(ref.shard, /*refetched=*/true));
    auto again = open_.at(ref.shard).view->Sample(ref.index);
    if (again.ok()) return again;
    return Internal(again.status().message() + " (also after downloading it again)");
  }

  const DatasetIndex index_;
  const PartitionParams params_;
  const int64_t seen_;
  const int64_t rank_samples_;
  std::unique_ptr<ShardCache> cache_;
  std::shared_ptr<ShardFetcher> fetcher_;
  std::vector<PlannedWindow> windows_;  // the windows with samples for this worker
  size_t next_window_ = 0;
  size_t scheduled_ = 0;  // the next prefetch schedule entry to take
  PlannedWindow current_;
  std::vector<SampleRef> order_;  // the current window in the rank's order
  size_t at_ = 0;
  std::map<int64_t, Open> open_;  // the current window's shards
  std::vector<ShardInfo> held_;   // cache holds to release with the window
  int64_t checked_on_arrival_ = 0;
  Status failed_;  // the first error Next returned: every later call returns it too
  std::unique_ptr<Prefetcher> prefetcher_;
};

}  // namespace

Result<std::unique_ptr<DatasetReader>> DatasetReader::Open(DatasetIndex index,
                                                           PartitionParams params,
                                                           int64_t samples_seen,
                                                           ReaderOptions options,
                                                           std::shared_ptr<ShardFetcher> fetcher) {
  TF_RETURN_IF_ERROR(ValidatePartition(params));
  if (samples_seen < 0) return InvalidArgument("samples_seen must not be negative");
  if (options.prefetch_shards < 0) return InvalidArgument("prefetch_shards must not be negative");
  if (options.prefetch_threads < 1 || options.prefetch_threads > 16) {
    return InvalidArgument("prefetch_threads must be 1 to 16, not " +
                           std::to_string(options.prefetch_threads));
  }
  if (options.read_slots < 0 || options.read_slots > 64) {
    return InvalidArgument("read_slots must be 0 to 64, not " + std::to_string(options.read_slots));
  }
  if (options.cache_dir.empty()) return InvalidArgument("the reader needs a cache directory");
  std::vector<int64_t> sizes;
  for (const ShardInfo& s : index.shards) sizes.push_back(s.samples);
  RankPlan plan = PlanRank(sizes, params);
  // At the end is where an epoch that was read whole stands; past it, no position of this rank
  // is (a count of every rank's samples, or of another dataset, saved as this rank's).
  if (samples_seen > plan.samples) {
    return InvalidArgument("samples_seen " + std::to_string(samples_seen) +
                           " is past the end of this rank's share of the epoch (" +
                           std::to_string(plan.samples) + " samples of dataset '" + index.name +
                           "'): it counts the samples this rank has seen of the epoch");
  }
  TF_ASSIGN_OR_RETURN(std::unique_ptr<ShardCache> cache,
                      ShardCache::Open(options.cache_dir, options.cache_bytes));
  return std::unique_ptr<DatasetReader>(new ReaderImpl(std::move(index), params, samples_seen,
                                                       std::move(plan), std::move(cache),
                                                       std::move(fetcher), options));
}

}  // namespace tf::datasets
