#include "s3/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <ctime>

#include "base/crypto.h"
#include "http/url.h"

namespace tf::s3 {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsLowerHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

int Number(std::string_view digits) {
  int n = 0;
  for (char c : digits) n = n * 10 + (c - '0');
  return n;
}

}  // namespace

std::string Credential::Scope() const {
  return date + "/" + region + "/" + service + "/aws4_request";
}

Result<Credential> ParseCredential(std::string_view text) {
  std::vector<std::string_view> parts;
  while (true) {
    size_t slash = text.find('/');
    parts.push_back(text.substr(0, slash));
    if (slash == std::string_view::npos) break;
    text.remove_prefix(slash + 1);
  }
  if (parts.size() != 5) {
    return InvalidArgument(
        "the credential must be KEY-ID/DATE/REGION/SERVICE/aws4_request, "
        "not " +
        std::to_string(parts.size()) + " parts");
  }
  if (parts[0].empty()) return InvalidArgument("the credential names no access key");
  if (parts[1].size() != 8 || !IsDigits(parts[1])) {
    return InvalidArgument("the credential's date '" + std::string(parts[1]) + "' is not YYYYMMDD");
  }
  if (parts[2].empty() || parts[3].empty()) {
    return InvalidArgument("the credential's region and service must not be empty");
  }
  if (parts[4] != "aws4_request") {
    return InvalidArgument("the credential must end with aws4_request, not '" +
                           std::string(parts[4]) + "'");
  }
  return Credential{std::string(parts[0]), std::string(parts[1]), std::string(parts[2]),
                    std::string(parts[3])};
}

Result<std::vector<std::string>> ParseSignedHeaders(std::string_view list) {
  std::vector<std::string> out;
  while (true) {
    size_t semi = list.find(';');
    std::string_view name = list.substr(0, semi);
    if (name.empty()) return InvalidArgument("SignedHeaders holds an empty name");
    for (char c : name) {
      if (c >= 'A' && c <= 'Z') {
        return InvalidArgument("SignedHeaders must be lower-case: '" + std::string(name) + "'");
      }
      if (c <= ' ' || c == ',' || c == ':') {
        return InvalidArgument("SignedHeaders holds a malformed name");
      }
    }
    if (std::find(out.begin(), out.end(), name) != out.end()) {
      return InvalidArgument("SignedHeaders names '" + std::string(name) + "' twice");
    }
    out.emplace_back(name);
    if (semi == std::string_view::npos) break;
    list.remove_prefix(semi + 1);
  }
  return out;
}

Result<Authorization> ParseAuthorization(std::string_view header) {
  header = Trim(header);
  if (header.substr(0, kAlgorithm.size()) != kAlgorithm ||
      (header.size() > kAlgorithm.size() && header[kAlgorithm.size()] != ' ')) {
    return InvalidArgument("the Authorization header must start with " + std::string(kAlgorithm));
  }
  header.remove_prefix(kAlgorithm.size());
  std::string_view credential, signed_headers, signature;
  bool has_credential = false, has_headers = false, has_signature = false;
  while (!header.empty()) {
    size_t comma = header.find(',');
    std::string_view part = Trim(header.substr(0, comma));
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    if (part.empty()) continue;
    size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      return InvalidArgument("the Authorization header has a part without '=': '" +
                             std::string(part) + "'");
    }
    std::string_view name = part.substr(0, eq), value = part.substr(eq + 1);
    if (name == "Credential") {
      credential = value;
      has_credential = true;
    } else if (name == "SignedHeaders") {
      signed_headers = value;
      has_headers = true;
    } else if (name == "Signature") {
      signature = value;
      has_signature = true;
    } else {
      return InvalidArgument("the Authorization header has an unknown part '" + std::string(name) +
                             "'");
    }
  }
  if (!has_credential) return InvalidArgument("the Authorization header has no Credential");
  if (!has_headers) return InvalidArgument("the Authorization header has no SignedHeaders");
  if (!has_signature) return InvalidArgument("the Authorization header has no Signature");
  Authorization out;
  TF_ASSIGN_OR_RETURN(out.credential, ParseCredential(credential));
  TF_ASSIGN_OR_RETURN(out.signed_headers, ParseSignedHeaders(signed_headers));
  if (signature.size() != 64 || !IsLowerHex(signature)) {
    return InvalidArgument("the Signature must be 64 lower-case hex digits");
  }
  out.signature = std::string(signature);
  return out;
}

