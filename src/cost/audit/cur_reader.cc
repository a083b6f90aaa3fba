#include "cost/audit/cur_reader.h"

#include <algorithm>
#include <filesystem>

#include "cost/numbers.h"

namespace tf::cost {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The value of "key": in a flat JSON object of strings, without a JSON parser: CUR 2.0 puts
// tags in such a map on every row, and a full parse per row would dominate the read.
std::string_view MapValue(std::string_view map, std::string_view key) {
  size_t at = map.find(key);
  if (at == std::string_view::npos) return {};
  size_t pos = at + key.size();
  while (pos < map.size() && map[pos] == ' ') ++pos;
  if (pos >= map.size() || map[pos] != '"') return {};
  size_t close = map.find('"', pos + 1);
  if (close == std::string_view::npos) return {};
  return map.substr(pos + 1, close - pos - 1);
}

}  // namespace

Result<std::vector<std::string>> ListBillFiles(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return NotFound(path + ": no such file or folder");
  if (!fs::is_directory(status)) return std::vector<std::string>{path};
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && (EndsWith(name, ".csv") || EndsWith(name, ".csv.gz"))) {
      files.push_back(entry.path().string());
    }
  }
  if (ec) return Unavailable(path + ": " + ec.message());
  if (files.empty()) return InvalidArgument(path + ": folder holds no *.csv or *.csv.gz file");
  std::sort(files.begin(), files.end());
  return files;
}

Result<std::unique_ptr<CurReader>> CurReader::Open(const std::string& path, std::string cluster_tag,
                                                   ProblemLog* problems) {
  TF_ASSIGN_OR_RETURN(auto files, ListBillFiles(path));
  std::error_code ec;
  const bool folder = std::filesystem::is_directory(path, ec);
  std::unique_ptr<CurReader> reader(
      new CurReader(std::move(files), std::move(cluster_tag), problems));
  reader->parts_ = folder;
  reader->map_key_ = "\"user_" + NormalizeCurHeader(reader->cluster_tag_) + "\":";
  TF_RETURN_IF_ERROR(reader->OpenNext());
  return reader;
}

Result<std::unique_ptr<CurReader>> CurReader::FromSource(std::unique_ptr<ByteSource> source,
                                                         std::string name, std::string cluster_tag,
                                                         ProblemLog* problems,
                                                         size_t buffer_bytes) {
  std::unique_ptr<CurReader> reader(
      new CurReader({std::move(name)}, std::move(cluster_tag), problems));
  reader->map_key_ = "\"user_" + NormalizeCurHeader(reader->cluster_tag_) + "\":";
  reader->source_ = std::move(source);
  reader->buffer_bytes_ = buffer_bytes;
  TF_RETURN_IF_ERROR(reader->OpenNext());
  return reader;
}

Status CurReader::PartUnreadable(const std::string& file, int64_t line, const Status& why) {
  if (!parts_) return why.WithContext(line > 0 ? file + ":" + std::to_string(line) : file);
  problems_->Add(file, line, "", why.message() + "; the rest of this part was left out");
  return OkStatus();
}

Status CurReader::OpenNext() {
  csv_.reset();
  while (next_file_ < files_.size()) {
    const std::string& file = files_[next_file_++];
    std::unique_ptr<ByteSource> source = std::move(source_);
    if (!source) {
      auto opened = OpenFileSource(file);
      if (!opened.ok()) {
        formats_.push_back("unreadable");
        TF_RETURN_IF_ERROR(PartUnreadable(file, 0, opened.status()));
        continue;
      }
      source = std::move(opened).value();
    }
    auto csv = std::make_unique<CsvReader>(std::move(source), file, buffer_bytes_);
    auto has_header = csv->Next();
    if (!has_header.ok() || !*has_header) {
      formats_.push_back(has_header.ok() ? "empty" : "unreadable");
      TF_RETURN_IF_ERROR(PartUnreadable(
          file, 0,
          has_header.ok() ? InvalidArgument("empty file: no header row, nothing to audit")
                          : has_header.status()));
      continue;
    }
    // Random bytes or a binary file read as text: say so, not which columns it lacks.
    bool binary = false;
    for (std::string_view field : csv->fields()) {
      for (unsigned char c : field) binary = binary || c == 0 || (c < 0x20 && c != '\t');
    }
    auto layout =
        binary
            ? Result<CurLayout>(InvalidArgument("not a CSV file: its first line holds binary data"))
            : MapCurHeader(csv->fields(), cluster_tag_);
    if (!layout.ok()) {
      formats_.push_back("unreadable");
      TF_RETURN_IF_ERROR(PartUnreadable(file, csv->line(), layout.status()));
      continue;
    }
    layout_ = std::move(layout).value();
    formats_.push_back(layout_.format);
    csv_ = std::move(csv);
    return OkStatus();
  }
  return OkStatus();
}

