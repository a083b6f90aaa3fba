#include "endpoints/replica_jobs.h"

#include <array>
#include <utility>

#include "base/shell_quote.h"
#include "jobs/quantities.h"
#include "jobs/spec_rules.h"

namespace tf::endpoints {
namespace {

constexpr size_t kMaxJobNameBytes = 63;
constexpr std::string_view kModelDir = "model";  // in the job's working directory

// {placeholder, the shell expression that holds its value}; {model} is the caller's.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kPlaceholders = {{
    {"{port}", "\"$TENSORFLEET_MASTER_PORT\""},
    {"{host}", "\"$TENSORFLEET_MASTER_ADDR\""},
    {"{gpus}", "\"$TENSORFLEET_GPUS_PER_NODE\""},
    {"{api_key}", "\"$TENSORFLEET_ENGINE_API_KEY\""},
}};

// A command engine's script: a string is a script already (its placeholders replaced in
// place); a list of arguments is quoted word by word.
std::string CommandScript(const EngineSpec& engine, const std::string& model_word) {
  const auto& argv = engine.command;
  if (argv.size() == 3 && argv[0] == "/bin/sh" && argv[1] == "-c") {
    std::string script = argv[2];
    auto replace_all = [&](std::string_view from, std::string_view to) {
      for (size_t at = script.find(from); at != std::string::npos;
           at = script.find(from, at + to.size())) {
        script.replace(at, from.size(), to);
      }
    };
    replace_all("{model}", model_word);
    for (const auto& [name, expression] : kPlaceholders) replace_all(name, expression);
    return script;
  }
  std::string script = "exec";
  for (const std::string& arg : argv) script += " " + ShellWordWithPlaceholders(arg, model_word);
  return script;
}

std::string BuiltinScript(const EndpointSpec& spec, const std::string& model_word) {
  const EngineSpec& e = spec.engine;
  // Unset: as many threads as the replica has CPUs (its quota), not the node's every core.
  const int threads = e.threads > 0 ? e.threads : spec.resources.cpus;
  return "exec \"$TENSORFLEET_BIN\" engine serve --model " + model_word +
         " --host \"$TENSORFLEET_MASTER_ADDR\" --port \"$TENSORFLEET_MASTER_PORT\"" +
         " --served-name " + ShellQuote(spec.name) + " --threads " + std::to_string(threads) +
         " --quantize " + ShellQuote(e.quantize) + " --kv-cache-mb " +
         std::to_string(e.kv_cache_bytes >> 20) + " --max-batch " + std::to_string(e.max_batch) +
         " --shutdown-grace " + jobs::FormatDuration(kReplicaDrainGraceMs);
}

}  // namespace

std::string ShellWordWithPlaceholders(std::string_view arg, const std::string& model_word) {
  std::string out;
  std::string literal;
  auto flush = [&] {
    if (!literal.empty()) out += ShellQuote(literal);
    literal.clear();
  };
  size_t i = 0;
  while (i < arg.size()) {
    std::string_view rest = arg.substr(i);
    std::string_view expression, name;
    if (rest.starts_with("{model}")) {
      expression = model_word;
      name = "{model}";
    }
    for (const auto& [placeholder, value] : kPlaceholders) {
      if (rest.starts_with(placeholder)) {
        expression = value;
        name = placeholder;
      }
    }
    if (name.empty()) {
      literal += arg[i++];
      continue;
    }
    flush();
    out += expression;
    i += name.size();
  }
  flush();
  return out.empty() ? "''" : out;
}

std::string ReplicaJobName(std::string_view endpoint_name, std::string_view replica_id) {
  std::string_view suffix = replica_id.substr(replica_id.find('_') + 1);
  size_t room = kMaxJobNameBytes - suffix.size() - 1;
  std::string name(endpoint_name.substr(0, room));
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name + "-" + std::string(suffix);
}

jobs::JobSpec ReplicaJobSpec(const EndpointSpec& spec, std::string_view replica_id,
                             const std::string& model_url, const std::string& api_key) {
  jobs::JobSpec job;
  job.name = ReplicaJobName(spec.name, replica_id);
  std::string script = "set -e\n";
  std::string model_word;
  if (model_url.starts_with("tf://")) {
    // Copied with the job's own token, into its working directory.
    script += "TENSORFLEET_URL=\"$TENSORFLEET_SERVER_URL\" \"$TENSORFLEET_BIN\" cp -r " +
              ShellQuote(model_url) + " " + std::string(kModelDir) + "\n";
    model_word = std::string(kModelDir);
  } else {
    model_word = ShellQuote(model_url);
  }
  script += spec.engine.kind == EngineKind::kBuiltin ? BuiltinScript(spec, model_word)
                                                     : CommandScript(spec.engine, model_word);
  job.command = {"/bin/sh", "-c", script + "\n"};
  job.env = spec.env;
  if (!api_key.empty()) job.env[std::string(jobs::kEngineApiKeyEnv)] = api_key;
  job.drain_grace_ms = kReplicaDrainGraceMs;
  job.resources = spec.resources;
  job.resources.gpu_memory_bytes = spec.gpu_memory_bytes;
  job.node_selector = spec.node_selector;
  job.checkpoint.enabled = false;
  job.retry = jobs::RetryPolicy{
      .on_interruption = false, .on_node_lost = false, .on_error = false, .max_attempts = 1};
  switch (spec.spot) {
    case SpotPolicy::kNever:
      job.capacity = jobs::CapacityType::kOnDemand;
      break;
    case SpotPolicy::kOnly:
      job.capacity = jobs::CapacityType::kSpot;
      break;
    case SpotPolicy::kPrefer:
      job.capacity = jobs::CapacityType::kPreferSpot;
      break;
  }
  return job;
}

}  // namespace tf::endpoints
