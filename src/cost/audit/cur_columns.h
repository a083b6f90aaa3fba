// The columns of an AWS Cost and Usage Report that the audit reads, under both spellings:
// legacy CUR CSV headers ("lineItem/UsageType") and CUR 2.0 / Athena snake case
// ("line_item_usage_type"). Unknown columns are ignored.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tf::cost {

enum class CurColumn : int {
  kLineItemType,      // line_item_line_item_type: Usage, Tax, Credit, ...
  kUsageType,         // line_item_usage_type: [REGION-]BoxUsage:p5.48xlarge
  kOperation,         // line_item_operation: RunInstances, RunInstances:SV050
  kProductCode,       // line_item_product_code: AmazonEC2
  kResourceId,        // line_item_resource_id: i-..., vol-..., arn:...:snapshot/snap-...
  kAvailabilityZone,  // line_item_availability_zone
  kUsageAmount,       // line_item_usage_amount (hours for instance rows)
  kUnblendedRate,     // line_item_unblended_rate
  kUnblendedCost,     // line_item_unblended_cost
  kUsageStart,        // line_item_usage_start_date
  kUsageEnd,          // line_item_usage_end_date
  kInstanceType,      // product_instance_type
  kRegionCode,        // product_region_code (CUR 2.0, newer legacy files)
  kRegion,            // product_region (legacy: a region code such as us-east-1)
  kPricingTerm,       // pricing_term: OnDemand, Spot, Reserved
  kResourceTags,      // resource_tags (CUR 2.0: a JSON map such as {"user_cluster":"a"})
  // savings_plan_savings_plan_effective_cost: what a SavingsPlanCoveredUsage row cost under the
  // plan (its unblended cost is the on-demand price).
  kSavingsPlanEffectiveCost,
  kCount,
};

std::string_view CurColumnName(CurColumn c);

// "lineItem/UsageType" -> "line_item_usage_type"; snake-case names are returned unchanged.
std::string NormalizeCurHeader(std::string_view header);

// Which input column holds each CurColumn (-1: absent), and which holds the cluster tag.
struct CurLayout {
  std::array<int, static_cast<int>(CurColumn::kCount)> index;
  int cluster_tag = -1;  // resourceTags/user:<tag> or resource_tags_user_<tag>
  size_t fields = 0;     // columns in the header
  std::string format;    // "legacy CUR", "CUR 2.0"

  int at(CurColumn c) const { return index[static_cast<int>(c)]; }
  bool has(CurColumn c) const { return at(c) >= 0; }
};

// Maps a header row. `cluster_tag` is the user tag naming a cluster ("cluster" matches
// resourceTags/user:cluster). A missing required column is an InvalidArgument naming every
// missing column in both spellings.
Result<CurLayout> MapCurHeader(const std::vector<std::string_view>& header,
                               std::string_view cluster_tag);

// The columns without which no check can run.
const std::vector<CurColumn>& RequiredCurColumns();

}  // namespace tf::cost
