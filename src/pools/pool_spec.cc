// ParsePoolSpec with the jobs' spec reader and field tables (jobs/spec_fields.h), and the
// spec's JSON form for the store and the API.
#include "pools/pool_spec.h"

#include <array>
#include <exception>
#include <optional>

#include "jobs/quantities.h"
#include "jobs/spec_fields.h"
#include "jobs/spec_reader.h"
#include "jobs/spec_rules.h"
#include "jobs/spec_text.h"
#include "jobs/yaml_document.h"

namespace tf::pools {
namespace {

using jobs::FieldRule;
using Reader = jobs::SpecReader;
using Field = jobs::SpecField;

constexpr jobs::IntRange kNodeCountRange{0, kMaxPoolNodes};
constexpr jobs::IntRange kTimeoutRange{kSecondMs, kDayMs};
constexpr jobs::IntRange kScriptTimeoutRange{kSecondMs, kHourMs};
constexpr jobs::IntRange kRetriesRange{0, 10};

struct Problem {
  std::string path;
  std::string message;
};

Status ReadPrice(Reader& r, const Field& f, MachineShape& m) {
  TF_ASSIGN_OR_RETURN(nlohmann::json value, r.TypedScalar(f));
  if (!value.is_number() || value.get<double>() < 0 || value.get<double>() > 10'000) {
    return r.Error(f, "must be a price in USD per hour from 0 to 10000, got " +
                          jobs::Quote(value.is_string() ? value.get<std::string>() : value.dump()));
  }
  m.price_per_hour = value.get<double>();
  return OkStatus();
}

Status ReadLabels(Reader& r, const Field& f, MachineShape& m) {
  return jobs::ReadStringMap(r, f, m.labels);
}

constexpr std::array<FieldRule<MachineShape>, 10> kMachineRules = {{
    {"gpus", jobs::IntField<MachineShape, &MachineShape::gpus, jobs::kGpusRange>},
    {"gpu_model", jobs::StringField<MachineShape, &MachineShape::gpu_model>},
    {"gpu_memory", jobs::MemoryField<MachineShape, &MachineShape::gpu_memory_bytes>},
    {"cpus", jobs::IntField<MachineShape, &MachineShape::cpus, jobs::kCpusRange>},
    {"memory", jobs::MemoryField<MachineShape, &MachineShape::memory_bytes>},
    {"price_per_hour", ReadPrice},
    {"spot", jobs::BoolField<MachineShape, &MachineShape::spot>},
    {"zone", jobs::StringField<MachineShape, &MachineShape::zone>},
    {"placement_group", jobs::StringField<MachineShape, &MachineShape::placement_group>},
    {"labels", ReadLabels},
}};

Status ReadType(Reader& r, const Field& f, ProviderSpec& p) {
  static constexpr std::array<std::pair<ProviderType, std::string_view>, 3> kChoices = {{
      {ProviderType::kLocal, "local"},
      {ProviderType::kCommand, "command"},
      {ProviderType::kSsh, "ssh"},
  }};
  return jobs::ReadChoice(r, f, kChoices, p.type);
}

template <std::vector<std::string> CommandScripts::*member>
Status ReadScript(Reader& r, const Field& f, ProviderSpec& p) {
  return jobs::ReadCommandArgs(r, f, p.command.*member);
}

Status ReadScriptTimeout(Reader& r, const Field& f, ProviderSpec& p) {
  TF_ASSIGN_OR_RETURN(p.timeout_ms, r.Duration(f));
  if (p.timeout_ms < kScriptTimeoutRange.min || p.timeout_ms > kScriptTimeoutRange.max) {
    return r.Error(f, "must be from 1s to 1h, got " + jobs::FormatDuration(p.timeout_ms));
  }
  return OkStatus();
}

Status ReadRetries(Reader& r, const Field& f, ProviderSpec& p) {
  TF_ASSIGN_OR_RETURN(int64_t n, r.Int(f, kRetriesRange));
  p.retries = static_cast<int>(n);
  return OkStatus();
}

Status ReadScriptEnv(Reader& r, const Field& f, ProviderSpec& p) {
  return jobs::ReadStringMap(r, f, p.command.env);
}

Status ReadServerUrl(Reader& r, const Field& f, ProviderSpec& p) {
  TF_ASSIGN_OR_RETURN(p.server_url, r.String(f));
  if (p.server_url.rfind("http://", 0) != 0 && p.server_url.rfind("https://", 0) != 0) {
    return r.Error(f, "must be an http:// or https:// URL, got " + jobs::Quote(p.server_url));
  }
  return OkStatus();
}

// [user@]host[:port], of letters, digits and . - _ (and the port's digits).
bool IsSshHost(const std::string& text) {
  if (text.empty() || text.size() > 255) return false;
  size_t at = text.find('@');
  std::string host = at == std::string::npos ? text : text.substr(at + 1);
  size_t colon = host.rfind(':');
  if (colon != std::string::npos) {
    std::string port = host.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != port.npos) {
      return false;
    }
    host = host.substr(0, colon);
  }
  std::string user = at == std::string::npos ? "" : text.substr(0, at);
  auto plain = [](const std::string& s) {
    return s.find_first_not_of(
               "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") ==
           std::string::npos;
  };
  return !host.empty() && host[0] != '-' && plain(host) && plain(user) &&
         (at == std::string::npos || !user.empty());
}

Status ReadHosts(Reader& r, const Field& f, ProviderSpec& p) {
  TF_ASSIGN_OR_RETURN(auto items, r.Items(f, "a list of [user@]host[:port]"));
  for (const Field& item : items) {
    TF_ASSIGN_OR_RETURN(std::string host, r.String(item));
    if (!IsSshHost(host)) {
      return r.Error(item, "must be [user@]host[:port], got " + jobs::Quote(host));
    }
    p.ssh.hosts.push_back(std::move(host));
  }
  return OkStatus();
}

template <std::string SshHosts::*member>
Status ReadSshPath(Reader& r, const Field& f, ProviderSpec& p) {
  TF_ASSIGN_OR_RETURN(p.ssh.*member, r.String(f));
  if ((p.ssh.*member).empty() || (p.ssh.*member).find('\'') != std::string::npos) {
    return r.Error(f, "must be a path without quotes");
  }
  return OkStatus();
}

Status ReadInstall(Reader& r, const Field& f, ProviderSpec& p) {
  return jobs::BoolField<SshHosts, &SshHosts::install>(r, f, p.ssh);
}

constexpr std::array<FieldRule<ProviderSpec>, 13> kProviderRules = {{
    {"type", ReadType},
    {"create", ReadScript<&CommandScripts::create>},
    {"delete", ReadScript<&CommandScripts::remove>},
    {"list", ReadScript<&CommandScripts::list>},
    {"timeout", ReadScriptTimeout},
    {"retries", ReadRetries},
    {"env", ReadScriptEnv},
    {"server_url", ReadServerUrl},
    {"hosts", ReadHosts},
    {"key", ReadSshPath<&SshHosts::key>},
    {"known_hosts", ReadSshPath<&SshHosts::known_hosts>},
    {"remote_dir", ReadSshPath<&SshHosts::remote_dir>},
    {"install", ReadInstall},
}};

// "provider: local", or a mapping with its type.
Status ReadProvider(Reader& r, const Field& f, PoolSpec& spec) {
  if (f.node.IsScalar()) return ReadType(r, f, spec.provider);
  return jobs::ReadMapping(r, f, kProviderRules, spec.provider);
}

Status ReadMachine(Reader& r, const Field& f, PoolSpec& spec) {
  return jobs::ReadMapping(r, f, kMachineRules, spec.machine);
}

Status ReadName(Reader& r, const Field& f, PoolSpec& spec) {
  TF_ASSIGN_OR_RETURN(spec.name, r.String(f));
  return OkStatus();
}

constexpr std::array<FieldRule<PoolSpec>, 7> kSpecRules = {{
    {"name", ReadName},
    {"provider", ReadProvider},
    {"machine", ReadMachine},
    {"min", jobs::IntField<PoolSpec, &PoolSpec::min, kNodeCountRange>},
    {"max", jobs::IntField<PoolSpec, &PoolSpec::max, kNodeCountRange>},
    {"idle_timeout", jobs::DurationField<PoolSpec, &PoolSpec::idle_timeout_ms>},
    {"start_timeout", jobs::DurationField<PoolSpec, &PoolSpec::start_timeout_ms>},
}};

bool IsPoolName(std::string_view name) {
  if (name.empty() || name.size() > 40 || name[0] < 'a' || name[0] > 'z') return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

std::optional<Problem> FindProblem(const PoolSpec& spec) {
  if (spec.name.empty()) return Problem{"name", "is required"};
  if (!IsPoolName(spec.name)) {
    return Problem{"name",
                   "must be 1-40 lowercase letters, digits and -, starting with a "
                   "letter, got " +
                       jobs::Quote(spec.name)};
  }
  if (spec.max < spec.min) {
    return Problem{"max", "must be at least min (" + std::to_string(spec.min) + "), got " +
                              std::to_string(spec.max)};
  }
  for (auto [path, value] : {std::pair{"idle_timeout", spec.idle_timeout_ms},
                             std::pair{"start_timeout", spec.start_timeout_ms}}) {
    if (value < kTimeoutRange.min || value > kTimeoutRange.max) {
      return Problem{path, "must be from 1s to 24h, got " + jobs::FormatDuration(value)};
    }
  }
  const ProviderSpec& p = spec.provider;
  const CommandScripts& c = p.command;
  bool has_scripts = !c.create.empty() || !c.remove.empty() || !c.list.empty() || !c.env.empty();
  if (p.type == ProviderType::kCommand) {
    for (auto [path, script] :
         {std::pair{"provider.create", &c.create}, std::pair{"provider.delete", &c.remove},
          std::pair{"provider.list", &c.list}}) {
      if (script->empty()) return Problem{path, "is required for the command provider"};
    }
  } else if (has_scripts) {
    return Problem{"provider.type", "must be command to run scripts (create, delete, list, env)"};
  }
  if (p.type == ProviderType::kSsh) {
    if (p.ssh.hosts.empty()) return Problem{"provider.hosts", "is required for the ssh provider"};
    if (spec.max > static_cast<int>(p.ssh.hosts.size())) {
      return Problem{"max", "the ssh provider runs one machine per host: at most " +
                                std::to_string(p.ssh.hosts.size()) + ", got " +
                                std::to_string(spec.max)};
    }
  } else if (!p.ssh.hosts.empty() || !p.ssh.key.empty()) {
    return Problem{"provider.type", "must be ssh to name hosts and a key"};
  }
  if (p.type == ProviderType::kLocal && !p.server_url.empty()) {
    return Problem{"provider.server_url", "the local provider's machines use the server's own"};
  }
  const MachineShape& m = spec.machine;
  if (m.memory_bytes != 0 && m.memory_bytes < jobs::kMinMemoryBytes) {
    return Problem{"machine.memory", "must be at least 1Mi"};
  }
  for (const auto& [key, value] : m.labels) {
    if (key == "pool" || key == "machine" || key == "zone" || key == "placement_group") {
      return Problem{"machine.labels." + key,
                     "is set by the pool itself (zone and placement_group have fields of "
                     "their own)"};
    }
    if (key.empty() || key.size() > jobs::kMaxKeyBytes ||
        value.size() > jobs::kMaxLabelValueBytes) {
      return Problem{"machine.labels." + key, "keys are 1-128 bytes, values at most 63"};
    }
  }
  return std::nullopt;
}

Result<PoolSpec> Parse(std::string_view text, const std::string& source) {
  if (text.size() > jobs::kMaxSpecBytes) {
    return InvalidArgument(source + ": the spec is larger than " +
                           std::to_string(jobs::kMaxSpecBytes / 1024) + " KiB");
  }
  TF_ASSIGN_OR_RETURN(YAML::Node document, jobs::LoadOneDocument(text, source));
  Reader reader(source);
  if (jobs::IsNullValue(document)) return reader.Error(1, "", "the spec is empty");
  Field top{document, "", "", jobs::NodeLine(document, 1)};
  if (!top.node.IsMap()) {
    return reader.Error(top,
                        "the spec must be a mapping of fields (name, provider, machine, "
                        "...), got " +
                            jobs::Describe(top.node));
  }
  PoolSpec spec;
  TF_RETURN_IF_ERROR(jobs::ReadMapping(reader, top, kSpecRules, spec));
  if (auto problem = FindProblem(spec)) {
    return reader.Error(reader.LineOf(problem->path), problem->path, problem->message);
  }
  return spec;
}

}  // namespace

const char* ProviderTypeName(ProviderType type) {
  switch (type) {
    case ProviderType::kCommand:
      return "command";
    case ProviderType::kSsh:
      return "ssh";
    case ProviderType::kLocal:
      break;
  }
  return "local";
}

Result<PoolSpec> ParsePoolSpec(std::string_view yaml, std::string_view source_name) {
  std::string source = source_name.empty() ? "pool spec" : std::string(source_name);
  try {
    return Parse(yaml, source);
  } catch (const std::bad_alloc&) {
    return ResourceExhausted(source + ": out of memory reading the spec");
  } catch (const std::exception& e) {
    return Internal(source + ": reading the spec failed: " + e.what());
  }
}

nlohmann::json PoolSpecToJson(const PoolSpec& spec) {
  const MachineShape& m = spec.machine;
  const ProviderSpec& p = spec.provider;
  nlohmann::json provider = {{"type", ProviderTypeName(p.type)}};
  if (p.type != ProviderType::kLocal) {
    provider["timeout_ms"] = p.timeout_ms;
    provider["retries"] = p.retries;
    provider["server_url"] = p.server_url;
  }
  if (p.type == ProviderType::kCommand) {
    provider["create"] = p.command.create;
    provider["delete"] = p.command.remove;
    provider["list"] = p.command.list;
    provider["env"] = p.command.env;
  }
  if (p.type == ProviderType::kSsh) {
    provider["hosts"] = p.ssh.hosts;
    provider["key"] = p.ssh.key;
    provider["known_hosts"] = p.ssh.known_hosts;
    provider["remote_dir"] = p.ssh.remote_dir;
    provider["install"] = p.ssh.install;
  }
  return {{"name", spec.name},
          {"provider", provider},
          {"machine",
           {{"gpus", m.gpus},
            {"gpu_model", m.gpu_model},
            {"gpu_memory_bytes", m.gpu_memory_bytes},
            {"cpus", m.cpus},
            {"memory_bytes", m.memory_bytes},
            {"price_per_hour", m.price_per_hour},
            {"spot", m.spot},
            {"zone", m.zone},
            {"placement_group", m.placement_group},
            {"labels", m.labels}}},
          {"min", spec.min},
          {"max", spec.max},
          {"idle_timeout_ms", spec.idle_timeout_ms},
          {"start_timeout_ms", spec.start_timeout_ms}};
}

Result<PoolSpec> PoolSpecFromJson(const nlohmann::json& json) {
  try {
    PoolSpec spec;
    spec.name = json.at("name").get<std::string>();
    const auto& provider = json.at("provider");
    std::string type = provider.at("type").get<std::string>();
    ProviderSpec& p = spec.provider;
    if (type != "local") {
      p.timeout_ms = provider.at("timeout_ms").get<TimeMs>();
      p.retries = provider.at("retries").get<int>();
      p.server_url = provider.at("server_url").get<std::string>();
    }
    if (type == "command") {
      p.type = ProviderType::kCommand;
      p.command.create = provider.at("create").get<std::vector<std::string>>();
      p.command.remove = provider.at("delete").get<std::vector<std::string>>();
      p.command.list = provider.at("list").get<std::vector<std::string>>();
      p.command.env = provider.at("env").get<std::map<std::string, std::string>>();
    } else if (type == "ssh") {
      p.type = ProviderType::kSsh;
      p.ssh.hosts = provider.at("hosts").get<std::vector<std::string>>();
      p.ssh.key = provider.at("key").get<std::string>();
      p.ssh.known_hosts = provider.at("known_hosts").get<std::string>();
      p.ssh.remote_dir = provider.at("remote_dir").get<std::string>();
      p.ssh.install = provider.at("install").get<bool>();
    } else if (type != "local") {
      return Internal("a stored pool spec names an unknown provider");
    }
    const auto& m = json.at("machine");
    spec.machine.gpus = m.at("gpus").get<int>();
    spec.machine.gpu_model = m.at("gpu_model").get<std::string>();
    spec.machine.gpu_memory_bytes = m.at("gpu_memory_bytes").get<int64_t>();
    spec.machine.cpus = m.at("cpus").get<int>();
    spec.machine.memory_bytes = m.at("memory_bytes").get<int64_t>();
    spec.machine.price_per_hour = m.at("price_per_hour").get<double>();
    spec.machine.spot = m.at("spot").get<bool>();
    spec.machine.zone = m.at("zone").get<std::string>();
    spec.machine.placement_group = m.at("placement_group").get<std::string>();
    spec.machine.labels = m.at("labels").get<std::map<std::string, std::string>>();
    spec.min = json.at("min").get<int>();
    spec.max = json.at("max").get<int>();
    spec.idle_timeout_ms = json.at("idle_timeout_ms").get<TimeMs>();
    spec.start_timeout_ms = json.at("start_timeout_ms").get<TimeMs>();
    return spec;
  } catch (const std::exception& e) {
    return Internal(std::string("a stored pool spec is damaged: ") + e.what());
  }
}

}  // namespace tf::pools
