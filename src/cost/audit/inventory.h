// What EC2 says exists, from the JSON that `aws ec2 describe-instances`, `describe-volumes`
// and `describe-snapshots` print (one file may hold any of their top-level keys:
// "Reservations", "Volumes", "Snapshots"). The audit uses it for placement, EFA interfaces,
// spot lifecycle, attached volumes and snapshot ages, which the bill does not show.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"

namespace tf::cost {

struct InventoryInstance {
  std::string id, type, zone, placement_group;
  std::string cluster;  // value of the cluster tag, if any
  bool spot = false;    // InstanceLifecycle "spot"
  bool efa = false;     // a network interface of type "efa" or "efa-only"
  std::string file;
};

struct InventoryVolume {
  std::string id, state;  // "available" = attached to nothing
  std::string file;
};

struct InventorySnapshot {
  std::string id;
  int64_t start_time = 0;  // seconds since 1970
  std::string file;
};

class Inventory {
 public:
  // Adds what `path` describes. InvalidArgument (naming the file and the element) for JSON that
  // is not EC2 describe output.
  Status LoadFile(const std::string& path, std::string_view cluster_tag);
  Status LoadText(std::string_view text, const std::string& name, std::string_view cluster_tag);

  bool has_instances() const { return has_instances_; }
  bool has_volumes() const { return has_volumes_; }
  bool has_snapshots() const { return has_snapshots_; }

  const InventoryInstance* FindInstance(std::string_view id) const;
  const InventoryVolume* FindVolume(std::string_view id) const;
  const InventorySnapshot* FindSnapshot(std::string_view id) const;
  bool VolumeAttached(std::string_view id) const;
  const std::unordered_map<std::string, InventoryInstance>& instances() const { return instances_; }

 private:
  bool has_instances_ = false, has_volumes_ = false, has_snapshots_ = false;
  std::unordered_map<std::string, InventoryInstance> instances_;
  std::unordered_map<std::string, InventoryVolume> volumes_;
  std::unordered_map<std::string, InventorySnapshot> snapshots_;
  std::unordered_set<std::string> attached_;  // volume ids in instances' block device mappings
};

}  // namespace tf::cost
