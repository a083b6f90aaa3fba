// Private to the gzip byte sources (byte_source_zlib.cc, byte_source_isal.cc): the errors
// both inflaters give, so that a bad file reads the same whichever one the build chose.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace tf::cost::gzip_internal {

// The input ended inside a member: `offset` is where it ended (the compressed size read),
// `member_start` where that member began.
inline Status EndsEarly(const std::string& name, uint64_t offset, uint64_t member_start) {
  return InvalidArgument(name + ": gzip data ends early at byte " + std::to_string(offset) +
                         " (in the member starting at byte " + std::to_string(member_start) +
                         "; truncated file?)");
}

// The inflater rejected the data; `offset` is the compressed byte it had reached (inflaters
// read a few bytes ahead, so the fault is at or a little before it).
inline Status Corrupt(const std::string& name, uint64_t offset, const std::string& why) {
  return InvalidArgument(name + ": corrupt gzip data near byte " + std::to_string(offset) + " (" +
                         why + ")");
}

// Whether IsalGzipSource is built in.
bool HaveIsal();

}  // namespace tf::cost::gzip_internal
