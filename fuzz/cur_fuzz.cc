// Fuzzes everything that reads a bill or its companions from outside: the CSV reader (with a
// small buffer, so records straddle refills), Cost and Usage Report rows under both header
// spellings, the reseller invoice, gzip decoding, EC2 inventory JSON, and the number and date
// parsers. Any crash, hang or sanitizer report is a bug; malformed input must end as a clean
// Status or a counted problem.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cost/audit/byte_source.h"
#include "cost/audit/csv_reader.h"
#include "cost/audit/cur_reader.h"
#include "cost/audit/inventory.h"
#include "cost/audit/invoice.h"
#include "cost/numbers.h"

namespace {

void ReadCsv(std::string_view input, size_t buffer) {
  tf::cost::CsvReader csv(tf::cost::MemorySource(input), "fuzz.csv", buffer);
  for (int i = 0; i < 100000; ++i) {
    auto more = csv.Next();
    if (!more.ok() || !*more) return;
    for (auto field : csv.fields()) {
      (void)tf::cost::ParseNumber(field);
      (void)tf::cost::ParseUtcTime(field);
    }
  }
}

void ReadBill(std::unique_ptr<tf::cost::ByteSource> source) {
  tf::cost::ProblemLog problems(8);
  auto reader =
      tf::cost::CurReader::FromSource(std::move(source), "fuzz.csv", "cluster", &problems, 1024);
  if (!reader.ok()) return;
  tf::cost::CurRow row;
  for (int i = 0; i < 100000; ++i) {
    auto more = (*reader)->Next(&row);
    if (!more.ok() || !*more) return;
  }
}

void ReadInvoice(std::string_view input) {
  tf::cost::ProblemLog problems(8);
  auto reader = tf::cost::InvoiceReader::Open(tf::cost::MemorySource(input), "fuzz.csv", &problems);
  if (!reader.ok()) return;
  tf::cost::InvoiceRow row;
  for (int i = 0; i < 100000; ++i) {
    auto more = (*reader)->Next(&row);
    if (!more.ok() || !*more) return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  (void)tf::cost::ParseCount(input);
  ReadCsv(input, 64);
  ReadCsv(input, 1 << 16);
  ReadBill(tf::cost::MemorySource(input));
  // The same bytes as a gzip stream: corrupt and truncated data must be errors.
  ReadBill(tf::cost::GzipSource(tf::cost::MemorySource(input), "fuzz.csv.gz"));
  ReadInvoice(input);
  tf::cost::Inventory inventory;
  (void)inventory.LoadText(input, "fuzz.json", "cluster");
  return 0;
}
