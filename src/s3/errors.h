// S3's errors: the code a client acts on, the HTTP status that goes with it, and the XML body
// that carries both. The Status-to-S3 table lives here and nowhere else.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/outcome.h"
#include "base/status.h"

namespace tf::s3 {

struct Error {
  int status = 500;
  std::string code;  // "NoSuchKey"
  std::string message;
  // More elements of the body, in order: {"BucketName", "photos"}, {"StringToSign", ...}.
  std::vector<std::pair<std::string, std::string>> details;

  Error& With(std::string name, std::string value) {
    details.emplace_back(std::move(name), std::move(value));
    return *this;
  }
};

// An error with `code`'s HTTP status (AccessDenied: 403, NoSuchKey: 404, InvalidRange: 416,
// ...). A code this table does not know gets 500.
Error MakeError(std::string_view code, std::string message);

// A service's Status as S3 reports it, for the cases no route says better: kNotFound becomes
// NoSuchKey, kAlreadyExists BucketAlreadyOwnedByYou, kInvalidArgument InvalidArgument,
// kUnavailable ServiceUnavailable, a full disk InsufficientStorage (507), and so on.
Error FromStatus(const Status& status);

// <Error><Code/><Message/>details<Resource/><RequestId/></Error>
std::string ErrorBody(const Error& error, std::string_view resource, std::string_view request_id);

// Either a value or an S3 error.
template <typename T>
using Outcome = ::tf::Outcome<T, Error>;

}  // namespace tf::s3
