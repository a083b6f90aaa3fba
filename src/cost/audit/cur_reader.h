// Reads AWS Cost and Usage Report rows one at a time from a CSV file (plain or gzip) or a
// folder of parts, in constant memory. Each file's header is mapped on its own (legacy CUR
// columns vary from month to month).
//
// A row whose numbers, dates or field count are malformed is recorded in problems() with its
// file and line and not returned; a file without a required column, an unreadable file or
// corrupt gzip data ends the read with an error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cost/audit/csv_reader.h"
#include "cost/audit/cur_columns.h"
#include "cost/audit/problems.h"

namespace tf::cost {

// A row of the report: which file and line it came from.
struct RowRef {
  uint32_t file = 0;  // index into CurReader::files()
  int64_t line = 0;
};

// One report row. Views are valid until the next call to CurReader::Next().
struct CurRow {
  RowRef ref;
  std::string_view line_item_type, usage_type, operation, product_code, resource_id;
  std::string_view availability_zone, instance_type, region, pricing_term, cluster;
  double usage_amount = 0;
  double unblended_cost = 0;
  double unblended_rate = 0;
  bool has_rate = false;          // false when the column is absent or empty
  double savings_plan_cost = 0;   // a Savings Plan covered row's effective cost
  bool has_savings_plan = false;  // false when the column is absent or empty
  int64_t start = 0;              // seconds since 1970; 0 when absent or empty
  int64_t end = 0;
};

class CurReader {
 public:
  // `path` is a file or a folder; a folder's *.csv and *.csv.gz files are read in name order.
  // `cluster_tag` names the user tag that groups instances into a cluster. A file that cannot
  // be read (empty, not a report, a truncated gzip) is an error; a part of a folder that cannot
  // be read is a problem (in `problems`), and the audit goes on with the other parts.
  static Result<std::unique_ptr<CurReader>> Open(const std::string& path, std::string cluster_tag,
                                                 ProblemLog* problems);

  // Reads one report from `source`; `name` stands for its file in rows and messages.
  static Result<std::unique_ptr<CurReader>> FromSource(
      std::unique_ptr<ByteSource> source, std::string name, std::string cluster_tag,
      ProblemLog* problems, size_t buffer_bytes = CsvReader::kDefaultBufferBytes);

  // Fills *row with the next well-formed row; false at the end of the last file.
  Result<bool> Next(CurRow* row);

  const std::vector<std::string>& files() const { return files_; }
  // "legacy CUR" or "CUR 2.0" per file opened so far.
  const std::vector<std::string>& formats() const { return formats_; }
  // Rows read, well-formed or not (headers not counted).
  int64_t rows() const { return rows_; }
  // Rows returned by Next().
  int64_t good_rows() const { return good_rows_; }

 private:
  CurReader(std::vector<std::string> files, std::string cluster_tag, ProblemLog* problems)
      : files_(std::move(files)), cluster_tag_(std::move(cluster_tag)), problems_(problems) {}
  Status OpenNext();
  // A part that cannot be read from `line` on: an error for a lone file, a problem for a part of
  // a folder (whose other parts are read on).
  Status PartUnreadable(const std::string& file, int64_t line, const Status& why);
  bool Convert(const std::vector<std::string_view>& f, CurRow* row);

  std::vector<std::string> files_;
  std::vector<std::string> formats_;
  std::string cluster_tag_;
  std::string map_key_;  // "\"user_<tag>\":" inside resource_tags
  ProblemLog* problems_;
  size_t next_file_ = 0;
  bool parts_ = false;                  // the files are a folder's parts
  std::unique_ptr<ByteSource> source_;  // FromSource's, opened by OpenNext
  size_t buffer_bytes_ = CsvReader::kDefaultBufferBytes;
  std::unique_ptr<CsvReader> csv_;
  CurLayout layout_;
  int64_t rows_ = 0;
  int64_t good_rows_ = 0;
  struct TimeCache {
    std::string text;
    int64_t value = 0;
  };
  TimeCache start_cache_, end_cache_;
};

// The files a path stands for: the path itself, or a folder's *.csv / *.csv.gz in name order.
Result<std::vector<std::string>> ListBillFiles(const std::string& path);

}  // namespace tf::cost
