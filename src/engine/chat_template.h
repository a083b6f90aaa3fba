// Chat templates: the `chat_template` of a tokenizer_config.json rendered into a prompt, as
// transformers' apply_chat_template renders it with jinja2 (trim_blocks and lstrip_blocks on).
//
// The language is the subset of Jinja that the templates of Llama 3/3.1, Qwen2 (ChatML) and
// Mistral use: text, {{ expressions }}, {% for %} (with loop.index0/index/first/last/length and
// an `if` filter), {% if %}/{% elif %}/{% else %}, {% set %} (also namespace() attributes),
// {% macro %}, comments, `-` whitespace control; literals, attribute and item access, slices,
// arithmetic, `~`, comparisons, and/or/not, in, tests (`is defined`, `is none`, `is string`...),
// the common filters and the string/dict methods templates call (.strip(), .get(), ...).
// Values print as jinja2 prints them (True, None, 1.0).
//
// Variables a template sees: messages, add_generation_prompt, bos_token, eos_token, everything
// in options.extra_vars (tools, date_string, ...), and the functions raise_exception(message)
// and strftime_now(format).
//
// Errors (all kInvalidArgument): a template that does not parse names line and column; a
// template that calls raise_exception returns its message; an unknown filter, test, method or
// function names itself. Rendering never crashes on any template text, and loops and output are
// bounded so that a hostile template ends with an error instead of exhausting memory.
//
// Thread safety: a parsed ChatTemplate is immutable; Render may run concurrently.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tf::engine {

namespace jinja {
struct Template;  // the parsed form (chat_template_ast.h)
}

struct ChatTemplateOptions {
  bool add_generation_prompt = false;
  std::string bos_token;
  std::string eos_token;
  // More variables by name, e.g. {"tools": [...], "date_string": "26 Jul 2024"}. They override
  // the ones above when they share a name. (An nlohmann::json converts implicitly; ordered_json
  // keeps the keys in the order tojson should print them, as Python's dicts do.)
  nlohmann::ordered_json extra_vars = nlohmann::ordered_json::object();
  // What strftime_now() formats (UTC); the system clock's now when unset.
  std::optional<std::chrono::system_clock::time_point> now;
};

class ChatTemplate {
 public:
  // Parses `source`; a syntax error is InvalidArgument "chat template line L, column C: ...".
  static Result<ChatTemplate> Parse(std::string_view source);

  // Renders with `messages` (a JSON array of {"role", "content", ...} objects, given to the
  // template as is; an nlohmann::json converts implicitly, with its keys sorted).
  Result<std::string> Render(const nlohmann::ordered_json& messages,
                             const ChatTemplateOptions& options) const;

 private:
  explicit ChatTemplate(std::shared_ptr<const jinja::Template> parsed);
  std::shared_ptr<const jinja::Template> parsed_;
};

// Parse and Render in one call.
Result<std::string> RenderChatTemplate(std::string_view source,
                                       const nlohmann::ordered_json& messages,
                                       const ChatTemplateOptions& options);

// The chat template of a model directory: `chat_template` in DIR/tokenizer_config.json, either
// a string or a list of {"name", "template"} objects (the one named "default" is taken).
// NotFound when the file or the field is missing; InvalidArgument when it does not parse as
// JSON or has another shape. Errors name the file.
Result<std::string> LoadChatTemplate(const std::string& model_dir);

}  // namespace tf::engine
