// Tables of fields for the YAML spec readers (jobs' spec_yaml.cc, endpoints' spec_yaml.cc): a
// mapping is read by a table of its keys, each with the function that reads its value, so that
// a key not in the table is an unknown field (with the closest known one suggested) and each
// value's reader names the field and line in its errors.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/status.h"
#include "jobs/job_spec.h"
#include "jobs/spec_reader.h"
#include "jobs/spec_rules.h"
#include "jobs/spec_text.h"

namespace tf::jobs {

template <typename T>
struct FieldRule {
  std::string_view key;
  Status (*read)(SpecReader& r, const SpecField& f, T& out);
};

// Reads the mapping `f` with `rules`; a field written with no value keeps its default.
template <typename T, size_t N>
Status ReadMapping(SpecReader& r, const SpecField& f, const std::array<FieldRule<T>, N>& rules,
                   T& out) {
  std::array<std::string_view, N> known;
  for (size_t i = 0; i < N; ++i) known[i] = rules[i].key;
  TF_ASSIGN_OR_RETURN(auto entries, r.Entries(f, known));
  for (const SpecField& entry : entries) {
    if (IsNullValue(entry.node)) continue;
    for (const auto& rule : rules) {
      if (rule.key == entry.key) TF_RETURN_IF_ERROR(rule.read(r, entry, out));
    }
  }
  return OkStatus();
}

// A mapping of free names to strings (env, node_selector).
inline Status ReadStringMap(SpecReader& r, const SpecField& f,
                            std::map<std::string, std::string>& out) {
  TF_ASSIGN_OR_RETURN(auto entries, r.Entries(f));
  for (const SpecField& entry : entries) {
    TF_ASSIGN_OR_RETURN(out[entry.key], r.String(entry));
  }
  return OkStatus();
}

// A command: a shell string becomes {"/bin/sh", "-c", string}; a list is the argv. Neither may
// be empty.
inline Status ReadCommandArgs(SpecReader& r, const SpecField& f, std::vector<std::string>& out) {
  if (f.node.IsScalar()) {
    TF_ASSIGN_OR_RETURN(std::string script, r.String(f));
    if (script.find_first_not_of(" \t\r\n") == std::string::npos) {
      return r.Error(f, "must not be empty");
    }
    out = {"/bin/sh", "-c", script};
    return OkStatus();
  }
  TF_ASSIGN_OR_RETURN(auto items, r.Items(f, "a shell command or a list of arguments"));
  if (items.empty()) return r.Error(f, "must not be empty");
  out.clear();
  for (const SpecField& item : items) {
    TF_ASSIGN_OR_RETURN(std::string arg, r.String(item));
    out.push_back(std::move(arg));
  }
  return OkStatus();
}

// "must be one of a, b, c, got "x" (did you mean "y"?)"
template <size_t N>
std::string OneOfMessage(const std::array<std::string_view, N>& options, const std::string& got) {
  std::string message = "must be one of ";
  for (size_t i = 0; i < N; ++i) message += (i ? ", " : "") + std::string(options[i]);
  message += ", got " + Quote(got);
  if (auto close = ClosestName(got, options)) message += " (did you mean " + Quote(*close) + "?)";
  return message;
}

// A value written by its name: `choices` pairs each value with the name the YAML gives it; any
// other name is refused with OneOfMessage.
template <typename E, size_t N>
Status ReadChoice(SpecReader& r, const SpecField& f,
                  const std::array<std::pair<E, std::string_view>, N>& choices, E& out) {
  TF_ASSIGN_OR_RETURN(std::string text, r.String(f));
  std::array<std::string_view, N> names;
  for (size_t i = 0; i < N; ++i) {
    if (choices[i].second == text) {
      out = choices[i].first;
      return OkStatus();
    }
    names[i] = choices[i].second;
  }
  return r.Error(f, OneOfMessage(names, text));
}

// Readers of one typed field, for the tables.
template <typename T, auto member, IntRange range>
Status IntField(SpecReader& r, const SpecField& f, T& out) {
  TF_ASSIGN_OR_RETURN(int64_t n, r.Int(f, range));
  out.*member = static_cast<std::remove_reference_t<decltype(out.*member)>>(n);  // in range
  return OkStatus();
}
template <typename T, auto member>
Status StringField(SpecReader& r, const SpecField& f, T& out) {
  TF_ASSIGN_OR_RETURN(out.*member, r.String(f));
  return OkStatus();
}
template <typename T, auto member>
Status BoolField(SpecReader& r, const SpecField& f, T& out) {
  TF_ASSIGN_OR_RETURN(out.*member, r.Bool(f));
  return OkStatus();
}
template <typename T, auto member>
Status DurationField(SpecReader& r, const SpecField& f, T& out) {
  TF_ASSIGN_OR_RETURN(out.*member, r.Duration(f));
  return OkStatus();
}
template <typename T, auto member>
Status MemoryField(SpecReader& r, const SpecField& f, T& out) {
  TF_ASSIGN_OR_RETURN(out.*member, r.Memory(f));
  return OkStatus();
}

// `resources:` as jobs write it (gpus, gpu_memory, cpus, memory), for any spec that places work
// on nodes.
inline constexpr std::array<FieldRule<Resources>, 4> kResourceRules = {{
    {"gpus", IntField<Resources, &Resources::gpus, kGpusRange>},
    {"gpu_memory", MemoryField<Resources, &Resources::gpu_memory_bytes>},
    {"cpus", IntField<Resources, &Resources::cpus, kCpusRange>},
    {"memory", MemoryField<Resources, &Resources::memory_bytes>},
}};

}  // namespace tf::jobs
