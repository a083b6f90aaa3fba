#include "engine/chat/builtins.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "engine/chat/strings.h"

namespace tf::engine::jinja {
namespace {

// The argument at `index`, or the keyword argument `name`, or nullptr.
const Value* Arg(std::vector<Value>& args, Kwargs& kwargs, size_t index, const char* name) {
  if (index < args.size()) return &args[index];
  for (auto& [k, v] : kwargs) {
    if (k == name) return &v;
  }
  return nullptr;
}

Status UndefinedError(const Value& v) {
  return InvalidArgument(v.name().empty() ? "a value is undefined" : v.name());
}

Result<std::string> StringArg(const Value* v, const char* what) {
  if (v == nullptr || !v->is_string()) {
    return InvalidArgument(std::string(what) + " must be a string");
  }
  return v->as_string();
}

std::optional<std::string> OptionalString(const Value* v) {
  if (v == nullptr || v->is_none() || v->is_undefined()) return std::nullopt;
  return ToStr(*v);
}

// A method of str bound to `s`.
std::optional<Value> StringMethod(const std::string& s, const std::string& name) {
  static const std::set<std::string> kNames = {
      "strip", "lstrip",     "rstrip",  "startswith", "endswith", "split", "upper",   "lower",
      "title", "capitalize", "replace", "find",       "count",    "join",  "isdigit", "isspace"};
  if (!kNames.count(name)) return std::nullopt;
  return Value::MakeFunction(
      name, [s, name](std::vector<Value>& args, Kwargs& kwargs) -> Result<Value> {
        if (name == "strip" || name == "lstrip" || name == "rstrip") {
          return Value::String(PyStrip(s, OptionalString(Arg(args, kwargs, 0, "chars")),
                                       name != "rstrip", name != "lstrip"));
        }
        if (name == "startswith" || name == "endswith") {
          const Value* arg = Arg(args, kwargs, 0, "prefix");
          if (arg == nullptr) return InvalidArgument(name + "() takes one argument");
          std::vector<std::string> options;
          if (arg->kind() == Value::Kind::kList) {
            for (const Value& v : arg->list()) {
              TF_ASSIGN_OR_RETURN(std::string o, StringArg(&v, (name + "() argument").c_str()));
              options.push_back(o);
            }
          } else {
            TF_ASSIGN_OR_RETURN(std::string o, StringArg(arg, (name + "() argument").c_str()));
            options.push_back(o);
          }
          for (const std::string& o : options) {
            bool hit = name == "startswith" ? s.compare(0, o.size(), o) == 0
                                            : s.size() >= o.size() &&
                                                  s.compare(s.size() - o.size(), o.size(), o) == 0;
            if (hit) return Value::Bool(true);
          }
          return Value::Bool(false);
        }
        if (name == "split") {
          std::optional<std::string> sep = OptionalString(Arg(args, kwargs, 0, "sep"));
          if (sep && sep->empty()) return InvalidArgument("split(): empty separator");
          const Value* max = Arg(args, kwargs, 1, "maxsplit");
          int64_t maxsplit =
              max != nullptr && max->kind() == Value::Kind::kInt ? max->as_int() : -1;
          List parts;
          for (std::string& p : PySplit(s, sep, maxsplit)) parts.push_back(Value::String(p));
          return Value::MakeList(std::move(parts));
        }
        if (name == "upper") return Value::String(PyUpper(s));
        if (name == "lower") return Value::String(PyLower(s));
        if (name == "title") return Value::String(PyTitle(s));
        if (name == "capitalize") return Value::String(PyCapitalize(s));
        if (name == "isdigit") {
          return Value::Bool(!s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
            return c >= '0' && c <= '9';
          }));
        }
        if (name == "isspace") {
          std::vector<char32_t> cps = CodePoints(s);
          return Value::Bool(!cps.empty() && std::all_of(cps.begin(), cps.end(), IsPySpace));
        }
        if (name == "replace") {
          TF_ASSIGN_OR_RETURN(std::string old,
                              StringArg(Arg(args, kwargs, 0, "old"), "replace() old"));
          TF_ASSIGN_OR_RETURN(std::string with,
                              StringArg(Arg(args, kwargs, 1, "new"), "replace() new"));
          const Value* count = Arg(args, kwargs, 2, "count");
          int64_t limit =
              count != nullptr && count->kind() == Value::Kind::kInt ? count->as_int() : -1;
          std::string out;
          size_t pos = 0;
          int64_t done = 0;
          if (old.empty()) {
            std::vector<char32_t> cps = CodePoints(s);
            for (size_t i = 0; i <= cps.size(); ++i) {
              if (limit < 0 || done < limit) {
                out += with;
                ++done;
              }
              if (i < cps.size()) out += FromCodePoints(cps, i, i + 1);
              if (out.size() > kMaxStringBytes)
                return InvalidArgument("replace(): result too long");
            }
            return Value::String(out);
          }
          while (limit < 0 || done < limit) {
            size_t hit = s.find(old, pos);
            if (hit == std::string::npos) break;
            out.append(s, pos, hit - pos);
            out += with;
            pos = hit + old.size();
            ++done;
            if (out.size() > kMaxStringBytes) return InvalidArgument("replace(): result too long");
          }
          out.append(s, pos);
          return Value::String(out);
        }
        if (name == "find" || name == "count") {
          TF_ASSIGN_OR_RETURN(std::string sub,
                              StringArg(Arg(args, kwargs, 0, "sub"), (name + "()").c_str()));
          if (name == "find") {
            size_t hit = s.find(sub);
            if (hit == std::string::npos) return Value::Int(-1);
            return Value::Int(static_cast<int64_t>(CodePoints(s.substr(0, hit)).size()));
          }
          if (sub.empty()) return Value::Int(static_cast<int64_t>(CodePoints(s).size()) + 1);
          int64_t n = 0;
          for (size_t pos = s.find(sub); pos != std::string::npos;
               pos = s.find(sub, pos + sub.size())) {
            ++n;
          }
          return Value::Int(n);
        }
        // join
        const Value* items = Arg(args, kwargs, 0, "iterable");
        if (items == nullptr) return InvalidArgument("join() takes one argument");
        TF_ASSIGN_OR_RETURN(List list, Iterate(*items));
        std::string out;
        for (size_t i = 0; i < list.size(); ++i) {
          if (!list[i].is_string()) return InvalidArgument("join(): items must be strings");
          if (i) out += s;
          out += list[i].as_string();
        }
        return Value::String(out);
      });
}

