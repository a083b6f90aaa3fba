#include "cost/audit/inventory.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cost/numbers.h"

namespace tf::cost {
namespace {

using Json = nlohmann::json;

// Field readers that never throw: a missing or mistyped field reads as empty.
std::string Str(const Json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const Json& Arr(const Json& j, const char* key) {
  static const Json kEmpty = Json::array();
  if (!j.is_object()) return kEmpty;
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : kEmpty;
}

const Json& Obj(const Json& j, const char* key) {
  static const Json kEmpty = Json::object();
  if (!j.is_object()) return kEmpty;
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : kEmpty;
}

}  // namespace

Status Inventory::LoadFile(const std::string& path, std::string_view cluster_tag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open the inventory file");
  std::stringstream text;
  text << in.rdbuf();
  return LoadText(text.str(), path, cluster_tag);
}

Status Inventory::LoadText(std::string_view text, const std::string& name,
                           std::string_view cluster_tag) {
  Json doc = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return InvalidArgument(name +
                           ": not JSON output of aws ec2 describe-instances, "
                           "describe-volumes or describe-snapshots");
  }
  bool known = false;
  if (doc.contains("Reservations")) {
    known = has_instances_ = true;
    for (const auto& reservation : Arr(doc, "Reservations")) {
      for (const auto& i : Arr(reservation, "Instances")) {
        InventoryInstance inst;
        inst.id = Str(i, "InstanceId");
        if (inst.id.empty()) return InvalidArgument(name + ": an instance without InstanceId");
        inst.type = Str(i, "InstanceType");
        inst.zone = Str(Obj(i, "Placement"), "AvailabilityZone");
        inst.placement_group = Str(Obj(i, "Placement"), "GroupName");
        inst.spot = Str(i, "InstanceLifecycle") == "spot";
        for (const auto& nic : Arr(i, "NetworkInterfaces")) {
          std::string type = Str(nic, "InterfaceType");
          if (type == "efa" || type == "efa-only") inst.efa = true;
        }
        for (const auto& tag : Arr(i, "Tags")) {
          if (Str(tag, "Key") == cluster_tag) inst.cluster = Str(tag, "Value");
        }
        for (const auto& mapping : Arr(i, "BlockDeviceMappings")) {
          std::string volume = Str(Obj(mapping, "Ebs"), "VolumeId");
          if (!volume.empty()) attached_.insert(volume);
        }
        inst.file = name;
        instances_[inst.id] = std::move(inst);
      }
    }
  }
  if (doc.contains("Volumes")) {
    known = has_volumes_ = true;
    for (const auto& v : Arr(doc, "Volumes")) {
      InventoryVolume vol{Str(v, "VolumeId"), Str(v, "State"), name};
      if (vol.id.empty()) return InvalidArgument(name + ": a volume without VolumeId");
      if (!Arr(v, "Attachments").empty()) attached_.insert(vol.id);
      volumes_[vol.id] = std::move(vol);
    }
  }
  if (doc.contains("Snapshots")) {
    known = has_snapshots_ = true;
    for (const auto& s : Arr(doc, "Snapshots")) {
      InventorySnapshot snap{Str(s, "SnapshotId"), 0, name};
      if (snap.id.empty()) return InvalidArgument(name + ": a snapshot without SnapshotId");
      std::string start = Str(s, "StartTime");
      auto when = ParseUtcTime(start);
      if (!when) {
        return InvalidArgument(name + ": snapshot " + snap.id + ": StartTime '" + start +
                               "' is not a date-time");
      }
      snap.start_time = *when;
      snapshots_[snap.id] = std::move(snap);
    }
  }
  if (!known) {
    return InvalidArgument(name +
                           ": no Reservations, Volumes or Snapshots: not EC2 describe "
                           "output");
  }
  return OkStatus();
}

const InventoryInstance* Inventory::FindInstance(std::string_view id) const {
  auto it = instances_.find(std::string(id));
  return it == instances_.end() ? nullptr : &it->second;
}

const InventoryVolume* Inventory::FindVolume(std::string_view id) const {
  auto it = volumes_.find(std::string(id));
  return it == volumes_.end() ? nullptr : &it->second;
}

const InventorySnapshot* Inventory::FindSnapshot(std::string_view id) const {
  auto it = snapshots_.find(std::string(id));
  return it == snapshots_.end() ? nullptr : &it->second;
}

bool Inventory::VolumeAttached(std::string_view id) const {
  return attached_.count(std::string(id)) > 0;
}

}  // namespace tf::cost
