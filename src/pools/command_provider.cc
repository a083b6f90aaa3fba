#include "pools/command_provider.h"

#include <system_error>

namespace tf::pools {

CommandProvider::CommandProvider(PoolSpec spec, ProviderContext context, ScriptRunner run)
    : spec_(std::move(spec)),
      context_(std::move(context)),
      run_(std::move(run)),
      env_(ServerEnvironment()) {
  for (const auto& [key, value] : spec_.provider.command.env) env_[key] = value;
}

Result<std::string> CommandProvider::Call(const std::vector<std::string>& script,
                                          const nlohmann::json& input, const std::string& what) {
  std::error_code ec;
  std::filesystem::create_directories(context_.dir, ec);
  if (ec) return Unavailable("creating " + context_.dir.string() + ": " + ec.message());
  ScriptCall call{script, env_, context_.dir, input.dump() + "\n", spec_.provider.timeout_ms};
  return RunWithRetries(run_, call, spec_.provider.retries, what, spec_.name);
}

Status CommandProvider::Create(const PoolSpec& spec, const std::string& id,
                               const std::string& join_token) {
  std::string server_url = WorkerServerUrl(spec, context_);
  nlohmann::json input = {{"action", "create"},
                          {"pool", spec.name},
                          {"machine", id},
                          {"shape", PoolSpecToJson(spec)["machine"]},
                          {"server_url", server_url},
                          {"join_token", join_token},
                          {"worker_args", WorkerArguments(spec, server_url, id, "")}};
  return Call(spec_.provider.command.create, input, "create " + id).status();
}

Status CommandProvider::Delete(const std::string& id) {
  nlohmann::json input = {{"action", "delete"}, {"pool", spec_.name}, {"machine", id}};
  return Call(spec_.provider.command.remove, input, "delete " + id).status();
}

Result<std::vector<Machine>> CommandProvider::List() {
  nlohmann::json input = {{"action", "list"}, {"pool", spec_.name}};
  TF_ASSIGN_OR_RETURN(std::string out, Call(spec_.provider.command.list, input, "list"));
  auto answer = nlohmann::json::parse(out, nullptr, false);
  auto bad = [&](const std::string& why) {
    return Unavailable("list: its output " + why +
                       R"( (expected {"machines": [{"id": "...", "running": true}]}))");
  };
  if (!answer.is_object() || !answer.contains("machines") || !answer["machines"].is_array()) {
    return bad("is not a JSON object with a \"machines\" list");
  }
  std::vector<Machine> machines;
  for (const nlohmann::json& m : answer["machines"]) {
    if (!m.is_object() || !m.contains("id") || !m["id"].is_string() ||
        m["id"].get<std::string>().empty()) {
      return bad("has a machine without a string \"id\"");
    }
    Machine machine;
    machine.id = m["id"].get<std::string>();
    if (m.contains("running") && m["running"].is_boolean()) {
      machine.running = m["running"].get<bool>();
    }
    if (m.contains("detail") && m["detail"].is_string()) {
      machine.detail = m["detail"].get<std::string>();
    }
    machines.push_back(std::move(machine));
  }
  return machines;
}

}  // namespace tf::pools
