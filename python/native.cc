// tensorfleet_data._native: the C++ dataset reader (src/datasets/dataset_reader.h) for Python.
// The PyTorch IterableDataset on top of it is plain Python (tensorfleet_data/__init__.py).
#include <pybind11/pybind11.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/dataset_client.h"
#include "datasets/batch_ring.h"
#include "datasets/buffer_pool.h"
#include "datasets/dataset_reader.h"
#include "datasets/shard_fetcher.h"

namespace py = pybind11;

namespace {

using tf::datasets::BatchRing;
using tf::datasets::BufferPool;
using tf::datasets::DatasetIndex;
using tf::datasets::DatasetReader;
using tf::datasets::PartitionParams;
using tf::datasets::PooledBuffer;

[[noreturn]] void Raise(const tf::Status& status) {
  if (status.code() == tf::StatusCode::kNotFound) throw py::key_error(status.message());
  if (status.code() == tf::StatusCode::kInvalidArgument) throw py::value_error(status.message());
  throw std::runtime_error(std::string(tf::StatusCodeName(status.code())) + ": " +
                           status.message());
}

DatasetIndex FetchIndex(const std::string& server, const std::string& token,
                        const std::string& name) {
  tf::Result<DatasetIndex> index = [&] {
    py::gil_scoped_release unlocked;
    return tf::client::FetchDatasetIndex(server, token, name);
  }();
  if (!index.ok()) Raise(index.status());
  return *std::move(index);
}

// A batch's bytes in memory of the batch pool (src/datasets/buffer_pool.h), which torch.frombuffer
// makes the batch's tensor over: the memory goes back to the pool once the tensor is gone.
class BatchBytes {
 public:
  BatchBytes(PooledBuffer buffer, uint64_t size) : buffer_(std::move(buffer)), size_(size) {}
  char* data() const { return buffer_.data(); }
  uint64_t size() const { return size_; }

 private:
  PooledBuffer buffer_;
  uint64_t size_;
};

PooledBuffer BatchBuffer(uint64_t bytes) {
  tf::Result<PooledBuffer> buffer = BufferPool::ForBatches().Get(bytes);
  if (!buffer.ok()) Raise(buffer.status());
  return std::move(buffer).value();
}

// One worker's iterator over its share of an epoch; yields (dataset index, bytes).
class Reader {
 public:
  Reader(const std::string& server, const std::string& token, const std::string& name,
         uint64_t seed, int64_t epoch, int num_nodes, int node_rank, int ranks_per_node,
         int local_rank, int num_workers, int worker_id, int window_shards, int64_t block,
         int64_t samples_seen, const std::string& cache_dir, uint64_t cache_bytes,
         int prefetch_shards, int prefetch_threads, int read_slots) {
    DatasetIndex index = FetchIndex(server, token, name);
    PartitionParams p{seed,       epoch,       num_nodes, node_rank,     ranks_per_node,
                      local_rank, num_workers, worker_id, window_shards, block};
    tf::datasets::ReaderOptions options;
    options.cache_dir = cache_dir;
    options.cache_bytes = cache_bytes;
    options.prefetch_shards = prefetch_shards;
    options.prefetch_threads = prefetch_threads;
    options.read_slots = read_slots;
    auto fetcher = tf::client::MakeHttpShardFetcher(server, token);
    if (!fetcher.ok()) Raise(fetcher.status());
    auto reader = DatasetReader::Open(
        std::move(index), p, samples_seen, options,
        std::shared_ptr<tf::datasets::ShardFetcher>(std::move(fetcher).value()));
    if (!reader.ok()) Raise(reader.status());
    reader_ = std::move(reader).value();
  }

  py::tuple Next() {
    tf::Result<std::optional<tf::datasets::Sample>> next = [&] {
      py::gil_scoped_release unlocked;
      return reader_->Next();
    }();
    if (!next.ok()) Raise(next.status());
    if (!next->has_value()) throw py::stop_iteration();
    const tf::datasets::Sample& s = **next;
    return py::make_tuple(s.index, py::bytes(s.data.data(), s.data.size()));
  }