std::optional<Value> DictMethod(const Value& d, const std::string& name) {
  if (name == "items" || name == "keys" || name == "values") {
    return Value::MakeFunction(name, [d, name](std::vector<Value>&, Kwargs&) -> Result<Value> {
      List out;
      for (const auto& [k, v] : d.dict()) {
        if (name == "items") {
          out.push_back(Value::MakeList({Value::String(k), v}, /*tuple=*/true));
        } else {
          out.push_back(name == "keys" ? Value::String(k) : v);
        }
      }
      return Value::MakeList(std::move(out));
    });
  }
  if (name == "get") {
    return Value::MakeFunction(name,
                               [d](std::vector<Value>& args, Kwargs& kwargs) -> Result<Value> {
                                 const Value* key = Arg(args, kwargs, 0, "key");
                                 if (key == nullptr) return InvalidArgument("get() takes a key");
                                 const Value* def = Arg(args, kwargs, 1, "default");
                                 if (key->is_string()) {
                                   if (const Value* v = d.Find(key->as_string())) return *v;
                                 }
                                 return def != nullptr ? *def : Value::None();
                               });
  }
  return std::nullopt;
}

// jinja2's title filter (not str.title): each run after spaces, '-', '(', '{', '[' or '<'
// starts upper case, the rest of it lower case.
std::string JinjaTitle(const std::string& s) {
  std::vector<char32_t> cps = CodePoints(s);
  auto separator = [](char32_t c) {
    return IsPySpace(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
  };
  bool start = true;
  for (char32_t& c : cps) {
    if (separator(c)) {
      start = true;
      continue;
    }
    std::string one = FromCodePoints({c}, 0, 1);
    std::string mapped = start ? PyUpper(one) : PyLower(one);
    std::vector<char32_t> m = CodePoints(mapped);
    if (m.size() == 1) c = m[0];
    start = false;
  }
  return FromCodePoints(cps, 0, cps.size());
}

int64_t PyLen(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kString:
      return static_cast<int64_t>(CodePoints(v.as_string()).size());
    case Value::Kind::kList:
      return static_cast<int64_t>(v.list().size());
    case Value::Kind::kDict:
      return static_cast<int64_t>(v.dict().size());
    default:
      return -1;
  }
}

