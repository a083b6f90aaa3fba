// tokenizer.json (the Hugging Face tokenizers format) into a Tokenizer: the parts every BPE
// tokenizer has, and the byte-level ones (metaspace_json.cc reads the Metaspace ones). Every
// field this version cannot honour exactly is an error naming the file and the field.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/tokenizers/gguf_tokenizer.h"
#include "engine/tokenizers/tokenizer_parts.h"

namespace tf::engine {
namespace {

using Json = nlohmann::json;

using json_fields::Flag;
using json_fields::Str;
using json_fields::Type;

class Parser {
 public:
  explicit Parser(std::string_view file) : file_(file) {}

  Status Error(const std::string& field, const std::string& what) const {
    return json_fields::Error(file_, field, what);
  }

  // "normalizer": none, or NFC.
  Status Normalizer(const Json& j, ByteLevelOptions* options) const {
    options->nfc = Type(j) == "NFC";
    if (j.is_null() || options->nfc) return OkStatus();
    return Error("normalizer", "type '" + Type(j) + "' is not supported yet");
  }

  // Split(known regex, Isolated) then ByteLevel(use_regex false); or ByteLevel alone.
  Status PreTokenizer(const Json& j, ByteLevelOptions* parts) const {
    std::string type = Type(j);
    if (type == "ByteLevel") {
      parts->add_prefix_space = Flag(j, "add_prefix_space", true);
      if (!Flag(j, "use_regex", true)) {
        return Error("pre_tokenizer", "ByteLevel without its regex and no Split before it");
      }
      parts->pattern = SplitPattern::kGpt2;
      return OkStatus();
    }
    if (type != "Sequence" || !j.contains("pretokenizers") || !j["pretokenizers"].is_array() ||
        j["pretokenizers"].size() != 2) {
      return Error("pre_tokenizer", "type '" + type +
                                        "' is not supported (ByteLevel, or a Sequence of Split "
                                        "and ByteLevel, are)");
    }
    const Json& split = j["pretokenizers"][0];
    const Json& byte_level = j["pretokenizers"][1];
    if (Type(split) != "Split" || Type(byte_level) != "ByteLevel") {
      return Error("pre_tokenizer.pretokenizers", "only [Split, ByteLevel] is supported");
    }
    if (!split.contains("pattern") || !split["pattern"].is_object() ||
        !split["pattern"].contains("Regex") || !split["pattern"]["Regex"].is_string()) {
      return Error("pre_tokenizer.pretokenizers[0].pattern", "must be {\"Regex\": \"...\"}");
    }
    std::string regex = split["pattern"]["Regex"].get<std::string>();
    auto pattern = PatternFromRegex(regex);
    if (!pattern) {
      return Error("pre_tokenizer.pretokenizers[0].pattern.Regex",
                   "'" + regex +
                       "' is not one of the patterns this engine implements "
                       "(Llama 3, Qwen2, GPT-2)");
    }
    if (Str(split, "behavior") != "Isolated" || Flag(split, "invert", false)) {
      return Error("pre_tokenizer.pretokenizers[0]", "only behavior Isolated without invert");
    }
    if (Flag(byte_level, "use_regex", true)) {
      return Error("pre_tokenizer.pretokenizers[1].use_regex", "true after a Split");
    }
    parts->pattern = *pattern;
    parts->add_prefix_space = Flag(byte_level, "add_prefix_space", false);
    return OkStatus();
  }

