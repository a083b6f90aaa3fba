// Chat templates rendered byte for byte as transformers renders them: the shared fixture's
// ChatML cases, and the Llama 3/3.1/3.2, Qwen2/2.5 and Mistral templates (plus two that exercise
// the language and jinja2's whitespace rules) over conversations whose expected text jinja2 wrote
// (tests/data/engine/chat/generate_expected.py); then errors and hostile templates.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>

#include "engine/chat/chat_template.h"
#include "engine_test_util.h"

namespace tf::engine {
namespace {

using nlohmann::ordered_json;
using tf::testing::EngineData;
using tf::testing::ReadFileBytes;

std::vector<ordered_json> ReadJsonLines(const std::string& path) {
  std::vector<ordered_json> out;
  std::istringstream in(ReadFileBytes(path));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(ordered_json::parse(line));
  }
  return out;
}

// The instant generate_expected.py froze strftime_now at: 2025-03-14 09:26:53 UTC.
std::chrono::system_clock::time_point GeneratorNow() {
  std::tm tm{};
  tm.tm_year = 2025 - 1900;
  tm.tm_mon = 2;
  tm.tm_mday = 14;
  tm.tm_hour = 9;
  tm.tm_min = 26;
  tm.tm_sec = 53;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

TEST(ChatTemplateTest, SharedFixtureRendersByteForByte) {
  std::vector<ordered_json> cases = ReadJsonLines(EngineData("chat/chatml_fixture.jsonl"));
  ASSERT_EQ(cases.size(), 4u);
  for (const ordered_json& c : cases) {
    ChatTemplateOptions options;
    options.add_generation_prompt = c["add_generation_prompt"].get<bool>();
    options.bos_token = c["bos_token"].get<std::string>();
    Result<std::string> out =
        RenderChatTemplate(c["template"].get<std::string>(), c["messages"], options);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(*out, c["rendered"].get<std::string>()) << c["messages"].dump();
  }
}

// Every (template, conversation, add_generation_prompt) that jinja2 rendered or rejected.
TEST(ChatTemplateTest, FamilyTemplatesMatchJinja2) {
  std::map<std::string, ordered_json> conversations;
  for (const ordered_json& c :
       ordered_json::parse(ReadFileBytes(EngineData("chat/conversations.json")))) {
    conversations[c["name"].get<std::string>()] = c;
  }
  std::map<std::string, ChatTemplate> templates;
  std::vector<ordered_json> cases = ReadJsonLines(EngineData("chat/expected.jsonl"));
  ASSERT_GE(cases.size(), 200u);
  int rendered = 0, rejected = 0;
  for (const ordered_json& c : cases) {
    std::string name = c["template"].get<std::string>();
    if (!templates.count(name)) {
      Result<ChatTemplate> parsed = ChatTemplate::Parse(ReadFileBytes(EngineData("chat/" + name)));
      ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status().ToString();
      templates.emplace(name, *parsed);
    }
    const ordered_json& conv = conversations.at(c["conversation"].get<std::string>());
    ChatTemplateOptions options;
    options.add_generation_prompt = c["add_generation_prompt"].get<bool>();
    options.bos_token = c["bos_token"].get<std::string>();
    options.eos_token = c["eos_token"].get<std::string>();
    options.now = GeneratorNow();
    if (conv.contains("vars")) options.extra_vars = conv["vars"];
    Result<std::string> out = templates.at(name).Render(conv["messages"], options);
    std::string where = name + " over " + c["conversation"].get<std::string>() +
                        (options.add_generation_prompt ? " with" : " without") +
                        " the generation prompt";
    if (c.contains("error")) {
      ASSERT_FALSE(out.ok()) << where << " rendered:\n" << *out;
      EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(out.status().message(), c["error"].get<std::string>()) << where;
      ++rejected;
    } else {
      ASSERT_TRUE(out.ok()) << where << ": " << out.status().ToString();
      EXPECT_EQ(*out, c["rendered"].get<std::string>()) << where;
      ++rendered;
    }
  }
  EXPECT_GE(rejected, 8);
  EXPECT_GE(rendered, 180);
}

// One-line templates over a fixed conversation (generate_expected.py's SNIPPET_MESSAGES): the
// text jinja2 rendered, byte for byte; where jinja2 failed (a type error, an undefined value, a
// syntax error, raise_exception), an error here too, with raise_exception's message.
TEST(ChatTemplateTest, SnippetsMatchJinja2) {
  ordered_json messages = ordered_json::parse(R"([
      {"role": "system", "content": " Be brief. "},
      {"role": "user", "content": "Hi"},
      {"role": "assistant", "content": "Hello!", "tool_calls": [
          {"function": {"name": "f", "arguments": {"b": 1, "a": [true, null, 2.5]}}}]}])");
  ChatTemplateOptions options;
  options.add_generation_prompt = true;
  options.bos_token = "<s>";
  options.eos_token = "</s>";
  options.now = GeneratorNow();
  std::vector<ordered_json> cases = ReadJsonLines(EngineData("chat/snippets_expected.jsonl"));
  ASSERT_GE(cases.size(), 70u);
  int errors = 0;
  for (const ordered_json& c : cases) {
    std::string tmpl = c["template"].get<std::string>();
    Result<std::string> out = RenderChatTemplate(tmpl, messages, options);
    if (c.contains("rendered")) {
      ASSERT_TRUE(out.ok()) << tmpl << "\n" << out.status().ToString();
      EXPECT_EQ(*out, c["rendered"].get<std::string>()) << tmpl;
      continue;
    }
    ++errors;
    ASSERT_FALSE(out.ok()) << tmpl << " rendered " << *out << " where jinja2 raised "
                           << c["error"].get<std::string>();
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << tmpl;
    if (c.contains("message")) {
      EXPECT_EQ(out.status().message(), c["message"].get<std::string>()) << tmpl;
    }
  }
  EXPECT_GE(errors, 10);
}

// 1,200 random templates from generate_expected.py (seeded): expressions mixing values,
// operators, filters, tests and methods; text with whitespace around tags with - and +; and
// nested for/if/set/break/continue statements whose shared names show jinja2's scoping.
// Each renders to jinja2's text byte for byte, or fails where jinja2 failed.
TEST(ChatTemplateTest, RandomTemplatesMatchJinja2) {
  ordered_json messages = ordered_json::parse(R"([
      {"role": "system", "content": " Be brief. "},
      {"role": "user", "content": "Hi"},
      {"role": "assistant", "content": "Hello!", "tool_calls": [
          {"function": {"name": "f", "arguments": {"b": 1, "a": [true, null, 2.5]}}}]}])");
  ChatTemplateOptions options;
  options.add_generation_prompt = true;
  options.bos_token = "<s>";
  options.eos_token = "</s>";
  std::vector<ordered_json> cases = ReadJsonLines(EngineData("chat/random_expected.jsonl"));
  ASSERT_EQ(cases.size(), 1200u);
  int errors = 0;
  for (const ordered_json& c : cases) {
    std::string tmpl = c["template"].get<std::string>();
    Result<std::string> out = RenderChatTemplate(tmpl, messages, options);
    if (c.contains("error")) {
      ++errors;
      EXPECT_FALSE(out.ok()) << tmpl << " rendered where jinja2 raised "
                             << c["error"].get<std::string>();
    } else {
      ASSERT_TRUE(out.ok()) << tmpl << "\n" << out.status().ToString();
      EXPECT_EQ(*out, c["rendered"].get<std::string>()) << tmpl;
    }
  }
  EXPECT_GT(errors, 100);
}