// Python's slice.indices(n) followed by range().
std::vector<int64_t> SliceIndices(int64_t n, const Value* start, const Value* stop,
                                  const Value* step_v, Status* error) {
  auto as_int = [&](const Value* v, bool* present) -> int64_t {
    *present = false;
    if (v == nullptr || v->is_none()) return 0;
    if (v->kind() == Value::Kind::kBool) {
      *present = true;
      return v->as_bool();
    }
    if (v->kind() != Value::Kind::kInt) {
      *error = InvalidArgument("slice indices must be integers or None");
      return 0;
    }
    *present = true;
    return v->as_int();
  };
  bool has_step, has_start, has_stop;
  int64_t step = as_int(step_v, &has_step);
  if (!has_step) step = 1;
  if (step == 0) *error = InvalidArgument("slice step cannot be zero");
  int64_t lo = as_int(start, &has_start);
  int64_t hi = as_int(stop, &has_stop);
  if (!error->ok()) return {};
  auto clamp = [&](int64_t i, bool present, int64_t def) {
    if (!present) return def;
    if (i < 0) i += n;
    if (step > 0) return std::clamp<int64_t>(i, 0, n);
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  lo = clamp(lo, has_start, step > 0 ? 0 : n - 1);
  hi = clamp(hi, has_stop, step > 0 ? n : -1);
  std::vector<int64_t> out;
  if (step > 0) {
    for (int64_t i = lo; i < hi; i += step) out.push_back(i);
  } else {
    for (int64_t i = lo; i > hi; i += step) out.push_back(i);
  }
  return out;
}

Result<int> IndentArg(const Value* v) {
  if (v == nullptr || v->is_none()) return -1;
  if (v->kind() != Value::Kind::kInt || v->as_int() < 0 || v->as_int() > 64) {
    return InvalidArgument("tojson indent must be an integer from 0 to 64");
  }
  return static_cast<int>(v->as_int());
}

Result<Value> ToInt(const Value& v, const Value* def) {
  Value fallback = def != nullptr ? *def : Value::Int(0);
  switch (v.kind()) {
    case Value::Kind::kInt:
      return v;
    case Value::Kind::kBool:
      return Value::Int(v.as_bool());
    case Value::Kind::kFloat:
      if (!std::isfinite(v.as_number()) || std::fabs(v.as_number()) > 9.2e18) return fallback;
      return Value::Int(static_cast<int64_t>(v.as_number()));
    case Value::Kind::kString: {
      std::string s = PyStrip(v.as_string(), std::nullopt, true, true);
      char* end = nullptr;
      errno = 0;
      long long i = std::strtoll(s.c_str(), &end, 10);
      if (!s.empty() && end == s.c_str() + s.size() && errno == 0) return Value::Int(i);
      double d = std::strtod(s.c_str(), &end);
      if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(d) && std::fabs(d) < 9.2e18) {
        return Value::Int(static_cast<int64_t>(d));
      }
      return fallback;
    }
    default:
      return fallback;
  }
}

