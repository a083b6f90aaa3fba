#include "s3/aws_chunked.h"

#include <algorithm>
#include <cctype>

#include "base/crypto.h"

namespace tf::s3 {

AwsChunkedDecoder::AwsChunkedDecoder(std::string signing_key, std::string amz_date,
                                     std::string scope, std::string seed_signature,
                                     bool signed_trailer)
    : trailer_(signed_trailer),
      key_(std::move(signing_key)),
      date_(std::move(amz_date)),
      scope_(std::move(scope)),
      previous_(std::move(seed_signature)) {}

AwsChunkedDecoder::AwsChunkedDecoder(UnsignedWithTrailer) : signed_(false) {}

AwsChunkedDecoder::~AwsChunkedDecoder() = default;

Status AwsChunkedDecoder::Fail(Status s) {
  state_ = State::kFailed;
  failed_ = s;
  return s;
}

Status AwsChunkedDecoder::ParseHeader() {
  const std::string where = "chunk " + std::to_string(chunks_ + 1);
  if (line_.size() < 2 || line_[line_.size() - 2] != '\r') {
    return InvalidArgument(where + ": its header line does not end with CRLF");
  }
  std::string_view line(line_.data(), line_.size() - 2);
  size_t semi = line.find(';');
  std::string_view size = line.substr(0, semi);
  if (size.empty() || size.size() > 10) {
    return InvalidArgument(where + ": the size must be 1-10 hex digits");
  }
  uint64_t n = 0;
  for (char c : size) {
    int v = (c >= '0' && c <= '9')   ? c - '0'
            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                     : -1;
    if (v < 0) return InvalidArgument(where + ": the size is not hex");
    n = n * 16 + static_cast<uint64_t>(v);
  }
  if (!signed_) {  // any chunk extensions after ';' are ignored, as HTTP's chunked coding says
    remaining_ = n;
    line_.clear();
    state_ = n > 0 ? State::kData : State::kTrailer;
    return OkStatus();
  }
  constexpr std::string_view kSignature = "chunk-signature=";
  std::string_view rest =
      semi == std::string_view::npos ? std::string_view() : line.substr(semi + 1);
  if (rest.substr(0, kSignature.size()) != kSignature) {
    return InvalidArgument(where + ": the header has no chunk-signature");
  }
  std::string_view signature = rest.substr(kSignature.size());
  bool hex = signature.size() == 64 && std::all_of(signature.begin(), signature.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
             });
  if (!hex)
    return InvalidArgument(where + ": the chunk-signature must be 64 lower-case hex digits");
  signature_ = std::string(signature);
  remaining_ = n;
  line_.clear();
  hasher_ = std::make_unique<Sha256Stream>();
  if (n > 0) {
    state_ = State::kData;
    return OkStatus();
  }
  state_ = trailer_ ? State::kTrailer : State::kFinalEnd;
  return CheckSignature();
}

Status AwsChunkedDecoder::ParseTrailer() {
  if (line_.size() < 2 || line_[line_.size() - 2] != '\r') {
    return InvalidArgument("a trailing header line does not end with CRLF");
  }
  std::string_view line(line_.data(), line_.size() - 2);
  if (line.empty()) {  // the blank line that ends the body
    line_.clear();
    if (signed_) TF_RETURN_IF_ERROR(CheckTrailerSignature());
    state_ = State::kDone;
    return OkStatus();
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    return InvalidArgument("a trailing header is not NAME:VALUE");
  }
  if (trailers_.size() >= kMaxTrailers) {
    return InvalidArgument("more than " + std::to_string(kMaxTrailers) + " trailing headers");
  }
  std::string name(line.substr(0, colon));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  line_.clear();
  if (signed_ && name == "x-amz-trailer-signature") {
    if (!trailer_signature_.empty()) return InvalidArgument("the trailer signature comes twice");
    trailer_signature_ = std::string(value);
    return OkStatus();
  }
  if (!trailer_signature_.empty()) {
    return InvalidArgument("trailing header '" + name + "' comes after the trailer signature");
  }
  trailers_[name] = std::string(value);
  return OkStatus();
}

