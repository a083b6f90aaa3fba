// A streaming CSV reader (RFC 4180: quoted fields, "" inside quotes, CRLF or LF) that keeps
// one fixed buffer, so reading a file of any size takes the same memory.
//
// Fields are views into the reader's buffer, valid until the next call to Next(). Blank lines
// are skipped. A record longer than the buffer, or a quote left open at the end of the input,
// is an error naming the line where the record starts.
//
// Not thread-safe; one reader per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cost/audit/byte_source.h"

namespace tf::cost {

class CsvReader {
 public:
  static constexpr size_t kDefaultBufferBytes = 1 << 20;

  // `name` prefixes error messages ("bill.csv:12: ...").
  CsvReader(std::unique_ptr<ByteSource> source, std::string name,
            size_t buffer_bytes = kDefaultBufferBytes);

  // Reads the next record. Returns true with fields() filled, false at the end of the input,
  // or an error (the reader cannot continue after one).
  Result<bool> Next();

  const std::vector<std::string_view>& fields() const { return fields_; }
  // The line (1-based) where the current record starts.
  int64_t line() const { return record_line_; }
  const std::string& name() const { return name_; }

 private:
  // Parses one record starting at pos_. Returns 1 when complete, 0 when more input is needed,
  // -1 at an error (in *error).
  int Parse(Status* error);
  Status Refill();
  // Splits the line at `p` if no quote comes before its end: 1 with the fields filled and *next
  // past the line, 0 if the line is not complete yet, 3 if it has a quote.
  int SplitPlainLine(char* p, char* end, char** next);

  std::unique_ptr<ByteSource> source_;
  std::string name_;
  std::vector<char> buf_;
  size_t pos_ = 0;  // start of the unparsed input
  size_t end_ = 0;  // end of the valid bytes
  bool eof_ = false;
  int64_t next_line_ = 1;
  int64_t record_line_ = 0;
  std::vector<std::string_view> fields_;
  std::vector<uint8_t> unescape_;  // per field of a quoted record: "" inside; else empty
};

}  // namespace tf::cost