// select/reject/selectattr/rejectattr: keep the items for which the test (or truthiness) holds.
Result<Value> Select(const std::string& filter, const Value& input, std::vector<Value>& args) {
  bool by_attr = filter == "selectattr" || filter == "rejectattr";
  bool keep_when = filter == "select" || filter == "selectattr";
  TF_ASSIGN_OR_RETURN(List items, Iterate(input));
  size_t next = 0;
  std::string attr;
  if (by_attr) {
    if (args.empty() || !args[0].is_string()) {
      return InvalidArgument(filter + " needs an attribute name");
    }
    attr = args[0].as_string();
    next = 1;
  }
  std::string test;
  if (next < args.size()) {
    if (!args[next].is_string()) return InvalidArgument(filter + " needs a test name");
    test = args[next].as_string();
    ++next;
  }
  std::vector<Value> test_args(args.begin() + static_cast<std::ptrdiff_t>(next), args.end());
  List out;
  for (const Value& item : items) {
    Value subject = item;
    if (by_attr) {
      TF_ASSIGN_OR_RETURN(subject, GetAttr(item, attr));
    }
    bool ok;
    if (test.empty()) {
      ok = subject.Truthy();
    } else {
      std::vector<Value> a = test_args;
      TF_ASSIGN_OR_RETURN(ok, CallTest(test, subject, a));
    }
    if (ok == keep_when) out.push_back(item);
  }
  return Value::MakeList(std::move(out));
}

Result<Value> Map(const Value& input, std::vector<Value>& args, Kwargs& kwargs) {
  TF_ASSIGN_OR_RETURN(List items, Iterate(input));
  List out;
  const Value* attr = Arg(args, kwargs, 99, "attribute");
  if (attr != nullptr) {
    const Value* def = Arg(args, kwargs, 99, "default");
    for (const Value& item : items) {
      TF_ASSIGN_OR_RETURN(Value v, GetAttr(item, ToStr(*attr)));
      if (v.is_undefined() && def != nullptr) v = *def;
      out.push_back(v);
    }
    return Value::MakeList(std::move(out));
  }
  if (args.empty() || !args[0].is_string()) return InvalidArgument("map needs a filter name");
  std::string filter = args[0].as_string();
  for (const Value& item : items) {
    std::vector<Value> rest(args.begin() + 1, args.end());
    Kwargs none;
    TF_ASSIGN_OR_RETURN(Value v, CallFilter(filter, item, rest, none));
    out.push_back(v);
  }
  return Value::MakeList(std::move(out));
}

Result<Value> Sort(const Value& input, std::vector<Value>& args, Kwargs& kwargs) {
  TF_ASSIGN_OR_RETURN(List items, Iterate(input));
  const Value* reverse = Arg(args, kwargs, 0, "reverse");
  const Value* attr = Arg(args, kwargs, 2, "attribute");
  std::vector<std::pair<Value, Value>> keyed;
  for (const Value& item : items) {
    Value key = item;
    if (attr != nullptr) {
      TF_ASSIGN_OR_RETURN(key, GetAttr(item, ToStr(*attr)));
    }
    if (key.is_string()) key = Value::String(PyLower(key.as_string()));  // case-insensitive
    keyed.emplace_back(key, item);
  }
  Status error;
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    Result<bool> less = Less(a.first, b.first);
    if (!less.ok()) {
      error = less.status();
      return false;
    }
    return *less;
  });
  TF_RETURN_IF_ERROR(error);
  List out;
  for (auto& [k, v] : keyed) out.push_back(v);
  if (reverse != nullptr && reverse->Truthy()) std::reverse(out.begin(), out.end());
  return Value::MakeList(std::move(out));
}

}  // namespace