Status AwsChunkedDecoder::CheckTrailerSignature() {
  if (trailer_signature_.empty()) {
    return InvalidArgument("the trailing headers end without x-amz-trailer-signature");
  }
  // As canonical headers are written: by name, inner runs of spaces as one.
  std::string canonical;
  for (const auto& [name, value] : trailers_) {
    canonical += name + ":" + CanonicalHeaderValue(value) + "\n";
  }
  const std::string to_sign = TrailerStringToSign(date_, scope_, previous_, Sha256Hex(canonical));
  if (!ConstantTimeEquals(Signature(key_, to_sign), trailer_signature_)) {
    return Unauthenticated("the signature of the trailing headers does not match them");
  }
  return OkStatus();
}

Status AwsChunkedDecoder::CheckSignature() {
  ++chunks_;
  std::string to_sign = ChunkStringToSign(date_, scope_, previous_, hasher_->FinishHex());
  hasher_.reset();
  if (!ConstantTimeEquals(Signature(key_, to_sign), signature_)) {
    return Unauthenticated("the signature of chunk " + std::to_string(chunks_) +
                           " does not match its content");
  }
  previous_ = signature_;
  return OkStatus();
}

Result<bool> AwsChunkedDecoder::GatherLine(std::string_view& in, const std::string& what) {
  const size_t newline = in.find('\n');
  const size_t take = newline == std::string_view::npos ? in.size() : newline + 1;
  if (line_.size() + take > kMaxHeaderBytes) {
    return InvalidArgument(what + " is longer than " + std::to_string(kMaxHeaderBytes) + " bytes");
  }
  line_.append(in.substr(0, take));
  in.remove_prefix(take);
  return newline != std::string_view::npos;
}

Status AwsChunkedDecoder::Feed(std::string_view in, std::string* out) {
  if (state_ == State::kFailed) return failed_;
  while (!in.empty()) {
    switch (state_) {
      case State::kHeader:
      case State::kTrailer: {
        const bool header = state_ == State::kHeader;
        Result<bool> whole =
            GatherLine(in, header ? "chunk " + std::to_string(chunks_ + 1) + ": the header line"
                                  : std::string("a trailing header line"));
        if (!whole.ok()) return Fail(whole.status());
        if (*whole) {
          if (Status s = header ? ParseHeader() : ParseTrailer(); !s.ok()) return Fail(s);
        }
        break;
      }
      case State::kData: {
        size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, in.size()));
        if (hasher_) hasher_->Update(in.substr(0, take));
        out->append(in.substr(0, take));
        in.remove_prefix(take);
        remaining_ -= take;
        decoded_ += take;
        if (remaining_ == 0) state_ = State::kDataEnd;
        break;
      }
      case State::kDataEnd:
      case State::kFinalEnd: {
        size_t take = std::min<size_t>(2 - line_.size(), in.size());
        line_.append(in.substr(0, take));
        in.remove_prefix(take);
        if (line_.size() < 2) break;
        if (line_ != "\r\n") {
          return Fail(
              InvalidArgument("chunk " + std::to_string(chunks_ + 1) + " is not followed by CRLF"));
        }
        line_.clear();
        if (state_ == State::kFinalEnd) {
          state_ = State::kDone;
        } else if (!signed_) {
          ++chunks_;
          state_ = State::kHeader;
        } else if (Status s = CheckSignature(); !s.ok()) {
          return Fail(s);
        } else {
          state_ = State::kHeader;
        }
        break;
      }
      case State::kDone:
        return Fail(InvalidArgument("the body goes on after its final chunk"));
      case State::kFailed:
        return failed_;
    }
  }
  return OkStatus();
}

}  // namespace tf::s3
