// tensorfleet_data._native: the C++ dataset reader (src/datasets/dataset_reader.h) for Python.
// The PyTorch IterableDataset on top of it is plain Python (tensorfleet_data/__init__.py).
#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "datasets/dataset_reader.h"
#include "datasets/shard_fetcher.h"

namespace py = pybind11;

namespace {

using tf::datasets::DatasetIndex;
using tf::datasets::DatasetReader;
using tf::datasets::PartitionParams;

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
    return tf::datasets::FetchDatasetIndex(server, token, name);
  }();
  if (!index.ok()) Raise(index.status());
  return *std::move(index);
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
    auto fetcher = tf::datasets::MakeHttpShardFetcher(server, token);
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

  // Up to `n` next samples as one buffer: (bytearray of their bytes back to back, bytearray of
  // n + 1 little-endian int64 offsets into it). Raises StopIteration once nothing is left.
  py::tuple NextBatch(int64_t n) {
    if (n < 1) throw py::value_error("a batch needs at least one sample, not " + std::to_string(n));
    std::string data;
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
        data.append((*next)->data);
        offsets.push_back(static_cast<int64_t>(data.size()));
      }
    }
    if (!failed.ok()) Raise(failed);
    if (offsets.size() == 1) throw py::stop_iteration();
    return py::make_tuple(
        py::bytearray(data.data(), data.size()),
        py::bytearray(reinterpret_cast<const char*>(offsets.data()), offsets.size() * 8));
  }

  int64_t rank_samples() const { return reader_->rank_samples(); }

 private:
  std::unique_ptr<DatasetReader> reader_;
};

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "tensorfleet's dataset reader (docs/datasets.md)";
  m.def(
      "fetch_index",
      [](const std::string& server, const std::string& token, const std::string& name) {
        return tf::datasets::DatasetIndexToJson(FetchIndex(server, token, name)).dump();
      },
      py::arg("server"), py::arg("token"), py::arg("name"), "The dataset's index as JSON text.");
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
           "Up to n samples as (data, offsets): two bytearrays, the second n + 1 int64s.")
      .def_property_readonly("rank_samples", &Reader::rank_samples);
}