Result<Value> GetAttr(const Value& obj, const std::string& name) {
  switch (obj.kind()) {
    case Value::Kind::kUndefined:
      return UndefinedError(obj);
    case Value::Kind::kString:
      if (auto m = StringMethod(obj.as_string(), name)) return *m;
      break;
    case Value::Kind::kDict:
      if (auto m = DictMethod(obj, name)) return *m;
      if (const Value* v = obj.Find(name)) return *v;
      break;
    case Value::Kind::kNamespace: {
      auto it = obj.ns().attrs.find(name);
      if (it != obj.ns().attrs.end()) return *it->second;
      break;
    }
    default:
      break;
  }
  return Value::Undefined("'" + obj.TypeName() + "' has no attribute '" + name + "'");
}

Result<Value> GetItem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) return UndefinedError(obj);
  if (obj.kind() == Value::Kind::kList || obj.is_string()) {
    if (key.kind() == Value::Kind::kInt || key.kind() == Value::Kind::kBool) {
      int64_t i = key.kind() == Value::Kind::kBool ? key.as_bool() : key.as_int();
      if (obj.is_string()) {
        std::vector<char32_t> cps = CodePoints(obj.as_string());
        int64_t n = static_cast<int64_t>(cps.size());
        if (i < 0) i += n;
        if (i >= 0 && i < n) return Value::String(FromCodePoints(cps, i, i + 1));
      } else {
        int64_t n = static_cast<int64_t>(obj.list().size());
        if (i < 0) i += n;
        if (i >= 0 && i < n) return obj.list()[static_cast<size_t>(i)];
      }
      return Value::Undefined("'" + obj.TypeName() + "' has no element " + std::to_string(i));
    }
  }
  if (key.is_string()) {
    if (obj.kind() == Value::Kind::kDict) {
      if (const Value* v = obj.Find(key.as_string())) return *v;
    }
    return GetAttr(obj, key.as_string());
  }
  return Value::Undefined("'" + obj.TypeName() + "' has no element " + ToRepr(key));
}

Result<Value> Slice(const Value& obj, const Value* start, const Value* stop, const Value* step) {
  if (obj.is_undefined()) return UndefinedError(obj);
  Status error;
  if (obj.is_string()) {
    std::vector<char32_t> cps = CodePoints(obj.as_string());
    std::vector<int64_t> idx =
        SliceIndices(static_cast<int64_t>(cps.size()), start, stop, step, &error);
    TF_RETURN_IF_ERROR(error);
    std::vector<char32_t> picked;
    for (int64_t i : idx) picked.push_back(cps[static_cast<size_t>(i)]);
    return Value::String(FromCodePoints(picked, 0, picked.size()));
  }
  if (obj.kind() == Value::Kind::kList) {
    std::vector<int64_t> idx =
        SliceIndices(static_cast<int64_t>(obj.list().size()), start, stop, step, &error);
    TF_RETURN_IF_ERROR(error);
    List picked;
    for (int64_t i : idx) picked.push_back(obj.list()[static_cast<size_t>(i)]);
    return Value::MakeList(std::move(picked), obj.is_tuple());
  }
  if (obj.kind() == Value::Kind::kDict) return InvalidArgument("unhashable type: 'slice'");
  return Value::Undefined("'" + obj.TypeName() + "' cannot be sliced");  // as jinja2's getitem
}

Result<List> Iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return List{};
    case Value::Kind::kList:
      return v.list();
    case Value::Kind::kDict: {
      List keys;
      for (const auto& [k, e] : v.dict()) keys.push_back(Value::String(k));
      return keys;
    }
    case Value::Kind::kString: {
      std::vector<char32_t> cps = CodePoints(v.as_string());
      List chars;
      for (size_t i = 0; i < cps.size(); ++i) {
        chars.push_back(Value::String(FromCodePoints(cps, i, i + 1)));
      }
      return chars;
    }
    default:
      return InvalidArgument("'" + v.TypeName() + "' is not iterable");
  }
}