Result<bool> CurReader::Next(CurRow* row) {
  for (;;) {
    if (!csv_) return false;
    auto more = csv_->Next();
    if (!more.ok()) {
      TF_RETURN_IF_ERROR(PartUnreadable(csv_->name(), csv_->line(), more.status()));
      TF_RETURN_IF_ERROR(OpenNext());
      continue;
    }
    if (!*more) {
      TF_RETURN_IF_ERROR(OpenNext());
      continue;
    }
    ++rows_;
    if (Convert(csv_->fields(), row)) {
      ++good_rows_;
      return true;
    }
  }
}

bool CurReader::Convert(const std::vector<std::string_view>& f, CurRow* row) {
  const std::string& file = csv_->name();
  int64_t line = csv_->line();
  if (f.size() != layout_.fields) {
    problems_->Add(file, line, "",
                   "expected " + std::to_string(layout_.fields) + " fields, found " +
                       std::to_string(f.size()));
    return false;
  }
  auto text = [&](CurColumn c) -> std::string_view {
    int i = layout_.at(c);
    return i >= 0 ? f[static_cast<size_t>(i)] : std::string_view();
  };
  bool ok = true;
  // Empty means absent (CUR leaves rates blank on some line types); anything else must parse.
  auto number = [&](CurColumn c, double* out) {
    std::string_view s = text(c);
    if (s.empty()) return false;
    auto v = ParseNumber(s);
    if (!v) {
      problems_->BadValue(file, line, CurColumnName(c), s, "a number");
      ok = false;
      return false;
    }
    *out = *v;
    return true;
  };
  // Rows come in runs of the same hour: the last text parsed is remembered.
  auto time = [&](CurColumn c, TimeCache& cache, int64_t* out) {
    std::string_view s = text(c);
    *out = 0;
    if (s.empty()) return;
    if (s == cache.text) {
      *out = cache.value;
      return;
    }
    auto v = ParseUtcTime(s);
    if (!v) {
      problems_->BadValue(file, line, CurColumnName(c), s, "a UTC date-time");
      ok = false;
      return;
    }
    cache.text.assign(s);
    cache.value = *v;
    *out = *v;
  };
  row->ref = {static_cast<uint32_t>(next_file_ - 1), line};
  row->line_item_type = text(CurColumn::kLineItemType);
  row->usage_type = text(CurColumn::kUsageType);
  row->operation = text(CurColumn::kOperation);
  row->product_code = text(CurColumn::kProductCode);
  row->resource_id = text(CurColumn::kResourceId);
  row->availability_zone = text(CurColumn::kAvailabilityZone);
  row->instance_type = text(CurColumn::kInstanceType);
  row->region = text(CurColumn::kRegionCode);
  if (row->region.empty()) row->region = text(CurColumn::kRegion);
  row->pricing_term = text(CurColumn::kPricingTerm);
  row->usage_amount = 0;
  row->unblended_cost = 0;
  number(CurColumn::kUsageAmount, &row->usage_amount);
  number(CurColumn::kUnblendedCost, &row->unblended_cost);
  row->has_rate = number(CurColumn::kUnblendedRate, &row->unblended_rate);
  row->has_savings_plan = number(CurColumn::kSavingsPlanEffectiveCost, &row->savings_plan_cost);
  time(CurColumn::kUsageStart, start_cache_, &row->start);
  time(CurColumn::kUsageEnd, end_cache_, &row->end);
  row->cluster = {};
  if (layout_.cluster_tag >= 0) {
    row->cluster = f[static_cast<size_t>(layout_.cluster_tag)];
  } else if (layout_.has(CurColumn::kResourceTags)) {
    std::string_view tags = text(CurColumn::kResourceTags);
    if (!tags.empty()) row->cluster = MapValue(tags, map_key_);
  }
  return ok;
}

}  // namespace tf::cost
