// The values a chat template computes with, and how they behave like Python's under jinja2:
// truthiness, equality, ordering, str() and repr() (True, None, 1.0, ['a', 1]), JSON in and out.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace tf::engine::jinja {

class Value;
using List = std::vector<Value>;
// Keys in insertion order, as Python's dicts keep them.
using Dict = std::vector<std::pair<std::string, Value>>;
// A function value: positional arguments and keyword arguments.
using Kwargs = std::vector<std::pair<std::string, Value>>;
using Function = std::function<Result<Value>(std::vector<Value>& args, Kwargs& kwargs)>;

// A namespace() object: the one mutable value, shared by reference.
struct Namespace {
  std::map<std::string, std::shared_ptr<Value>> attrs;
};

class Value {
 public:
  enum class Kind {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,
    kDict,
    kNamespace,
    kFunction
  };

  Value() = default;  // undefined
  static Value Undefined(std::string name = {});
  static Value None();
  static Value Bool(bool b);
  static Value Int(int64_t i);
  static Value Float(double d);
  static Value String(std::string s);
  static Value MakeList(List items, bool tuple = false);
  static Value MakeDict(Dict items);
  static Value MakeNamespace();
  static Value MakeFunction(std::string name, Function fn);
  static Value FromJson(const nlohmann::ordered_json& j);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat; }
  bool is_tuple() const { return tuple_; }

  bool as_bool() const { return bool_; }
  int64_t as_int() const { return int_; }
  double as_number() const { return kind_ == Kind::kInt ? static_cast<double>(int_) : float_; }
  const std::string& as_string() const { return str_; }
  // The name an undefined value was looked up by, or the function's name.
  const std::string& name() const { return str_; }
  const List& list() const { return *list_; }
  const Dict& dict() const { return *dict_; }
  Namespace& ns() const { return *ns_; }
  const Function& function() const { return *fn_; }

  // The value under `key` in a dict, or nullptr.
  const Value* Find(std::string_view key) const;

  // Python truthiness (undefined and empty are false).
  bool Truthy() const;
  // The jinja2 type name used in error messages: "dict object", "str object", ...
  std::string TypeName() const;

 private:
  Kind kind_ = Kind::kUndefined;
  bool bool_ = false;
  bool tuple_ = false;
  int64_t int_ = 0;
  double float_ = 0;
  std::string str_;
  std::shared_ptr<const List> list_;
  std::shared_ptr<const Dict> dict_;
  std::shared_ptr<Namespace> ns_;
  std::shared_ptr<const Function> fn_;
};

// str(v) as jinja2 prints it: "" for undefined, "None", "True", "1.0", "['a', 1]".
std::string ToStr(const Value& v);
// repr(v): strings quoted as Python quotes them.
std::string ToRepr(const Value& v);
// Python's repr of a float: "1.0", "0.1", "1e-05", "1e+16", "inf", "nan".
std::string FloatRepr(double d);

// Python's ==, with 1 == 1.0 == True.
bool Equal(const Value& a, const Value& b);
// Python's < for numbers, strings and lists; InvalidArgument for other pairs.
Result<bool> Less(const Value& a, const Value& b);

// json.dumps(v, ensure_ascii=False) as transformers' tojson does it; indent < 0 means none
// (", " and ": " separators), else newlines and that many spaces per level.
Result<std::string> ToJson(const Value& v, int indent);

}  // namespace tf::engine::jinja
