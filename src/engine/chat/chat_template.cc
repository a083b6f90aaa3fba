#include "engine/chat/chat_template.h"

#include <ctime>
#include <fstream>
#include <sstream>

#include "engine/chat/builtins.h"
#include "engine/chat/parser.h"
#include "engine/chat/renderer.h"
#include "engine/tokenizers/gguf_tokenizer.h"

namespace tf::engine {

using jinja::Dict;
using jinja::Kwargs;
using jinja::Value;

namespace {

Value RaiseException() {
  return Value::MakeFunction(
      "raise_exception", [](std::vector<Value>& args, Kwargs&) -> Result<Value> {
        return jinja::RaisedError(args.empty() ? "raise_exception called" : jinja::ToStr(args[0]));
      });
}

Value StrftimeNow(std::chrono::system_clock::time_point now) {
  return Value::MakeFunction(
      "strftime_now", [now](std::vector<Value>& args, Kwargs&) -> Result<Value> {
        if (args.size() != 1 || !args[0].is_string()) {
          return InvalidArgument("strftime_now takes one format string");
        }
        std::time_t t = std::chrono::system_clock::to_time_t(now);
        std::tm tm{};
        gmtime_r(&t, &tm);
        char buf[512];
        size_t n = std::strftime(buf, sizeof(buf), args[0].as_string().c_str(), &tm);
        if (n == 0 && !args[0].as_string().empty()) {
          return InvalidArgument("strftime_now: the formatted time is empty or too long");
        }
        return Value::String(std::string(buf, n));
      });
}

// namespace(a=1) or namespace({'a': 1}): an object whose attributes `set ns.a = ...` changes.
// Each one made is kept in `made`, whose attributes Render clears at the end: a namespace can
// hold itself (`set ns.me = ns`), a cycle its reference counts would never free.
Value NamespaceFunction(std::shared_ptr<std::vector<Value>> made) {
  return Value::MakeFunction("namespace",
                             [made](std::vector<Value>& args, Kwargs& kwargs) -> Result<Value> {
                               Value ns = Value::MakeNamespace();
                               made->push_back(ns);
                               for (const Value& a : args) {
                                 if (a.kind() != Value::Kind::kDict)
                                   return InvalidArgument("namespace() takes a mapping");
                                 for (const auto& [k, v] : a.dict())
                                   ns.ns().attrs[k] = std::make_shared<Value>(v);
                               }
                               for (const auto& [k, v] : kwargs)
                                 ns.ns().attrs[k] = std::make_shared<Value>(v);
                               return ns;
                             });
}

Value RangeFunction() {
  return Value::MakeFunction("range", [](std::vector<Value>& args, Kwargs&) -> Result<Value> {
    if (args.empty() || args.size() > 3) return InvalidArgument("range() takes 1 to 3 integers");
    int64_t bounds[3] = {0, 0, 1};
    for (const Value& a : args) {
      if (a.kind() != Value::Kind::kInt) return InvalidArgument("range() takes integers");
    }
    if (args.size() == 1) {
      bounds[1] = args[0].as_int();
    } else {
      bounds[0] = args[0].as_int();
      bounds[1] = args[1].as_int();
      if (args.size() == 3) bounds[2] = args[2].as_int();
    }
    if (bounds[2] == 0) return InvalidArgument("range() step must not be zero");
    jinja::List items;
    for (int64_t i = bounds[0]; bounds[2] > 0 ? i < bounds[1] : i > bounds[1]; i += bounds[2]) {
      if (items.size() >= jinja::kMaxItems) return InvalidArgument("range() too long");
      items.push_back(Value::Int(i));
    }
    return Value::MakeList(std::move(items));
  });
}

Value DictFunction() {
  return Value::MakeFunction("dict", [](std::vector<Value>& args, Kwargs& kwargs) -> Result<Value> {
    Dict d;
    if (!args.empty()) {
      if (args.size() > 1 || args[0].kind() != Value::Kind::kDict) {
        return InvalidArgument("dict() takes a mapping and keyword arguments");
      }
      d = args[0].dict();
    }
    for (const auto& [k, v] : kwargs) {
      bool replaced = false;
      for (auto& [dk, dv] : d) {
        if (dk == k) {
          dv = v;
          replaced = true;
        }
      }
      if (!replaced) d.emplace_back(k, v);
    }
    return Value::MakeDict(std::move(d));
  });
}

}  // namespace

ChatTemplate::ChatTemplate(std::shared_ptr<const jinja::Template> parsed)
    : parsed_(std::move(parsed)) {}

Result<ChatTemplate> ChatTemplate::Parse(std::string_view source) {
  TF_ASSIGN_OR_RETURN(std::shared_ptr<const jinja::Template> parsed, jinja::ParseTemplate(source));
  return ChatTemplate(std::move(parsed));
}

Result<std::string> ChatTemplate::Render(const nlohmann::ordered_json& messages,
                                         const ChatTemplateOptions& options) const {
  auto namespaces = std::make_shared<std::vector<Value>>();
  // The variables transformers' apply_chat_template passes (tools and documents are None when
  // not given), then the functions it adds to jinja2's.
  Dict globals = {
      {"messages", Value::FromJson(messages)},
      {"add_generation_prompt", Value::Bool(options.add_generation_prompt)},
      {"bos_token", Value::String(options.bos_token)},
      {"eos_token", Value::String(options.eos_token)},
      {"tools", Value::None()},
      {"documents", Value::None()},
      {"raise_exception", RaiseException()},
      {"strftime_now", StrftimeNow(options.now.value_or(std::chrono::system_clock::now()))},
      {"namespace", NamespaceFunction(namespaces)},
      {"range", RangeFunction()},
      {"dict", DictFunction()},
  };
  if (!options.extra_vars.is_null() && !options.extra_vars.is_object()) {
    return InvalidArgument("chat template extra variables must be a JSON object");
  }
  if (options.extra_vars.is_object()) {
    for (const auto& [name, value] : options.extra_vars.items()) {
      Value v = Value::FromJson(value);
      bool replaced = false;
      for (auto& [k, existing] : globals) {
        if (k == name) {
          existing = v;
          replaced = true;
        }
      }
      if (!replaced) globals.emplace_back(name, v);
    }
  }
  Result<std::string> out = jinja::RenderTemplate(*parsed_, globals);
  for (Value& ns : *namespaces) ns.ns().attrs.clear();
  return out;
}

Result<std::string> RenderChatTemplate(std::string_view source,
                                       const nlohmann::ordered_json& messages,
                                       const ChatTemplateOptions& options) {
  TF_ASSIGN_OR_RETURN(ChatTemplate tmpl, ChatTemplate::Parse(source));
  return tmpl.Render(messages, options);
}

Result<std::string> LoadChatTemplate(const std::string& model_dir) {
  if (IsGgufPath(model_dir)) {
    TF_ASSIGN_OR_RETURN(auto file, GgufFile::Open(model_dir));
    return GgufChatTemplate(*file);
  }
  std::string path = model_dir + "/tokenizer_config.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot be opened");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json config = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) return InvalidArgument(path + ": not valid JSON");
  if (!config.is_object()) return InvalidArgument(path + ": not a JSON object");
  auto it = config.find("chat_template");
  if (it == config.end() || it->is_null()) return NotFound(path + ": has no chat_template");
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {
    for (const auto& entry : *it) {
      if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") ||
          !entry["name"].is_string() || !entry["template"].is_string()) {
        return InvalidArgument(path +
                               ": chat_template list entries must be {\"name\", \"template\"} "
                               "strings");
      }
      if (entry["name"] == "default") return entry["template"].get<std::string>();
    }
    return NotFound(path + ": chat_template has no template named \"default\"");
  }
  return InvalidArgument(path + ": chat_template must be a string or a list of named templates");
}

}  // namespace tf::engine