Result<bool> Contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string()) {
      return InvalidArgument("'in <string>' requires a string as left operand, not " +
                             item.TypeName());
    }
    return container.as_string().find(item.as_string()) != std::string::npos;
  }
  if (container.kind() == Value::Kind::kDict) {
    if ((item.kind() == Value::Kind::kList && !item.is_tuple()) ||
        item.kind() == Value::Kind::kDict) {
      return InvalidArgument("unhashable type: '" + item.TypeName() + "'");
    }
    return item.is_string() && container.Find(item.as_string()) != nullptr;
  }
  if (container.kind() == Value::Kind::kNamespace || container.kind() == Value::Kind::kNone ||
      container.is_number() || container.kind() == Value::Kind::kBool ||
      container.kind() == Value::Kind::kFunction) {
    return InvalidArgument("argument of type '" + container.TypeName() + "' is not iterable");
  }
  TF_ASSIGN_OR_RETURN(List items, Iterate(container));
  for (const Value& v : items) {
    if (Equal(v, item)) return true;
  }
  return false;
}

Result<Value> CallFilter(const std::string& name, const Value& input, std::vector<Value>& args,
                         Kwargs& kwargs) {
  if (name == "default" || name == "d") {
    const Value* def = Arg(args, kwargs, 0, "default_value");
    const Value* boolean = Arg(args, kwargs, 1, "boolean");
    bool replace =
        input.is_undefined() || (boolean != nullptr && boolean->Truthy() && !input.Truthy());
    if (!replace) return input;
    return def != nullptr ? *def : Value::String("");
  }
  if (name == "safe") return input;
  if (name == "tojson") {
    TF_ASSIGN_OR_RETURN(int indent, IndentArg(Arg(args, kwargs, 0, "indent")));
    if (input.is_undefined()) return UndefinedError(input);
    TF_ASSIGN_OR_RETURN(std::string json, ToJson(input, indent));
    return Value::String(std::move(json));
  }
  if (name == "string") return Value::String(ToStr(input));
  if (name == "length" || name == "count") {
    if (input.is_undefined()) return Value::Int(0);
    int64_t n = PyLen(input);
    if (n < 0) return InvalidArgument("object of type '" + input.TypeName() + "' has no len()");
    return Value::Int(n);
  }
  if (name == "trim") {
    return Value::String(
        PyStrip(ToStr(input), OptionalString(Arg(args, kwargs, 0, "chars")), true, true));
  }
  if (name == "upper") return Value::String(PyUpper(ToStr(input)));
  if (name == "lower") return Value::String(PyLower(ToStr(input)));
  if (name == "title") return Value::String(JinjaTitle(ToStr(input)));
  if (name == "capitalize") return Value::String(PyCapitalize(ToStr(input)));
  if (name == "replace") {
    std::vector<Value> method_args = args;
    TF_ASSIGN_OR_RETURN(Value m, GetAttr(Value::String(ToStr(input)), "replace"));
    return m.function()(method_args, kwargs);
  }
  if ((name == "int" || name == "float" || name == "abs") && input.is_undefined()) {
    return UndefinedError(input);
  }
  if (name == "int") return ToInt(input, Arg(args, kwargs, 0, "default"));
  if (name == "float") {
    if (input.is_number()) return Value::Float(input.as_number());
    if (input.kind() == Value::Kind::kBool) return Value::Float(input.as_bool());
    if (input.is_string()) {
      std::string s = PyStrip(input.as_string(), std::nullopt, true, true);
      char* end = nullptr;
      double d = std::strtod(s.c_str(), &end);
      if (!s.empty() && end == s.c_str() + s.size()) return Value::Float(d);
    }
    const Value* def = Arg(args, kwargs, 0, "default");
    return def != nullptr ? *def : Value::Float(0.0);
  }
  if (name == "abs") {
    if (input.kind() == Value::Kind::kBool) return Value::Int(input.as_bool());
    if (input.kind() == Value::Kind::kInt && input.as_int() != INT64_MIN) {
      return Value::Int(std::llabs(input.as_int()));
    }
    if (input.is_number()) return Value::Float(std::fabs(input.as_number()));
    return InvalidArgument("bad operand type for abs(): '" + input.TypeName() + "'");
  }
  if (name == "items") {
    if (input.is_undefined()) return Value::MakeList({});
    if (input.kind() != Value::Kind::kDict) {
      return InvalidArgument("items filter needs a mapping, not a " + input.TypeName());
    }
    TF_ASSIGN_OR_RETURN(Value m, GetAttr(input, "items"));
    return m.function()(args, kwargs);
  }
  if (name == "join") {
    TF_ASSIGN_OR_RETURN(List items, Iterate(input));
    const Value* sep = Arg(args, kwargs, 0, "d");
    const Value* attr = Arg(args, kwargs, 1, "attribute");
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      if (i && sep != nullptr) out += ToStr(*sep);
      Value item = items[i];
      if (attr != nullptr) {
        TF_ASSIGN_OR_RETURN(item, GetAttr(item, ToStr(*attr)));
      }
      out += ToStr(item);
      if (out.size() > kMaxStringBytes) return InvalidArgument("join: result too long");
    }
    return Value::String(std::move(out));
  }
  if (name == "first" || name == "last") {
    TF_ASSIGN_OR_RETURN(List items, Iterate(input));
    if (items.empty()) return Value::Undefined("No " + name + " item, sequence was empty.");
    return name == "first" ? items.front() : items.back();
  }
  if (name == "list") {
    TF_ASSIGN_OR_RETURN(List items, Iterate(input));
    return Value::MakeList(std::move(items));
  }
  if (name == "reverse") {
    if (input.is_string()) {
      std::vector<char32_t> cps = CodePoints(input.as_string());
      std::reverse(cps.begin(), cps.end());
      return Value::String(FromCodePoints(cps, 0, cps.size()));
    }
    TF_ASSIGN_OR_RETURN(List items, Iterate(input));
    std::reverse(items.begin(), items.end());
    return Value::MakeList(std::move(items));
  }
  if (name == "unique") {
    TF_ASSIGN_OR_RETURN(List items, Iterate(input));
    List out;
    for (const Value& v : items) {
      bool seen = std::any_of(out.begin(), out.end(), [&](const Value& o) { return Equal(o, v); });
      if (!seen) out.push_back(v);
    }
    return Value::MakeList(std::move(out));
  }
  if (name == "sort") return Sort(input, args, kwargs);
  if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") {
    return Select(name, input, args);
  }
  if (name == "map") return Map(input, args, kwargs);
  if (name == "indent") {
    const Value* width_v = Arg(args, kwargs, 0, "width");
    std::string pad =
        width_v == nullptr ? "    "
        : width_v->is_string()
            ? width_v->as_string()
            : std::string(
                  static_cast<size_t>(std::clamp<int64_t>(
                      width_v->kind() == Value::Kind::kInt ? width_v->as_int() : 4, 0, 256)),
                  ' ');
    const Value* first = Arg(args, kwargs, 1, "first");
    const Value* blank = Arg(args, kwargs, 2, "blank");
    std::string s = ToStr(input);
    std::string out;
    size_t pos = 0;
    bool first_line = true;
    while (true) {
      size_t nl = s.find('\n', pos);
      std::string line = s.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      bool indent = (!first_line || (first != nullptr && first->Truthy())) &&
                    (!line.empty() || (blank != nullptr && blank->Truthy()));
      if (indent) out += pad;
      out += line;
      if (nl == std::string::npos) break;
      out += '\n';
      pos = nl + 1;
      first_line = false;
    }
    return Value::String(std::move(out));
  }
  return InvalidArgument("unknown filter '" + name + "'");
}