  Status Model(const Json& j, TokenizerParts* parts) const {
    if (!j.is_object() || (j.contains("type") && Type(j) != "BPE")) {
      return Error("model.type", "'" + Type(j) + "' is not supported (BPE is)");
    }
    for (const char* unsupported : {"continuing_subword_prefix", "end_of_word_suffix", "dropout"}) {
      if (j.contains(unsupported) && !j[unsupported].is_null()) {
        return Error(std::string("model.") + unsupported, "is not supported");
      }
    }
    if (!j.contains("vocab") || !j["vocab"].is_object()) {
      return Error("model.vocab", "must be an object of token -> id");
    }
    std::unordered_map<std::string, int32_t> vocab;
    for (const auto& [token, id] : j["vocab"].items()) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
        return Error("model.vocab", "'" + token + "' has id " + id.dump());
      }
      vocab.emplace(token, static_cast<int32_t>(id.get<int64_t>()));
    }
    std::vector<std::pair<std::string, std::string>> merges;
    const Json& m = j.contains("merges") ? j["merges"] : Json::array();
    if (!m.is_array()) return Error("model.merges", "must be an array");
    for (size_t i = 0; i < m.size(); ++i) {
      const Json& e = m[i];
      if (e.is_string()) {  // the older "a b" form
        const std::string& s = e.get_ref<const std::string&>();
        size_t space = s.find(' ', 1);
        if (space == std::string::npos) {
          return Error("model.merges[" + std::to_string(i) + "]", "'" + s + "' has no space");
        }
        merges.emplace_back(s.substr(0, space), s.substr(space + 1));
      } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
        merges.emplace_back(e[0].get<std::string>(), e[1].get<std::string>());
      } else {
        return Error("model.merges[" + std::to_string(i) + "]", "must be \"a b\" or [a, b]");
      }
    }
    BpeModel::Options options;
    if (j.contains("unk_token") && j["unk_token"].is_string()) {
      options.unk_token = j["unk_token"].get<std::string>();
    }
    options.ignore_merges = Flag(j, "ignore_merges", false);
    options.byte_fallback = Flag(j, "byte_fallback", false);
    options.fuse_unk = Flag(j, "fuse_unk", false);
    auto model = BpeModel::Build(std::move(vocab), merges, options);
    if (!model.ok()) return Error("model", model.status().message());
    parts->model = std::move(model).value();
    return OkStatus();
  }

  Status AddedTokens(const Json& j, TokenizerParts* parts) const {
    if (j.is_null()) return OkStatus();
    if (!j.is_array()) return Error("added_tokens", "must be an array");
    for (size_t i = 0; i < j.size(); ++i) {
      const Json& t = j[i];
      if (!t.is_object() || !t.contains("id") || !t["id"].is_number_integer() ||
          t["id"].get<int64_t>() < 0 || !t.contains("content") || !t["content"].is_string() ||
          t["content"].get<std::string>().empty()) {
        return Error("added_tokens[" + std::to_string(i) + "]", "needs an id and a content");
      }
      AddedToken a;
      a.id = static_cast<int32_t>(t["id"].get<int64_t>());
      a.content = t["content"].get<std::string>();
      a.special = Flag(t, "special", false);
      a.lstrip = Flag(t, "lstrip", false);
      a.rstrip = Flag(t, "rstrip", false);
      a.single_word = Flag(t, "single_word", false);
      parts->added_tokens.push_back(std::move(a));
    }
    return OkStatus();
  }

  // TemplateProcessing's "single" template, ByteLevel (nothing for ids), or a Sequence of them.
  Status PostProcessor(const Json& j, const std::string& field, TokenizerParts* parts) const {
    std::string type = Type(j);
    if (j.is_null() || type == "ByteLevel") return OkStatus();
    if (type == "Sequence" && j.contains("processors") && j["processors"].is_array()) {
      for (size_t i = 0; i < j["processors"].size(); ++i) {
        TF_RETURN_IF_ERROR(PostProcessor(j["processors"][i],
                                         field + ".processors[" + std::to_string(i) + "]", parts));
      }
      return OkStatus();
    }
    if (type != "TemplateProcessing" || !j.contains("single") || !j["single"].is_array()) {
      return Error(field, "type '" + type + "' is not supported");
    }
    bool seen_sequence = false;
    for (const Json& piece : j["single"]) {
      if (!piece.is_object()) return Error(field + ".single", "bad entry " + piece.dump());
      if (piece.contains("Sequence")) {
        seen_sequence = true;
        continue;
      }
      std::string name = piece.contains("SpecialToken") ? Str(piece["SpecialToken"], "id") : "";
      const Json& specials = j.contains("special_tokens") ? j["special_tokens"] : Json::object();
      if (name.empty() || !specials.is_object() || !specials.contains(name) ||
          !specials[name].is_object() || !specials[name].contains("ids") ||
          !specials[name]["ids"].is_array()) {
        return Error(field + ".single", "names a special token without ids: " + piece.dump());
      }
      for (const Json& id : specials[name]["ids"]) {
        if (!id.is_number_integer()) return Error(field + ".special_tokens", name + ": bad id");
        (seen_sequence ? parts->suffix_ids : parts->prefix_ids).push_back(id.get<int32_t>());
      }
    }
    return OkStatus();
  }

  Status ByteLevelDecoder(const Json& j) const {
    if (Type(j) == "ByteLevel") return OkStatus();
    return Error("decoder", "type '" + Type(j) +
                                "' is not supported with byte-level BPE "
                                "(ByteLevel is)");
  }

 private:
  std::string_view file_;
};

}  // namespace