std::string Render(std::string_view tmpl, const ordered_json& messages = ordered_json::array(),
                   ChatTemplateOptions options = {}) {
  Result<std::string> out = RenderChatTemplate(tmpl, messages, options);
  return out.ok() ? *out : "ERROR: " + out.status().message();
}

TEST(ChatTemplateTest, ValuesPrintAsPythonPrintsThem) {
  EXPECT_EQ(
      Render("{{ true }} {{ none }} {{ 1 }} {{ 1.0 }} {{ 2.50 }} {{ 1e16 }} {{ 123.456e-8 }}"),
      "True None 1 1.0 2.5 1e+16 1.23456e-06");
  EXPECT_EQ(Render("{{ [1, 'a', none, [true]] }} {{ {'k': 'v'} }} {{ ('x',) }}"),
            "[1, 'a', None, [True]] {'k': 'v'} ('x',)");
  EXPECT_EQ(Render("{{ 10 / 4 }} {{ 10 // 4 }} {{ -10 // 4 }} {{ 10 % -3 }} {{ 2 ** 0.5 }}"),
            "2.5 2 -3 -2 1.4142135623730951");
  EXPECT_EQ(Render("{{ undefined_name }}|{{ messages }}"), "|[]");
}

TEST(ChatTemplateTest, ForLoopsScopeTheirVariablesAndNamespacesCarryOut) {
  EXPECT_EQ(Render("{% set x = 1 %}{% for i in [1, 2] %}{% set x = i %}{% endfor %}{{ x }}"), "1");
  EXPECT_EQ(Render("{% set ns = namespace(x=1) %}{% for i in [1, 2] %}{% set ns.x = i %}"
                   "{% endfor %}{{ ns.x }}"),
            "2");
  EXPECT_EQ(Render("{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }},{% endfor %}"), "3,7,");
  EXPECT_EQ(Render("{% for x in [] %}never{% else %}empty{% endfor %}"), "empty");
}

