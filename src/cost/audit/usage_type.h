// AWS usage types as the Cost and Usage Report writes them: [REGION-]Kind[:detail], e.g.
// "BoxUsage:p5.48xlarge" (us-east-1 has no prefix), "USE2-SpotUsage:g5.xlarge",
// "USE1-EBS:VolumeUsage.gp3", "USE2-DataTransfer-Regional-Bytes".
#pragma once

#include <string_view>

namespace tf::cost {

enum class UsageKind {
  kOnDemandInstance,  // BoxUsage, DedicatedUsage, HostUsage
  kSpotInstance,      // SpotUsage
  kVolume,            // EBS:VolumeUsage*
  kSnapshot,          // EBS:SnapshotUsage*
  kRegionalTransfer,  // DataTransfer-Regional-Bytes (between zones of a region)
  kOther,
};

struct UsageType {
  std::string_view region;  // from the prefix ("us-east-2"); empty if no known prefix
  std::string_view base;    // without the prefix: "BoxUsage:p5.48xlarge"
  std::string_view detail;  // after the first ':': "p5.48xlarge", "VolumeUsage.gp3"
  UsageKind kind = UsageKind::kOther;
};

UsageType ParseUsageType(std::string_view usage_type);

// The region of a usage-type prefix ("USE2" -> "us-east-2"); empty if unknown.
std::string_view RegionOfPrefix(std::string_view prefix);

// The region of an availability zone: "us-east-1a" -> "us-east-1"; "use1-az4" -> "".
std::string_view RegionOfZone(std::string_view zone);

}  // namespace tf::cost
