// Helpers shared by the engine tests: where the fixtures are, and building small files.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tf::testing {

// tests/data/engine/<rel>: fixtures written by the Hugging Face libraries (see its README).
inline std::string EngineData(const std::string& rel) {
  return std::string(TENSORFLEET_TEST_DATA) + "/engine/" + rel;
}

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A safetensors file: the header JSON as given (no padding), then `data`.
inline std::string SafetensorsBytes(const std::string& header_json, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = header_json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header_json + data;
}

inline std::vector<float> ReadF32File(const std::string& path) {
  std::string bytes = ReadFileBytes(path);
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

}  // namespace tf::testing