TEST(ChatTemplateTest, ExtraVariablesKeepTheirKeyOrderInToJson) {
  ChatTemplateOptions options;
  options.extra_vars = ordered_json::parse(R"({"tools": [{"z": 1, "a": {"y": 2, "b": 3}}]})");
  EXPECT_EQ(Render("{{ tools[0] | tojson }}", ordered_json::array(), options),
            R"({"z": 1, "a": {"y": 2, "b": 3}})");
  options.extra_vars = ordered_json::parse(R"({"bos_token": "<override>"})");
  options.bos_token = "<s>";
  EXPECT_EQ(Render("{{ bos_token }}", ordered_json::array(), options), "<override>");
}

TEST(ChatTemplateTest, SyntaxErrorsNameLineAndColumn) {
  Result<ChatTemplate> bad = ChatTemplate::Parse("line one\n{% if x %}\n  {{ 1 + }}\n{% endif %}");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "chat template line 3, column 10: expected an expression, found '}}'");

  bad = ChatTemplate::Parse("{% for m in messages %}{{ m }}");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 1, column 31"), std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("endfor"), std::string::npos) << bad.status().message();

  bad = ChatTemplate::Parse("ok\n  {% frobnicate %}");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "chat template line 2, column 6: unknown tag 'frobnicate'");

  bad = ChatTemplate::Parse("{{ 'never closed }}");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "chat template line 1, column 4: string is not closed");

  bad = ChatTemplate::Parse("a\n{# comment");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "chat template line 2, column 1: comment is not closed with '#}'");
}

