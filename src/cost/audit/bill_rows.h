// Formats Cost and Usage Report rows for the bill generator, in the legacy CUR CSV layout
// ("lineItem/UsageType" headers) or CUR 2.0's (snake case, tags as a JSON map). Internal to
// the generator.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tf::cost {

// SplitMix64's output function: a well-spread 64-bit value from a counter or seed, for ids in
// generated bills that look random but are the same on every run.
uint64_t SplitMix64(uint64_t x);

// One row's values; the writer fills in the columns that never vary.
struct BillRow {
  int64_t start = 0;  // the hour (or day) the row covers, seconds since 1970
  int64_t end = 0;
  std::string_view line_item_type = "Usage";
  std::string_view usage_type;  // "BoxUsage:p5.48xlarge"
  std::string_view operation;   // "RunInstances"
  std::string_view zone;
  std::string_view resource_id;
  double usage = 0;
  double rate = 0;
  double cost = 0;
  std::string_view description;  // "$55.04 per On Demand Linux p5.48xlarge Instance Hour"
  std::string_view family;       // "Compute Instance"
  std::string_view instance_type;
  std::string_view unit;  // "Hrs"
  double public_rate = 0;
  std::string_view term;  // "OnDemand", "Spot" or ""
  std::string_view cluster;
  // Corruptions for malformed-row tests: 0 none, 1 a number, 2 a date, 3 a missing field.
  int corrupt = 0;
};

class BillRowWriter {
 public:
  BillRowWriter(bool cur2, int64_t period_start, int64_t period_end);

  // The header line, with its newline.
  const std::string& header() const { return header_; }
  // Appends one row and its newline to *out.
  void Append(const BillRow& row, std::string* out);

 private:
  bool cur2_;
  std::string header_;
  std::string period_;  // the bill period columns, pre-formatted
  uint64_t serial_ = 0;
  int64_t cached_start_ = -1, cached_end_ = -1;
  std::string start_text_, end_text_;
};

}  // namespace tf::cost