  // Up to `n` next samples as one buffer: (BatchBytes of their bytes back to back, bytearray of
  // n + 1 little-endian int64 offsets into it). Raises StopIteration once nothing is left.
  py::tuple NextBatch(int64_t n) {
    if (!failed_.ok()) Raise(failed_);
    // The last batch's size is the first guess; a buffer too small moves into one twice as big.
    PooledBuffer data;
    uint64_t used = 0;
    tf::Status failed;
    py::bytearray offsets = ReadBatch(n, [&](std::string_view sample) {
      if (!failed.ok()) return;
      if (used + sample.size() > data.capacity()) {
        tf::Result<PooledBuffer> bigger = BufferPool::ForBatches().Get(
            std::max({used + sample.size(), 2 * data.capacity(), last_batch_bytes_}));
        if (!bigger.ok()) {
          failed = bigger.status();
          return;
        }
        if (used > 0) std::memcpy(bigger->data(), data.data(), used);
        data = std::move(bigger).value();
      }
      std::memcpy(data.data() + used, sample.data(), sample.size());
      used += sample.size();
    });
    if (!failed.ok()) {
      // The samples read past the failure are gone from the reader: as the reader does with its
      // own errors, every later call fails too, rather than go on without them.
      failed_ = failed;
      Raise(failed);
    }
    last_batch_bytes_ = used;
    return py::make_tuple(BatchBytes(std::move(data), used), std::move(offsets));
  }

  // The same written into a slot of `ring` that this process claims: (slot, ticket, bytes in
  // it, offsets). Where no slot is free or the batch does not fit in one, (-1, 0, bytearray of
  // the bytes, offsets), counted as one of the ring's fallbacks, and no slot is held.
  py::tuple NextSharedBatch(BatchRing& ring, int64_t n) {
    uint64_t ticket = 0;
    const int slot = ring.Claim(::getpid(), &ticket);
    // Gives the slot back unless the batch ends up in it.
    std::unique_ptr<BatchRing, std::function<void(BatchRing*)>> held(
        slot >= 0 ? &ring : nullptr, [slot, ticket](BatchRing* r) { r->Release(slot, ticket); });
    char* into = slot >= 0 ? ring.slot_data(slot) : nullptr;
    uint64_t used = 0;
    std::string spilled;
    py::bytearray offsets = ReadBatch(n, [&](std::string_view sample) {
      if (into != nullptr && used + sample.size() <= ring.slot_bytes()) {
        std::memcpy(into + used, sample.data(), sample.size());
        used += sample.size();
        return;
      }
      if (into != nullptr) {  // too big for a slot: the batch goes the ordinary way
        spilled.assign(into, used);
        into = nullptr;
      }
      spilled.append(sample);
    });
    if (into != nullptr) {
      py::tuple in_slot = py::make_tuple(slot, ticket, used, std::move(offsets));
      (void)held.release();  // the slot is the caller's now, given back when it is done with it
      return in_slot;
    }
    ring.CountFallback();
    return py::make_tuple(-1, 0, py::bytearray(spilled.data(), spilled.size()), std::move(offsets));
  }

  int64_t rank_samples() const { return reader_->rank_samples(); }

 private:
  // Reads up to `n` next samples, handing each to `add` with the GIL released, and returns
  // their n + 1 offsets (little-endian int64) as a bytearray. Raises the reader's error, or
  // StopIteration if nothing was left.
  template <typename Add>
  py::bytearray ReadBatch(int64_t n, Add add) {
    if (n < 1) throw py::value_error("a batch needs at least one sample, not " + std::to_string(n));
    std::vector<int64_t> offsets{0};
    tf::Status failed;
    {
      py::gil_scoped_release unlocked;
      while (static_cast<int64_t>(offsets.size()) <= n) {
        tf::Result<std::optional<tf::datasets::Sample>> next = reader_->Next();
        if (!next.ok()) {
          failed = next.status();
          break;
        }
        if (!next->has_value()) break;
        add((*next)->data);
        offsets.push_back(offsets.back() + static_cast<int64_t>((*next)->data.size()));
      }
    }
    if (!failed.ok()) Raise(failed);
    if (offsets.size() == 1) throw py::stop_iteration();
    return py::bytearray(reinterpret_cast<const char*>(offsets.data()), offsets.size() * 8);
  }

