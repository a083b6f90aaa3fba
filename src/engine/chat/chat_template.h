// Chat templates: the `chat_template` of a tokenizer_config.json rendered into a prompt, as
// transformers' apply_chat_template renders it with jinja2 (trim_blocks and lstrip_blocks on).
//
// The language is the subset of Jinja that the templates of Llama 3/3.1/3.2, Qwen2/2.5 (ChatML)
// and Mistral use: text, {{ expressions }}, {% for %} (loop.index0/index/revindex/first/last/
// length/previtem/nextitem/cycle, an `if` filter, else, break/continue), {% if %}/{% elif %}/
// {% else %}, {% set %} (several names, namespace() attributes, the block form), {% macro %},
// comments, `-`/`+` whitespace control; literals, attribute and item access, slices,
// arithmetic, `~`, comparisons, and/or/not, in, tests (`is defined`, `is none`, `is string`...),
// the common filters and the str/dict methods templates call (.strip(), .get(), ...). Values
// print as jinja2 prints them (True, None, 1.0, ['a', 1]); scoping is jinja2's (a set inside a
// loop does not outlive its iteration).
//
// Variables a template sees: messages, add_generation_prompt, bos_token, eos_token, tools and
// documents (None), everything in options.extra_vars (tools, date_string, ...; these win), and
// the functions raise_exception(message), strftime_now(format), namespace, range and dict.
//
// Errors (all kInvalidArgument): a template that does not parse names line and column; a
// template that calls raise_exception returns exactly its message; other failures name line,
// column and what failed (an unknown filter, test or name names itself). Rendering never
// crashes on any template text, and loops, nesting, calls and output are bounded so that a
// hostile template ends with an error instead of exhausting memory or stack.
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
struct Template;  // the parsed form (chat/ast.h)
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
// JSON or has another shape. Errors name the file. For a GGUF file, its
// tokenizer.chat_template.
Result<std::string> LoadChatTemplate(const std::string& model_dir);

}  // namespace tf::engine
