// The server's side of datasets: the index in the store, checked against the objects it names.
//
// A dataset is created by its client in two steps: the shards are uploaded as objects first
// (under a key prefix of their own, so they replace nothing), then Create checks each of them
// and writes the whole index in one transaction. Until then no dataset is visible, so a create
// that stops half way leaves nothing a reader could find.
//
// Thread-safe; every call blocks on the store (run it on the blocking pool). Errors:
// kInvalidArgument for a bad name, format or shard list (naming the field; each shard's key must
// be under "NAME/" and appear once, since deleting the dataset deletes them), kNotFound for a
// missing dataset, bucket or shard object, kAlreadyExists for a taken name, and kFailedPrecondition
// when a shard object's size or SHA-256 is not what the client says it uploaded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "datasets/dataset_index.h"
#include "objects/object_service.h"
#include "store/store.h"

namespace tf::datasets {

struct NewShard {
  std::string key;
  int64_t samples = 0;
  int64_t bytes = 0;
  std::string sha256;
};

struct NewDataset {
  std::string name;
  std::string bucket;
  int64_t shard_size = 0;
  std::string format;  // files, jsonl or text
  std::vector<NewShard> shards;
};

class DatasetService {
 public:
  DatasetService(store::Store& store, objects::ObjectService& objects, const Clock& clock)
      : DatasetService(store.datasets(), objects, clock) {}
  DatasetService(store::DatasetStore& store, objects::ObjectService& objects, const Clock& clock)
      : store_(store), objects_(objects), clock_(clock) {}

  Result<DatasetIndex> Create(const std::string& project_id, const NewDataset& dataset);
  Result<DatasetIndex> Get(const std::string& project_id, const std::string& name);
  // The project's datasets without their shards, by name.
  Result<std::vector<DatasetIndex>> List(const std::string& project_id);
  // Forgets the dataset (readers no longer find it), then deletes its shard objects. Returns
  // how many objects were deleted; one that cannot be deleted is logged and left.
  Result<int> Delete(const std::string& project_id, const std::string& name);

 private:
  store::DatasetStore& store_;
  objects::ObjectService& objects_;
  const Clock& clock_;
};

}  // namespace tf::datasets
