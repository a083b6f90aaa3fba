#include "cli/server_config.h"

#include <array>
#include <fstream>
#include <sstream>

#include "jobs/spec_text.h"
#include "jobs/yaml_document.h"

namespace tf::cli {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The text of one item of the `pools:` list: its lines [first, end) of the file, the item's
// "- " blanked out, after `first` empty lines, so that the spec's lines are the file's.
std::string ItemText(const std::vector<std::string>& lines, size_t first, size_t column,
                     size_t end) {
  std::string text(first, '\n');
  for (size_t i = first; i < end && i < lines.size(); ++i) {
    std::string line = lines[i];
    if (i == first) line.replace(0, std::min(column, line.size()), std::string(column, ' '));
    text += line + "\n";
  }
  return text;
}

}  // namespace

Result<ServerConfig> ReadServerConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read the config file " + path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  TF_ASSIGN_OR_RETURN(YAML::Node doc, jobs::LoadOneDocument(text, path));
  ServerConfig config;
  if (!doc || doc.IsNull()) return config;
  auto error = [&](const YAML::Node& node, const std::string& what) {
    return InvalidArgument(path + ":" + std::to_string(node.Mark().line + 1) + ": " + what);
  };
  if (!doc.IsMap()) return error(doc, "the config must be a mapping of settings and pools");
  std::array<std::string_view, std::size(kServerSettings) + 1> known;
  for (size_t i = 0; i < std::size(kServerSettings); ++i) known[i] = kServerSettings[i];
  known.back() = "pools";
  // Where each top-level key starts: the last pool ends where the next key does.
  std::vector<size_t> key_lines;
  for (const auto& entry : doc) key_lines.push_back(static_cast<size_t>(entry.first.Mark().line));
  std::vector<std::string> lines = Lines(text);
  for (const auto& entry : doc) {
    std::string key = entry.first.as<std::string>();
    const YAML::Node& value = entry.second;
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string message = "unknown setting " + jobs::Quote(key);
      if (auto close = jobs::ClosestName(key, known)) {
        message += " (did you mean " + jobs::Quote(*close) + "?)";
      }
      return error(entry.first, message);
    }
    if (key != "pools") {
      if (!value.IsScalar()) return error(value, key + ": must be a single value");
      config.settings[key] = value.Scalar();
      continue;
    }
    if (value.IsNull()) continue;
    if (!value.IsSequence()) return error(value, "pools: must be a list of pool specs");
    size_t key_line = static_cast<size_t>(entry.first.Mark().line);
    size_t pools_end = lines.size();
    for (size_t line : key_lines) {
      if (line > key_line) pools_end = std::min(pools_end, line);
    }
    for (size_t i = 0; i < value.size(); ++i) {
      const YAML::Node& item = value[i];
      if (!item.IsMap())
        return error(item, "pools[" + std::to_string(i) + "]: must be a pool spec");
      size_t first = static_cast<size_t>(item.Mark().line);
      size_t end = i + 1 < value.size() ? static_cast<size_t>(value[i + 1].Mark().line) : pools_end;
      config.pools.emplace_back(
          ItemText(lines, first, static_cast<size_t>(item.Mark().column), end), path);
    }
  }
  return config;
}

}  // namespace tf::cli
