// A reseller's invoice as CSV, one line per resource and period (columns in docs/cost.md):
// required resource_id, hours, rate_usd_per_hour, amount_usd; optional invoice_line,
// instance_type, region, period_start, period_end, description. Unknown columns are ignored.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cost/audit/byte_source.h"
#include "cost/audit/csv_reader.h"
#include "cost/audit/problems.h"

namespace tf::cost {

struct InvoiceRow {
  int64_t line = 0;
  std::string_view resource_id, instance_type, region, description;
  double hours = 0, rate = 0, amount = 0;
  int64_t period_start = 0, period_end = 0;  // seconds since 1970; 0 when not given
};

class InvoiceReader {
 public:
  // Reads the header; InvalidArgument naming every missing required column.
  static Result<std::unique_ptr<InvoiceReader>> Open(std::unique_ptr<ByteSource> source,
                                                     const std::string& name, ProblemLog* problems);
  // The next well-formed row (malformed ones go to the problem log); false at the end.
  Result<bool> Next(InvoiceRow* row);
  const std::string& name() const { return csv_.name(); }

 private:
  InvoiceReader(std::unique_ptr<ByteSource> source, const std::string& name, ProblemLog* problems)
      : csv_(std::move(source), name, 64 * 1024), problems_(problems) {}

  CsvReader csv_;
  ProblemLog* problems_;
  size_t fields_ = 0;
  int resource_ = -1, type_ = -1, region_ = -1, hours_ = -1, rate_ = -1, amount_ = -1;
  int start_ = -1, end_ = -1, description_ = -1;
};

}  // namespace tf::cost
