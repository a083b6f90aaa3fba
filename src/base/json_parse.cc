#include "base/json_parse.h"

#include <string>
#include <utility>
#include <vector>

namespace tf {
namespace {

using Json = nlohmann::json;

// Builds the document as nlohmann's own DOM parser would, checking depth and keys as it goes.
// Returning false from an event stops the parse; `problem_` then says why.
class StrictBuilder final : public nlohmann::json_sax<Json> {
 public:
  StrictBuilder(Json& root, JsonLimits limits) : root_(root), limits_(limits) {}

  const std::string& problem() const { return problem_; }

  bool null() override { return Put(nullptr); }
  bool boolean(bool value) override { return Put(value); }
  bool number_integer(number_integer_t value) override { return Put(value); }
  bool number_unsigned(number_unsigned_t value) override { return Put(value); }
  bool number_float(number_float_t value, const string_t&) override { return Put(value); }
  bool string(string_t& value) override { return Put(std::move(value)); }
  bool binary(binary_t& value) override { return Put(Json::binary(std::move(value))); }

  bool start_object(size_t) override { return Open(Json::object()); }
  bool start_array(size_t) override { return Open(Json::array()); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }

  bool key(string_t& name) override {
    Container& top = open_.back();
    if (top.value->contains(name)) {
      problem_ = "has the key '" + name + "' twice in the object at " + Path();
      return false;
    }
    top.key = name;
    top.slot = &(*top.value)[name];
    return true;
  }

  bool parse_error(size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    problem_ = "is not valid JSON at byte offset " +
               std::to_string(position > 0 ? position - 1 : 0) + ": " + Reason(e.what());
    return false;
  }

 private:
  struct Container {
    Json* value;           // the array or object being filled
    std::string key;       // an object's current key, for messages
    Json* slot = nullptr;  // where an object's next value goes
  };

  // nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1,
  // column 2: " prefix, which repeats what the offset says.
  static std::string Reason(std::string_view what) {
    if (const size_t column = what.find("column "); column != std::string_view::npos) {
      if (const size_t colon = what.find(": ", column); colon != std::string_view::npos) {
        return std::string(what.substr(colon + 2));
      }
    }
    const size_t bracket = what.find("] ");  // "[json.exception.out_of_range.406] number ..."
    return std::string(bracket == std::string_view::npos ? what : what.substr(bracket + 2));
  }

  // "the top level", or where the innermost open value sits: "messages[2].content".
  std::string Path() const {
    std::string path;
    for (size_t i = 0; i + 1 < open_.size(); ++i) {
      const Container& o = open_[i];
      if (o.value->is_array()) {
        path += "[" + std::to_string(o.value->size() - 1) + "]";
      } else {
        if (!path.empty()) path += '.';
        path += o.key;
      }
    }
    return path.empty() ? "the top level" : "'" + path + "'";
  }

  // Places `value` where the document's next value goes; returns where it now lives.
  Json* Place(Json&& value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Container& top = open_.back();
    if (top.value->is_array()) {
      top.value->push_back(std::move(value));
      return &top.value->back();
    }
    *top.slot = std::move(value);
    return top.slot;
  }

  bool Put(Json&& value) {
    Place(std::move(value));
    return true;
  }

  bool Open(Json&& container) {
    if (open_.size() >= limits_.max_depth) {
      std::string at = Path();
      if (at.size() > 60) at = at.substr(0, 56) + "...'";
      problem_ = "nests deeper than " + std::to_string(limits_.max_depth) +
                 " arrays and objects (at " + at + ")";
      return false;
    }
    Json* placed = Place(std::move(container));
    open_.push_back({placed, {}, nullptr});
    return true;
  }

  bool Close() {
    open_.pop_back();
    return true;
  }

  Json& root_;
  const JsonLimits limits_;
  std::vector<Container> open_;
  std::string problem_;
};

}  // namespace

Result<Json> ParseJsonStrict(std::string_view text, std::string_view what, JsonLimits limits) {
  Json root;
  StrictBuilder builder(root, limits);
  bool parsed = false;
  try {
    parsed = Json::sax_parse(text, &builder);
  } catch (const Json::exception& e) {
    // out_of_range: a number too large for a double.
    return InvalidArgument(std::string(what) + " is not valid JSON: " + e.what());
  }
  if (!parsed) return InvalidArgument(std::string(what) + " " + builder.problem());
  return root;
}

}  // namespace tf
