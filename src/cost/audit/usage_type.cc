#include "cost/audit/usage_type.h"

#include <array>
#include <utility>

namespace tf::cost {
namespace {

// AWS's billing prefixes. Both spellings seen in reports are listed where they differ.
constexpr std::array<std::pair<std::string_view, std::string_view>, 30> kPrefixes = {{
    {"USE1", "us-east-1"},       {"USE2", "us-east-2"},      {"USW1", "us-west-1"},
    {"USW2", "us-west-2"},       {"CAN1", "ca-central-1"},   {"CAC1", "ca-central-1"},
    {"EUC1", "eu-central-1"},    {"EUC2", "eu-central-2"},   {"EUW1", "eu-west-1"},
    {"EUW2", "eu-west-2"},       {"EUW3", "eu-west-3"},      {"EUN1", "eu-north-1"},
    {"EUS1", "eu-south-1"},      {"EUS2", "eu-south-2"},     {"APN1", "ap-northeast-1"},
    {"APNE1", "ap-northeast-1"}, {"APN2", "ap-northeast-2"}, {"APN3", "ap-northeast-3"},
    {"APS1", "ap-southeast-1"},  {"APS2", "ap-southeast-2"}, {"APS3", "ap-south-1"},
    {"APS4", "ap-southeast-3"},  {"APS5", "ap-south-2"},     {"APE1", "ap-east-1"},
    {"SAE1", "sa-east-1"},       {"MES1", "me-south-1"},     {"MEC1", "me-central-1"},
    {"AFS1", "af-south-1"},      {"ILC1", "il-central-1"},   {"UGW1", "us-gov-west-1"},
}};

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

std::string_view RegionOfPrefix(std::string_view prefix) {
  for (const auto& [code, region] : kPrefixes) {
    if (code == prefix) return region;
  }
  return {};
}

std::string_view RegionOfZone(std::string_view zone) {
  if (zone.size() < 2) return {};
  char last = zone.back();
  if (last < 'a' || last > 'z') return {};
  char before = zone[zone.size() - 2];
  if (before < '0' || before > '9') return {};
  return zone.substr(0, zone.size() - 1);
}

UsageType ParseUsageType(std::string_view usage_type) {
  UsageType u;
  u.base = usage_type;
  size_t dash = usage_type.find('-');
  if (dash != std::string_view::npos && dash <= 5) {
    std::string_view region = RegionOfPrefix(usage_type.substr(0, dash));
    if (!region.empty()) {
      u.region = region;
      u.base = usage_type.substr(dash + 1);
    }
  }
  size_t colon = u.base.find(':');
  std::string_view head = colon == std::string_view::npos ? u.base : u.base.substr(0, colon);
  if (colon != std::string_view::npos) u.detail = u.base.substr(colon + 1);
  if (head == "BoxUsage" || head == "DedicatedUsage" || head == "HostUsage") {
    u.kind = UsageKind::kOnDemandInstance;
  } else if (head == "SpotUsage") {
    u.kind = UsageKind::kSpotInstance;
  } else if (head == "EBS" && StartsWith(u.detail, "VolumeUsage")) {
    u.kind = UsageKind::kVolume;
  } else if (head == "EBS" && StartsWith(u.detail, "SnapshotUsage")) {
    u.kind = UsageKind::kSnapshot;
  } else if (u.base == "DataTransfer-Regional-Bytes") {
    u.kind = UsageKind::kRegionalTransfer;
  }
  return u;
}

}  // namespace tf::cost