std::string CanonicalQuery(std::string_view raw_query, std::string_view skip) {
  std::vector<std::pair<std::string, std::string>> params;
  while (!raw_query.empty()) {
    size_t amp = raw_query.find('&');
    std::string_view part = raw_query.substr(0, amp);
    raw_query = amp == std::string_view::npos ? std::string_view() : raw_query.substr(amp + 1);
    if (part.empty()) continue;
    size_t eq = part.find('=');
    std::string name = http::PercentDecode(part.substr(0, eq), /*plus_is_space=*/false);
    if (!skip.empty() && name == skip) continue;
    std::string value = eq == std::string_view::npos
                            ? std::string()
                            : http::PercentDecode(part.substr(eq + 1), /*plus_is_space=*/false);
    params.emplace_back(http::PercentEncode(name), http::PercentEncode(value));
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out.push_back('&');
    out += name;
    out.push_back('=');
    out += value;
  }
  return out;
}

std::string CanonicalHeaderValue(std::string_view value, HeaderBlanks blanks) {
  value = Trim(value);
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    const bool blank = c == ' ' || (c == '\t' && blanks == HeaderBlanks::kSpacesAndTabs);
    if (blank && !out.empty() && out.back() == ' ') continue;
    out.push_back(blank ? ' ' : c);
  }
  return out;
}

std::string CanonicalRequest(const CanonicalInput& in) {
  std::string out = in.method + "\n" + in.uri + "\n" + in.query + "\n";
  std::string names;
  for (const auto& [name, value] : in.headers) {
    out += name + ":" + CanonicalHeaderValue(value, in.blanks) + "\n";
    if (!names.empty()) names.push_back(';');
    names += name;
  }
  out += "\n" + names + "\n" + in.payload_hash;
  return out;
}

std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request) {
  return std::string(kAlgorithm) + "\n" + std::string(amz_date) + "\n" + std::string(scope) + "\n" +
         Sha256Hex(canonical_request);
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string SigningKey(std::string_view secret, const Credential& c) {
  std::string key = HmacSha256("AWS4" + std::string(secret), c.date);
  key = HmacSha256(key, c.region);
  key = HmacSha256(key, c.service);
  return HmacSha256(key, "aws4_request");
}

std::string Signature(std::string_view signing_key, std::string_view string_to_sign) {
  return HexEncode(HmacSha256(signing_key, string_to_sign));
}

std::string ChunkStringToSign(std::string_view amz_date, std::string_view scope,
                              std::string_view previous_signature, std::string_view chunk_sha256) {
  return "AWS4-HMAC-SHA256-PAYLOAD\n" + std::string(amz_date) + "\n" + std::string(scope) + "\n" +
         std::string(previous_signature) + "\n" + std::string(kEmptySha256) + "\n" +
         std::string(chunk_sha256);
}

std::string TrailerStringToSign(std::string_view amz_date, std::string_view scope,
                                std::string_view previous_signature,
                                std::string_view trailers_sha256) {
  return "AWS4-HMAC-SHA256-TRAILER\n" + std::string(amz_date) + "\n" + std::string(scope) + "\n" +
         std::string(previous_signature) + "\n" + std::string(trailers_sha256);
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

Result<TimeMs> ParseAmzDate(std::string_view text) {
  if (text.size() != 16 || text[8] != 'T' || text[15] != 'Z' || !IsDigits(text.substr(0, 8)) ||
      !IsDigits(text.substr(9, 6))) {
    return InvalidArgument("'" + std::string(text.substr(0, 40)) +
                           "' is not a date of the form 20130524T000000Z");
  }
  std::tm tm{};
  tm.tm_year = Number(text.substr(0, 4)) - 1900;
  tm.tm_mon = Number(text.substr(4, 2)) - 1;
  tm.tm_mday = Number(text.substr(6, 2));
  tm.tm_hour = Number(text.substr(9, 2));
  tm.tm_min = Number(text.substr(11, 2));
  tm.tm_sec = Number(text.substr(13, 2));
  const int month = tm.tm_mon, day = tm.tm_mday;
  if (month < 0 || month > 11 || day < 1 || day > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
      tm.tm_sec > 60) {
    return InvalidArgument("'" + std::string(text) + "' is not a valid date");
  }
  std::time_t t = timegm(&tm);
  if (tm.tm_mon != month || tm.tm_mday != day) {  // normalised: Feb 30 and the like
    return InvalidArgument("'" + std::string(text) + "' is not a valid date");
  }
  return static_cast<TimeMs>(t) * 1000;
}

std::string FormatAmzDate(TimeMs t) {
  std::time_t seconds = static_cast<std::time_t>(t / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char out[32];
  std::strftime(out, sizeof out, "%Y%m%dT%H%M%SZ", &tm);
  return out;
}

}  // namespace tf::s3