Result<bool> CallTest(const std::string& name, const Value& input, std::vector<Value>& args) {
  using K = Value::Kind;
  auto arg = [&]() -> Result<Value> {
    if (args.empty()) return InvalidArgument("test '" + name + "' takes an argument");
    return args[0];
  };
  if (name == "defined") return !input.is_undefined();
  if (name == "undefined") return input.is_undefined();
  if (name == "none") return input.is_none();
  if (name == "string") return input.is_string();
  if (name == "number") return input.is_number() || input.kind() == K::kBool;  // bool is an int
  if (name == "integer") return input.kind() == K::kInt;
  if (name == "float") return input.kind() == K::kFloat;
  if (name == "boolean") return input.kind() == K::kBool;
  if (name == "true") return input.kind() == K::kBool && input.as_bool();
  if (name == "false") return input.kind() == K::kBool && !input.as_bool();
  if (name == "mapping") return input.kind() == K::kDict;
  if (name == "sequence") {
    return input.kind() == K::kList || input.is_string() || input.kind() == K::kDict;
  }
  if (name == "iterable") {
    return input.kind() == K::kList || input.is_string() || input.kind() == K::kDict;
  }
  if (name == "callable") return input.kind() == K::kFunction;
  if (name == "odd" || name == "even") {  // value % 2 == 1 (or == 0), Python's modulo
    if (input.kind() == K::kBool) return input.as_bool() == (name == "odd");
    if (input.kind() == K::kInt) return (input.as_int() % 2 != 0) == (name == "odd");
    if (input.kind() == K::kFloat) {
      double m = std::fmod(input.as_number(), 2.0);
      if (m < 0) m += 2.0;
      return m == (name == "odd" ? 1.0 : 0.0);
    }
    return InvalidArgument("test '" + name + "' needs a number, not a " + input.TypeName());
  }
  if (name == "divisibleby") {
    TF_ASSIGN_OR_RETURN(Value d, arg());
    if (input.kind() != K::kInt || d.kind() != K::kInt || d.as_int() == 0) {
      return InvalidArgument("divisibleby needs integers and a non-zero divisor");
    }
    return input.as_int() % d.as_int() == 0;
  }
  if (name == "lower" || name == "upper") {
    // str(value).islower()/isupper(): a cased character, none of the other case.
    const std::string s = ToStr(input);
    bool cased = PyLower(s) != PyUpper(s);
    return cased && (name == "lower" ? PyLower(s) == s : PyUpper(s) == s);
  }
  if (name == "eq" || name == "equalto" || name == "==" || name == "sameas") {
    TF_ASSIGN_OR_RETURN(Value other, arg());
    if (name == "sameas" && other.kind() != input.kind()) return false;
    return Equal(input, other);
  }
  if (name == "ne" || name == "!=") {
    TF_ASSIGN_OR_RETURN(Value other, arg());
    return !Equal(input, other);
  }
  if (name == "lt" || name == "<" || name == "gt" || name == ">" || name == "le" || name == "<=" ||
      name == "ge" || name == ">=" || name == "lessthan" || name == "greaterthan") {
    TF_ASSIGN_OR_RETURN(Value other, arg());
    bool less = name == "lt" || name == "<" || name == "lessthan";
    bool greater = name == "gt" || name == ">" || name == "greaterthan";
    if (less) return Less(input, other);
    if (greater) return Less(other, input);
    if (name == "le" || name == "<=") {
      TF_ASSIGN_OR_RETURN(bool gt, Less(other, input));
      return !gt;
    }
    TF_ASSIGN_OR_RETURN(bool lt, Less(input, other));
    return !lt;
  }
  if (name == "in") {
    TF_ASSIGN_OR_RETURN(Value container, arg());
    return Contains(container, input);
  }
  return InvalidArgument("unknown test '" + name + "'");
}

}  // namespace tf::engine::jinja
