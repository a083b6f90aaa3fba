// Whole files in tests: written (with their folders) and read back.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace tf::testing {

// Writes `content` to `path` (replacing it), making its folders first; returns the path.
inline std::string WriteFile(const std::filesystem::path& path, const std::string& content) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  return path.string();
}

// The whole of `path`; empty if it cannot be read.
inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace tf::testing