TEST(ChatTemplateTest, RaiseExceptionReturnsTheTemplatesMessage) {
  Result<std::string> out = RenderChatTemplate(
      "before{% if messages | length == 0 %}{{ raise_exception('No messages, ' ~ 0 ~ ' given') }}"
      "{% endif %}",
      ordered_json::array(), {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "No messages, 0 given");
}

TEST(ChatTemplateTest, UnknownFiltersTestsAndFunctionsNameThemselves) {
  EXPECT_EQ(Render("{{ 'x' | shout }}"),
            "ERROR: chat template line 1, column 8: unknown filter 'shout'");
  EXPECT_EQ(Render("\n{{ 1 is prime }}"),
            "ERROR: chat template line 2, column 6: unknown test 'prime'");
  EXPECT_EQ(Render("{{ launch() }}"),
            "ERROR: chat template line 1, column 10: 'launch' is undefined");
  EXPECT_EQ(Render("{{ messages[0].content.upper() }}"),
            "ERROR: chat template line 1, column 15: 'list object' has no element 0");
  EXPECT_EQ(Render("{{ 'a' + 1 }}"),
            "ERROR: chat template line 1, column 8: unsupported operand type(s) for +: 'str "
            "object' and 'int object'");
}

TEST(ChatTemplateTest, HostileTemplatesEndWithAnErrorNotACrash) {
  std::string deep(5000, '(');
  EXPECT_NE(Render("{{ " + deep + "1" + std::string(5000, ')') + " }}").find("nested more than"),
            std::string::npos);
  std::string nested_ifs;
  for (int i = 0; i < 1000; ++i) nested_ifs += "{% if true %}";
  EXPECT_NE(Render(nested_ifs).find("nested more than"), std::string::npos);
  EXPECT_NE(Render("{{ 'x' * 1000000000 }}").find("too long"), std::string::npos);
  EXPECT_NE(Render("{% for i in range(100000000) %}{% endfor %}").find("range() too long"),
            std::string::npos);
  EXPECT_NE(Render("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").find("nested more than"),
            std::string::npos);
  EXPECT_NE(Render("{% set ns = namespace(s='x') %}{% for i in range(100) %}"
                   "{% set ns.s = ns.s ~ ns.s %}{% endfor %}")
                .find("too long"),
            std::string::npos);
  // Deep statements inside a recursive macro: bounded by the nesting limit, not the stack.
  std::string deep_macro = "{% macro f(n) %}";
  for (int i = 0; i < 150; ++i) deep_macro += "{% if true %}";
  deep_macro += "{{ f(n + 1) }}";
  for (int i = 0; i < 150; ++i) deep_macro += "{% endif %}";
  deep_macro += "{% endmacro %}{{ f(0) }}";
  EXPECT_NE(Render(deep_macro).find("nested more than 250 deep"), std::string::npos)
      << Render(deep_macro).substr(0, 200);
  // A namespace holding itself renders, and its cycle is broken when rendering ends.
  EXPECT_EQ(Render("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns.me.me is defined }}"),
            "True");
}

// Random bytes, and random mixes of template syntax, as templates: each parses or fails with an
// error, and renders or fails with an error.
TEST(ChatTemplateTest, RandomTemplatesNeverCrash) {
  std::mt19937 rng(20261130);
  const std::vector<std::string> pieces = {
      "{{",      "}}",       "{%",     "%}",       "{#",   "#}",        "-",      "+",
      " ",       "\n",       "if",     "for",      "in",   "endif",     "endfor", "set",
      "=",       "messages", "m",      "loop",     ".",    "[",         "]",      "(",
      ")",       "{",        "}",      ",",        ":",    "|",         "'a'",    "\"",
      "1",       "-1",       "0",      "2.5",      "not",  "and",       "or",     "is",
      "defined", "trim",     "tojson", "length",   "~",    "*",         "/",      "//",
      "%",       "**",       "::-1",   "else",     "elif", "namespace", "ns",     "raise_exception",
      "macro",   "endmacro", "break",  "continue", "\\",   "none",      "true",   "items()",
      "get",     "strip()",  "split",  "range",    "x",    "y"};
  ordered_json messages =
      ordered_json::parse(R"([{"role": "user", "content": "hi"}, {"role": "assistant"}])");
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string tmpl;
    int n = static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) {
      if (i % 3 == 0) {
        tmpl += static_cast<char>(rng() % 256);
      } else {
        tmpl += pieces[rng() % pieces.size()];
      }
    }
    Result<ChatTemplate> t = ChatTemplate::Parse(tmpl);
    if (!t.ok()) {
      EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << tmpl;
      continue;
    }
    ++parsed;
    Result<std::string> out = t->Render(messages, {});
    if (!out.ok()) {
      EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << tmpl;
    }
  }
  EXPECT_GT(parsed, 100);
}

