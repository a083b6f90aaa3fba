#include "cost/audit/csv_reader.h"

#include <algorithm>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace tf::cost {
namespace {

constexpr int kNeedMore = 0;
constexpr int kRecord = 1;
constexpr int kEnd = 2;
constexpr int kError = -1;
constexpr int kQuoted = 3;

std::string_view View(const char* begin, const char* end) {
  return std::string_view(begin, static_cast<size_t>(end - begin));
}

// Drops one '\r' before a line end.
std::string_view StripCr(const char* begin, const char* end) {
  if (end > begin && end[-1] == '\r') --end;
  return View(begin, end);
}

// Turns every "" in the view into " by moving bytes left; returns the shorter view.
std::string_view Unescape(std::string_view field) {
  char* out = const_cast<char*>(field.data());
  const char* in = field.data();
  const char* end = in + field.size();
  char* start = out;
  while (in < end) {
    *out++ = *in;
    in += (*in == '"' && in + 1 < end && in[1] == '"') ? 2 : 1;
  }
  return std::string_view(start, static_cast<size_t>(out - start));
}

}  // namespace

CsvReader::CsvReader(std::unique_ptr<ByteSource> source, std::string name, size_t buffer_bytes)
    : source_(std::move(source)),
      name_(std::move(name)),
      buf_(std::max<size_t>(buffer_bytes, 64)) {}

Result<bool> CsvReader::Next() {
  for (;;) {
    Status error;
    switch (Parse(&error)) {
      case kRecord:
        return true;
      case kEnd:
        return false;
      case kError:
        return error;
      default:
        break;
    }
    TF_RETURN_IF_ERROR(Refill());
  }
}

Status CsvReader::Refill() {
  if (pos_ == 0 && end_ == buf_.size()) {
    return ResourceExhausted(name_ + ":" + std::to_string(next_line_) + ": a record longer than " +
                             std::to_string(buf_.size()) + " bytes");
  }
  if (pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  auto got = source_->Read(buf_.data() + end_, buf_.size() - end_);
  if (!got.ok()) return got.status();
  if (*got == 0) eof_ = true;
  end_ += *got;
  return OkStatus();
}

int CsvReader::SplitPlainLine(char* p, char* end, char** next) {
  char* f = p;  // start of the current field
  char* q = p;  // scan position
#ifdef __SSE2__
  const __m128i comma = _mm_set1_epi8(','), newline = _mm_set1_epi8('\n');
  const __m128i quote = _mm_set1_epi8('"');
  while (end - q >= 16) {
    __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    auto commas = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, comma)));
    auto lines = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, newline)));
    auto quotes = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, quote)));
    unsigned before = lines ? (lines & (0u - lines)) - 1 : 0xFFFFu;  // bytes before the newline
    if (quotes & before) return kQuoted;
    for (commas &= before; commas; commas &= commas - 1) {
      char* at = q + __builtin_ctz(commas);
      fields_.push_back(View(f, at));
      f = at + 1;
    }
    if (lines) {
      char* at = q + __builtin_ctz(lines);
      fields_.push_back(StripCr(f, at));
      *next = at + 1;
      return kRecord;
    }
    q += 16;
  }
#endif
  for (; q < end; ++q) {
    if (*q == ',') {
      fields_.push_back(View(f, q));
      f = q + 1;
    } else if (*q == '\n') {
      fields_.push_back(StripCr(f, q));
      *next = q + 1;
      return kRecord;
    } else if (*q == '"') {
      return kQuoted;
    }
  }
  if (!eof_) return kNeedMore;
  fields_.push_back(StripCr(f, end));
  *next = end;
  return kRecord;
}

int CsvReader::Parse(Status* error) {
  char* base = buf_.data();
  char* p = base + pos_;
  char* end = base + end_;
  // Blank lines between records are consumed for good.
  while (p < end && (*p == '\n' || *p == '\r')) {
    if (*p == '\n') ++next_line_;
    ++p;
  }
  pos_ = static_cast<size_t>(p - base);
  if (p == end) return eof_ ? kEnd : kNeedMore;

  fields_.clear();
  unescape_.clear();
  int64_t newlines = 0;
  auto finish = [&](char* next) {
    for (size_t i = 0; i < unescape_.size(); ++i) {  // empty after the fast path
      if (unescape_[i]) fields_[i] = Unescape(fields_[i]);
    }
    record_line_ = next_line_;
    next_line_ += newlines;
    pos_ = static_cast<size_t>(next - base);
    return kRecord;
  };

  // Fast path: a line without quotes, split on commas in one pass.
  char* next = nullptr;
  int plain = SplitPlainLine(p, end, &next);
  if (plain == kNeedMore) return kNeedMore;
  if (plain == kRecord) {
    newlines = next[-1] == '\n' ? 1 : 0;
    return finish(next);
  }
  fields_.clear();

  // General path: quoted fields, which may hold commas and line breaks.
  for (;;) {
    if (p == end) {  // only after a comma: the input ends with an empty last field
      if (!eof_) return kNeedMore;
      fields_.push_back({});
      unescape_.push_back(0);
      return finish(p);
    }
    if (*p == '"') {
      char* start = p + 1;
      char* q = start;
      bool escaped = false;
      for (;;) {
        q = static_cast<char*>(std::memchr(q, '"', static_cast<size_t>(end - q)));
        if (!q) {
          if (!eof_) return kNeedMore;
          *error = InvalidArgument(name_ + ":" + std::to_string(next_line_) +
                                   ": a quoted field is never closed");
          return kError;
        }
        if (q + 1 == end && !eof_) return kNeedMore;
        if (q + 1 < end && q[1] == '"') {
          escaped = true;
          q += 2;
          continue;
        }
        break;
      }
      newlines += std::count(start, q, '\n');
      p = q + 1;
      bool cr_end =
          p < end && *p == '\r' && ((p + 1 < end && p[1] == '\n') || (p + 1 == end && eof_));
      if (p == end || *p == ',' || *p == '\n' || cr_end) {
        fields_.push_back(View(start, q));
        unescape_.push_back(escaped ? 1 : 0);
      } else {
        // Text after the closing quote: keep the field raw, quotes and all, up to the
        // delimiter, so that the caller sees (and reports) what is there.
        while (p < end && *p != ',' && *p != '\n') ++p;
        if (p == end && !eof_) return kNeedMore;
        fields_.push_back(StripCr(start - 1, p));
        unescape_.push_back(0);
      }
      if (p < end && *p == '\r') ++p;
      if (p == end) return finish(p);
    } else {
      char* q = p;
      while (q < end && *q != ',' && *q != '\n') ++q;
      if (q == end && !eof_) return kNeedMore;
      fields_.push_back(StripCr(p, q));
      unescape_.push_back(0);
      p = q;
      if (p == end) return finish(p);
    }
    if (*p == ',') {
      ++p;
      continue;
    }
    ++newlines;  // *p == '\n'
    return finish(p + 1);
  }
}

}  // namespace tf::cost
