// Chat prompts for `engine serve`: the model's chat template (tokenizer_config.json, or a GGUF
// file's metadata), parsed once at load and rendered per request with its BOS and EOS tokens.
#include <fstream>
#include <sstream>

#include "base/log.h"
#include "engine/formats/gguf.h"
#include "serve/server.h"

namespace tf::serve {
namespace {

constexpr const char* kNoTemplate = "this model has no chat template the engine can render";

// tokenizer_config.json's "bos_token"/"eos_token": a string, or {"content": "..."}.
std::string SpecialToken(const Json& config, const char* name) {
  auto it = config.find(name);
  if (it == config.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    return (*it)["content"].get<std::string>();
  }
  return "";
}

}  // namespace

void LoadChat(LoadedModel* model) {
  auto source = engine::LoadChatTemplate(model->tokenizer_dir);
  bool gguf = engine::IsGgufPath(model->tokenizer_dir);
  if (!source.ok()) {
    model->chat_problem =
        source.status().code() == StatusCode::kNotFound
            ? std::string(kNoTemplate) +
                  (gguf ? " (the GGUF file has none)" : " (tokenizer_config.json has none)")
            : std::string(kNoTemplate) + ": " + source.status().message();
    if (source.status().code() != StatusCode::kNotFound) spdlog::warn("{}", model->chat_problem);
    return;
  }
  auto parsed = engine::ChatTemplate::Parse(*source);
  if (!parsed.ok()) {
    model->chat_problem = std::string(kNoTemplate) + ": " + parsed.status().message();
    spdlog::warn("{}", model->chat_problem);
    return;
  }
  model->chat_template = std::make_shared<const engine::ChatTemplate>(std::move(parsed).value());
  if (gguf) {  // the texts of the file's BOS and EOS ids
    const engine::ModelConfig& c = model->model->config();
    if (c.bos_token_id) model->bos_token = model->tokenizer->IdToToken(*c.bos_token_id);
    if (!c.eos_token_ids.empty()) {
      model->eos_token = model->tokenizer->IdToToken(c.eos_token_ids[0]);
    }
    return;
  }
  std::ifstream in(model->tokenizer_dir + "/tokenizer_config.json");
  std::stringstream text;
  text << in.rdbuf();
  Json config = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (config.is_object()) {
    model->bos_token = SpecialToken(config, "bos_token");
    model->eos_token = SpecialToken(config, "eos_token");
  }
}

Result<std::string> RenderChatPrompt(const LoadedModel& model, const CompletionRequest& request) {
  if (model.chat_template == nullptr) {
    return InvalidArgument(model.chat_problem.empty() ? kNoTemplate : model.chat_problem);
  }
  engine::ChatTemplateOptions options;
  options.add_generation_prompt = request.add_generation_prompt;
  options.bos_token = model.bos_token;
  options.eos_token = model.eos_token;
  TF_ASSIGN_OR_RETURN(std::string prompt, model.chat_template->Render(request.messages, options));
  if (!request.continue_final_message) return prompt;
  // The template closes every message; what follows the last one's text (its end-of-turn
  // marker) is cut, so that the model goes on with that text.
  const Json& last = request.messages.back();
  std::string content = last.value("content", Json("")).is_string()
                            ? last.value("content", std::string())
                            : std::string();
  size_t at = content.empty() ? std::string::npos : prompt.rfind(content);
  if (at == std::string::npos) {
    return InvalidArgument(
        "continue_final_message: the rendered prompt does not hold the last message's content "
        "as it was sent, so there is nothing to continue");
  }
  prompt.resize(at + content.size());
  return prompt;
}

}  // namespace tf::serve