// The real templates with a few bytes changed, cut or spliced in: most still parse, so the
// renderer meets odd but well-formed programs.
TEST(ChatTemplateTest, MutatedFamilyTemplatesNeverCrash) {
  std::vector<std::string> seeds;
  for (const char* name : {"llama3.jinja", "llama31.jinja", "llama32.jinja", "qwen2.jinja",
                           "qwen25.jinja", "mistral.jinja", "features.jinja", "whitespace.jinja"}) {
    seeds.push_back(ReadFileBytes(EngineData(std::string("chat/") + name)));
  }
  ordered_json messages = ordered_json::parse(
      R"([{"role": "system", "content": "s"}, {"role": "user", "content": "Hi"},
          {"role": "assistant", "content": "x", "tool_calls": [
              {"function": {"name": "f", "arguments": {"a": 1}}}]},
          {"role": "user"}])");
  ChatTemplateOptions options;
  options.extra_vars = ordered_json::parse(R"({"tools": [{"name": "t"}], "builtin_tools": ["a"]})");
  std::mt19937 rng(7);
  int rendered = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string t = seeds[rng() % seeds.size()];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits && !t.empty(); ++k) {
      size_t pos = rng() % t.size();
      switch (rng() % 4) {
        case 0:
          t[pos] = static_cast<char>(rng() % 256);
          break;
        case 1:
          t.erase(pos, 1 + rng() % 8);
          break;
        case 2: {
          const std::string& other = seeds[rng() % seeds.size()];
          t.insert(pos, other.substr(rng() % other.size(), 1 + rng() % 20));
          break;
        }
        default:
          t.insert(pos, 1, "{}%#-+|()[]'\".:,"[rng() % 16]);
      }
    }
    Result<ChatTemplate> parsed = ChatTemplate::Parse(t);
    if (!parsed.ok()) continue;
    options.add_generation_prompt = rng() % 2;
    Result<std::string> out = parsed->Render(messages, options);
    if (out.ok()) {
      ++rendered;
    } else {
      EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
    }
  }
  EXPECT_GT(rendered, 100);
}

class LoadChatTemplateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("chat_template_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void WriteConfig(const std::string& text) {
    tf::testing::WriteFileBytes((dir_ / "tokenizer_config.json").string(), text);
  }
  std::filesystem::path dir_;
};

TEST_F(LoadChatTemplateTest, ReadsTheStringOrTheDefaultOfNamedTemplates) {
  WriteConfig(R"({"bos_token": "<s>", "chat_template": "{{ bos_token }}hi"})");
  Result<std::string> t = LoadChatTemplate(dir_.string());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(*t, "{{ bos_token }}hi");

  WriteConfig(R"({"chat_template": [{"name": "tool_use", "template": "tools"},
                                     {"name": "default", "template": "plain"}]})");
  t = LoadChatTemplate(dir_.string());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(*t, "plain");
}

TEST_F(LoadChatTemplateTest, ErrorsNameTheFile) {
  std::string file = (dir_ / "tokenizer_config.json").string();
  Result<std::string> t = LoadChatTemplate(dir_.string());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find(file), std::string::npos);

  WriteConfig(R"({"bos_token": "<s>"})");
  t = LoadChatTemplate(dir_.string());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(t.status().message(), file + ": has no chat_template");

  WriteConfig(R"({"chat_template": [{"name": "tool_use", "template": "x"}]})");
  t = LoadChatTemplate(dir_.string());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("default"), std::string::npos);

  WriteConfig(R"({"chat_template": 42})");
  EXPECT_EQ(LoadChatTemplate(dir_.string()).status().code(), StatusCode::kInvalidArgument);

  WriteConfig("{not json");
  t = LoadChatTemplate(dir_.string());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message(), file + ": not valid JSON");
}

}  // namespace
}  // namespace tf::engine
