// Loads the one YAML document of a spec with yaml-cpp, around two of its faults: YAML::LoadAll
// loops for ever (allocating as it goes) on some stray tokens, such as a "," after the
// document, and YAML::Load silently ignores whatever follows the first document.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string_view>

#include "base/status.h"

namespace tf::jobs {

// The first document of `text`; a null node when there is none (or only empty ones).
// kInvalidArgument "<source>:<line>:<column>: invalid YAML: ..." for a syntax error anywhere
// in `text`, "<source>:<line>: the spec must be one YAML document, found another" for content
// in any document after the first. Never throws.
Result<YAML::Node> LoadOneDocument(std::string_view text, std::string_view source);

}  // namespace tf::jobs
