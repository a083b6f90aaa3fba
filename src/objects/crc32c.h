// CRC-32C (Castagnoli), the checksum of each block of a blob. Uses the CPU's CRC32 instruction
// where there is one (SSE 4.2), a table otherwise; both give the same values.
#pragma once

#include <cstdint>
#include <string_view>

namespace tf::objects {

// The CRC-32C of `data` appended to data whose CRC-32C is `crc` (0 for the start).
// Crc32c("123456789") == 0xe3069283.
uint32_t Crc32c(std::string_view data, uint32_t crc = 0);

}  // namespace tf::objects