  std::unique_ptr<DatasetReader> reader_;
  uint64_t last_batch_bytes_ = 0;
  tf::Status failed_;  // a batch that could not be made: what every later NextBatch raises
};

// BatchRing::Take into a buffer of the batch pool, the copy made without the GIL.
BatchBytes TakeBatch(BatchRing& ring, int slot, uint64_t ticket, uint64_t bytes) {
  if (bytes > ring.slot_bytes()) {
    throw py::value_error("a batch of " + std::to_string(bytes) +
                          " bytes cannot be in a ring slot of " +
                          std::to_string(ring.slot_bytes()));
  }
  PooledBuffer out = BatchBuffer(bytes);
  tf::Status taken;
  {
    py::gil_scoped_release unlocked;
    taken = ring.Take(slot, ticket, bytes, out.data());
  }
  if (!taken.ok()) Raise(taken);
  return BatchBytes(std::move(out), bytes);
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "tensorfleet's dataset reader (docs/datasets.md)";
  m.def(
      "fetch_index",
      [](const std::string& server, const std::string& token, const std::string& name) {
        return tf::datasets::DatasetIndexToJson(FetchIndex(server, token, name)).dump();
      },
      py::arg("server"), py::arg("token"), py::arg("name"), "The dataset's index as JSON text.");
  m.def(
      "rank_samples",
      [](const std::string& server, const std::string& token, const std::string& name,
         int num_nodes, int node_rank, int ranks_per_node, int local_rank) {
        PartitionParams p;
        p.num_nodes = num_nodes;
        p.node_rank = node_rank;
        p.ranks_per_node = ranks_per_node;
        p.local_rank = local_rank;
        if (tf::Status valid = tf::datasets::ValidatePartition(p); !valid.ok()) Raise(valid);
        return tf::datasets::RankShare(FetchIndex(server, token, name).samples, p);
      },
      py::arg("server"), py::arg("token"), py::arg("name"), py::arg("num_nodes"),
      py::arg("node_rank"), py::arg("ranks_per_node"), py::arg("local_rank"),
      "How many samples of an epoch the rank reads (Reader.rank_samples), without reading.");
  py::class_<Reader>(m, "Reader")
      .def(py::init<const std::string&, const std::string&, const std::string&, uint64_t, int64_t,
                    int, int, int, int, int, int, int, int64_t, int64_t, const std::string&,
                    uint64_t, int, int, int>(),
           py::arg("server"), py::arg("token"), py::arg("name"), py::arg("seed"), py::arg("epoch"),
           py::arg("num_nodes"), py::arg("node_rank"), py::arg("ranks_per_node"),
           py::arg("local_rank"), py::arg("num_workers"), py::arg("worker_id"),
           py::arg("window_shards"), py::arg("block"), py::arg("samples_seen"),
           py::arg("cache_dir"), py::arg("cache_bytes"), py::arg("prefetch_shards"),
           py::arg("prefetch_threads"), py::arg("read_slots"))
      .def("__iter__", [](Reader& r) -> Reader& { return r; })
      .def("__next__", &Reader::Next)
      .def("next_batch", &Reader::NextBatch, py::arg("n"),
           "Up to n samples as (data, offsets): BatchBytes of their bytes, and a bytearray of "
           "n + 1 int64s.")
      .def("next_shared_batch", &Reader::NextSharedBatch, py::arg("ring"), py::arg("n"),
           "Up to n samples written into a slot of ring that this process claims: (slot, "
           "ticket, bytes, offsets); (-1, 0, data, offsets) where no slot is free or they do "
           "not fit.")
      .def_property_readonly("rank_samples", &Reader::rank_samples);
  py::class_<BatchBytes>(m, "BatchBytes", py::buffer_protocol(),
                         "A batch's bytes in recycled memory (src/datasets/buffer_pool.h), given "
                         "back when nothing refers to it; a buffer for torch.frombuffer.")
      .def_buffer([](BatchBytes& b) {
        return py::buffer_info(b.data(), 1, py::format_descriptor<uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(b.size())}, {py::ssize_t{1}});
      })
      .def("__len__", &BatchBytes::size)
      .def("__bytes__", [](const BatchBytes& b) { return py::bytes(b.data(), b.size()); });
  py::class_<BatchRing>(m, "BatchRing",
                        "Shared memory for handing batches from DataLoader workers to the main "
                        "process (src/datasets/batch_ring.h); make it before they are forked.")
      .def(py::init([](int slots, uint64_t slot_bytes) {
             auto ring = BatchRing::Create(slots, slot_bytes);
             if (!ring.ok()) Raise(ring.status());
             return std::move(ring).value();
           }),
           py::arg("slots"), py::arg("slot_bytes"))
      .def("take", &TakeBatch, py::arg("slot"), py::arg("ticket"), py::arg("bytes"),
           "Copies a claimed slot's first `bytes` out into BatchBytes and frees the slot.")
      .def("release", &BatchRing::Release, py::arg("slot"), py::arg("ticket"),
           "Frees a claimed slot without reading it.")
      .def("holder", &BatchRing::holder, py::arg("slot"), "The process holding a slot, 0 if free.")
      .def(
          "claim",
          [](BatchRing& r) {
            uint64_t ticket = 0;
            const int slot = r.Claim(::getpid(), &ticket);
            return py::make_tuple(slot, ticket);
          },
          "Claims a free slot for this process: (slot, ticket), slot -1 if none. For tests, "
          "which hold slots so that batches cannot have them.")
      .def_property_readonly("slots", &BatchRing::slots)
      .def_property_readonly("slot_bytes", &BatchRing::slot_bytes)
      .def_property_readonly("taken", &BatchRing::taken,
                             "Batches handed over through the slots, by every process.")
      .def_property_readonly("fallbacks", &BatchRing::fallbacks,
                             "Batches that went the ordinary way (no slot free, or too big).");
}
