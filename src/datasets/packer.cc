#include "datasets/packer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <istream>
#include <new>
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

// Lines of a stream, each read only up to a bound, so that a file without newlines cannot make
// one line grow until memory runs out (std::getline has no bound).
class LineReader {
 public:
  enum class Got { kLine, kEnd, kTooLong };

  LineReader(std::istream& in, uint64_t limit) : in_(in), limit_(limit) {}

  // kLine: `line` holds the next line, without its "\n". kEnd: nothing is left. kTooLong: the
  // line has more than `limit` bytes; `line` holds the first of them and reading stops there.
  // bytes_read() counts what was taken from the stream, newlines included.
  Got Next(std::string& line) {
    line.clear();
    bool any = false;
    for (;;) {
      if (pos_ == end_ && !Refill()) return any ? Got::kLine : Got::kEnd;
      any = true;
      const char* from = buf_ + pos_;
      const char* newline = static_cast<const char*>(std::memchr(from, '\n', end_ - pos_));
      const size_t take = newline != nullptr ? newline - from : end_ - pos_;
      if (line.size() + take > limit_) {
        const size_t fits = limit_ - line.size();
        line.append(from, fits);
        pos_ += fits;
        bytes_read_ += fits;
        return Got::kTooLong;
      }
      line.append(from, take);
      pos_ += take;
      bytes_read_ += take;
      if (newline != nullptr) {
        ++pos_;
        ++bytes_read_;
        return Got::kLine;
      }
    }
  }

  uint64_t bytes_read() const { return bytes_read_; }

 private:
  bool Refill() {
    in_.read(buf_, sizeof buf_);
    pos_ = 0;
    end_ = static_cast<size_t>(in_.gcount());
    return end_ > 0;
  }

  std::istream& in_;
  const uint64_t limit_;
  char buf_[1 << 16];
  size_t pos_ = 0;
  size_t end_ = 0;
  uint64_t bytes_read_ = 0;
};

std::string SampleLimit(uint64_t limit) {
  return limit == kMaxSampleBytes ? "4 GiB - 1" : std::to_string(limit) + " bytes";
}

}  // namespace

Status ValidateSourceFormat(const std::string& format) {
  if (format == "files" || format == "jsonl" || format == "text") return OkStatus();
  return InvalidArgument("--format must be files, jsonl or text, got '" + format + "'");
}

Result<std::vector<fs::path>> ListSourceFiles(const std::vector<std::string>& paths, int* hidden) {
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
  // Memory for a sample near the 4 GiB limit may not be there: the caller then gets an error it
  // can clean up after, not an exception that ends the process.
  try {
    return ReadFile(file, format, progress);
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("not enough memory to pack " + file.string() +
                             " (each sample, and the shard it goes into, is held whole in memory "
                             "while it is packed)");
  }
}

Status Packer::ReadFile(const fs::path& file, const std::string& format,
                        const std::function<void(uint64_t)>& progress) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return InvalidArgument(Unreadable(file));
  if (format == "files") {
    std::error_code ec;
    if (const uint64_t size = fs::file_size(file, ec); !ec && size > max_sample_bytes_) {
      return InvalidArgument(file.string() + " is larger than a sample may be (" +
                             SampleLimit(max_sample_bytes_) + "): it has " + std::to_string(size) +
                             " bytes");
    }
    std::string content;
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      content.append(buf, in.gcount());
      if (progress) progress(in.gcount());
      if (content.size() > max_sample_bytes_) {  // it grew while being read
        return InvalidArgument(file.string() + " is larger than a sample may be (" +
                               SampleLimit(max_sample_bytes_) + ")");
      }
    }
    if (in.bad()) return InvalidArgument(Unreadable(file));
    return AddSample(content).WithContext(file.string());
  }
  TF_RETURN_IF_ERROR(ValidateSourceFormat(format));
  // Room beyond what a sample may hold for what a line loses: a "\r" before its "\n", and a
  // byte order mark before the first. What is left is checked once they are gone.
  LineReader lines(in, max_sample_bytes_ + 1 + kUtf8Bom.size());
  std::string line;
  uint64_t number = 0;
  for (;;) {
    const uint64_t before = lines.bytes_read();
    const LineReader::Got got = lines.Next(line);
    if (progress && lines.bytes_read() > before) progress(lines.bytes_read() - before);
    if (got == LineReader::Got::kEnd) break;
    ++number;
    const std::string where = file.string() + ":" + std::to_string(number);
    if (got == LineReader::Got::kTooLong) {
      return InvalidArgument(where + ": the line is longer than a sample may be (" +
                             SampleLimit(max_sample_bytes_) + "); is this a " + format +
                             " file? --format files takes each file as one sample");
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1 && std::string_view(line).starts_with(kUtf8Bom)) line.erase(0, kUtf8Bom.size());
    if (line.size() > max_sample_bytes_) {
      return InvalidArgument(where + ": the line is longer than a sample may be (" +
                             SampleLimit(max_sample_bytes_) + ")");
    }
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
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