namespace json_fields {

std::string Type(const Json& j) {
  return j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>()
                                                                      : "";
}

std::string Str(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

bool Flag(const Json& j, const char* key, bool fallback) {
  return j.is_object() && j.contains(key) && j[key].is_boolean() ? j[key].get<bool>() : fallback;
}

Status Error(std::string_view file, const std::string& field, const std::string& what) {
  return InvalidArgument(std::string(file) + ": " + field + ": " + what);
}

}  // namespace json_fields

Result<std::unique_ptr<Tokenizer>> ParseTokenizerJson(std::string_view text,
                                                      std::string_view file) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument(std::string(file) + ": not valid JSON");
  if (!j.is_object() || !j.contains("model")) {
    return InvalidArgument(std::string(file) + ": not a tokenizer.json (no \"model\")");
  }
  Parser p(file);
  TokenizerParts parts;
  TF_RETURN_IF_ERROR(p.Model(j["model"], &parts));
  TF_RETURN_IF_ERROR(p.AddedTokens(j.value("added_tokens", Json()), &parts));
  TF_RETURN_IF_ERROR(p.PostProcessor(j.value("post_processor", Json()), "post_processor", &parts));
  // Byte-level unless something says Metaspace: its pre-tokenizer, decoder, or the model's byte
  // fallback.
  Json pre = j.value("pre_tokenizer", Json());
  bool byte_level = Type(pre) == "ByteLevel" ||
                    (Type(pre) == "Sequence" && Type(j.value("decoder", Json())) == "ByteLevel");
  if (!byte_level &&
      (Type(pre) == "Metaspace" || pre.is_null() || Flag(j["model"], "byte_fallback", false))) {
    MetaspaceOptions options;
    TF_RETURN_IF_ERROR(ParseMetaspaceOptions(j, file, &options));
    return NewMetaspaceBpeTokenizer(std::move(parts), options);
  }
  ByteLevelOptions options;
  TF_RETURN_IF_ERROR(p.Normalizer(j.value("normalizer", Json()), &options));
  TF_RETURN_IF_ERROR(p.PreTokenizer(pre, &options));
  TF_RETURN_IF_ERROR(p.ByteLevelDecoder(j.value("decoder", Json())));
  return NewByteLevelBpeTokenizer(std::move(parts), options);
}

Result<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& dir) {
  if (IsGgufPath(dir)) return LoadGgufTokenizer(dir);
  std::string json = dir + "/tokenizer.json";
  if (std::filesystem::exists(json)) return LoadTokenizerJson(json);
  std::string model = dir + "/tokenizer.model";
  if (std::filesystem::exists(model)) return LoadSentencePieceTokenizer(model);
  return NotFound(dir + ": has neither tokenizer.json nor tokenizer.model");
}

Result<std::unique_ptr<Tokenizer>> LoadTokenizerJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseTokenizerJson(ss.str(), path);
}

}  // namespace tf::engine
