#include "datasets/packer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

namespace tf::datasets {
namespace {

namespace fs = std::filesystem;

std::string Unreadable(const fs::path& file) {
  return "cannot read " + file.string() + ": " + std::strerror(errno);
}

// What nlohmann says is wrong, without its "[json.exception...] " prefix.
// Why a line is not JSON, "" if it is. The parser quotes what it last read, which may be most
// of a long line: the quote is cut to its last 64 bytes, after the byte the error is at.
std::string JsonProblem(std::string_view line) {
  try {
    [[maybe_unused]] auto parsed = nlohmann::json::parse(line);
    return "";
  } catch (const nlohmann::json::exception& e) {
    std::string what = e.what();
    size_t close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
    const std::string kQuote = "; last read: '";
    const size_t quote = what.find(kQuote);
    constexpr size_t kKeep = 64;
    if (quote != std::string::npos && what.size() > quote + kQuote.size() + kKeep + 1) {
      const size_t from = what.size() - 1 - kKeep;  // the quote ends with its closing '
      what = what.substr(0, quote + kQuote.size()) + "..." + what.substr(from);
    }
    if (const auto* parse = dynamic_cast<const nlohmann::json::parse_error*>(&e)) {
      what = "at byte " + std::to_string(parse->byte) + ": " + what;
    }
    return what;
  }
}

// The UTF-8 byte order mark some editors write at the start of a file: not part of a sample.
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

}  // namespace

Status ValidateSourceFormat(const std::string& format) {
  if (format == "files" || format == "jsonl" || format == "text") return OkStatus();
  return InvalidArgument("--format must be files, jsonl or text, got '" + format + "'");
}

Result<std::vector<fs::path>> ListSourceFiles(const std::vector<std::string>& paths,
                                              int* hidden) {
  std::vector<fs::path> out;
  if (hidden != nullptr) *hidden = 0;
  for (const std::string& p : paths) {
    std::error_code ec;
    fs::file_status st = fs::status(p, ec);
    if (ec || !fs::exists(st)) return NotFound("source " + p + " does not exist");
    if (fs::is_regular_file(st)) {
      out.push_back(p);
      continue;
    }
    if (!fs::is_directory(st)) {
      return InvalidArgument("source " + p + " is neither a regular file nor a directory");
    }
    std::vector<fs::path> found;
    fs::recursive_directory_iterator it(p, ec), end;
    if (ec) return InvalidArgument("cannot list " + p + ": " + ec.message());
    for (; it != end; it.increment(ec)) {
      if (ec) return InvalidArgument("cannot list " + p + ": " + ec.message());
      if (it->path().filename().string().starts_with(".")) {
        if (hidden != nullptr) ++*hidden;
        if (it->is_directory(ec)) it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file(ec)) found.push_back(it->path());
    }
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  if (out.empty()) return InvalidArgument("the source holds no files: nothing to pack");
  return out;
}

Status Packer::AddSample(std::string_view sample) {
  if (writer_.sample_count() > 0 &&
      writer_.size() + sample.size() + kShardEntrySize > shard_size_) {
    TF_RETURN_IF_ERROR(Flush());
  }
  TF_RETURN_IF_ERROR(writer_.Add(sample));
  ++samples_;
  return OkStatus();
}

Status Packer::Flush() {
  uint64_t n = writer_.sample_count();
  if (n == 0) return OkStatus();
  ++shards_;
  return emit_(writer_.Finish(), n);
}

Status Packer::Finish() {
  if (samples_ == 0) return InvalidArgument("the source holds no samples: nothing to pack");
  return Flush();
}

Status Packer::AddFile(const fs::path& file, const std::string& format,
                       const std::function<void(uint64_t)>& progress) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return InvalidArgument(Unreadable(file));
  if (format == "files") {
    std::string content;
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      content.append(buf, in.gcount());
      if (progress) progress(in.gcount());
      if (content.size() > kMaxSampleBytes) {
        return InvalidArgument(file.string() + " is larger than a sample may be (4 GiB - 1)");
      }
    }
    if (in.bad()) return InvalidArgument(Unreadable(file));
    return AddSample(content).WithContext(file.string());
  }
  TF_RETURN_IF_ERROR(ValidateSourceFormat(format));
  std::string line;
  uint64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (progress) progress(line.size() + 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1 && std::string_view(line).starts_with(kUtf8Bom)) line.erase(0, kUtf8Bom.size());
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const std::string where = file.string() + ":" + std::to_string(number);
    if (format == "jsonl") {
      std::string problem = JsonProblem(line);
      if (!problem.empty()) return InvalidArgument(where + ": not JSON: " + problem);
    }
    TF_RETURN_IF_ERROR(AddSample(line).WithContext(where));
  }
  if (in.bad()) return InvalidArgument(Unreadable(file));
  return OkStatus();
}

}  // namespace tf::datasets
