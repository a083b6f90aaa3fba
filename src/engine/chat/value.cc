#include "engine/chat/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace tf::engine::jinja {

Value Value::Undefined(std::string name) {
  Value v;
  v.str_ = std::move(name);
  return v;
}
Value Value::None() {
  Value v;
  v.kind_ = Kind::kNone;
  return v;
}
Value Value::Bool(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.bool_ = b;
  return v;
}
Value Value::Int(int64_t i) {
  Value v;
  v.kind_ = Kind::kInt;
  v.int_ = i;
  return v;
}
Value Value::Float(double d) {
  Value v;
  v.kind_ = Kind::kFloat;
  v.float_ = d;
  return v;
}
Value Value::String(std::string s) {
  Value v;
  v.kind_ = Kind::kString;
  v.str_ = std::move(s);
  return v;
}
Value Value::MakeList(List items, bool tuple) {
  Value v;
  v.kind_ = Kind::kList;
  v.tuple_ = tuple;
  v.list_ = std::make_shared<const List>(std::move(items));
  return v;
}
Value Value::MakeDict(Dict items) {
  Value v;
  v.kind_ = Kind::kDict;
  v.dict_ = std::make_shared<const Dict>(std::move(items));
  return v;
}
Value Value::MakeNamespace() {
  Value v;
  v.kind_ = Kind::kNamespace;
  v.ns_ = std::make_shared<Namespace>();
  return v;
}
Value Value::MakeFunction(std::string name, Function fn) {
  Value v;
  v.kind_ = Kind::kFunction;
  v.str_ = std::move(name);
  v.fn_ = std::make_shared<const Function>(std::move(fn));
  return v;
}

Value Value::FromJson(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return None();
    case nlohmann::ordered_json::value_t::boolean:
      return Bool(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Int(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      return u > static_cast<uint64_t>(INT64_MAX) ? Float(static_cast<double>(u))
                                                  : Int(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float:
      return Float(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return String(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      List items;
      for (const auto& e : j) items.push_back(FromJson(e));
      return MakeList(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict items;
      for (const auto& [k, e] : j.items()) items.emplace_back(k, FromJson(e));
      return MakeDict(std::move(items));
    }
    default:
      return None();
  }
}

const Value* Value::Find(std::string_view key) const {
  if (kind_ != Kind::kDict) return nullptr;
  for (const auto& [k, v] : *dict_) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool Value::Truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return bool_;
    case Kind::kInt:
      return int_ != 0;
    case Kind::kFloat:
      return float_ != 0;
    case Kind::kString:
      return !str_.empty();
    case Kind::kList:
      return !list_->empty();
    case Kind::kDict:
      return !dict_->empty();
    default:
      return true;
  }
}

std::string Value::TypeName() const {
  switch (kind_) {
    case Kind::kUndefined:
      return "undefined";
    case Kind::kNone:
      return "NoneType object";
    case Kind::kBool:
      return "bool object";
    case Kind::kInt:
      return "int object";
    case Kind::kFloat:
      return "float object";
    case Kind::kString:
      return "str object";
    case Kind::kList:
      return tuple_ ? "tuple object" : "list object";
    case Kind::kDict:
      return "dict object";
    case Kind::kNamespace:
      return "Namespace object";
    case Kind::kFunction:
      return "function";
  }
  return "object";
}

std::string FloatRepr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  // The shortest digits that round-trip, then laid out as Python's repr does: positional for
  // exponents from -4 to 15, scientific otherwise.
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  size_t e = sci.find('e');
  int exponent = std::stoi(sci.substr(e + 1));
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp[16];
    std::snprintf(exp, sizeof(exp), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + exp;
  }
  if (exponent < 0) {
    return out + "0." + std::string(-exponent - 1, '0') + digits;
  }
  if (static_cast<int>(digits.size()) <= exponent + 1) {
    return out + digits + std::string(exponent + 1 - digits.size(), '0') + ".0";
  }
  return out + digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
}

namespace {

std::string StringRepr(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == quote) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
  return out;
}

std::string SequenceRepr(const Value& v) {
  std::string out = v.is_tuple() ? "(" : "[";
  const List& items = v.list();
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += ToRepr(items[i]);
  }
  if (v.is_tuple() && items.size() == 1) out += ",";
  out += v.is_tuple() ? ")" : "]";
  return out;
}

}  // namespace

std::string ToStr(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return "";
    case Value::Kind::kString:
      return v.as_string();
    default:
      return ToRepr(v);
  }
}

std::string ToRepr(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return "";
    case Value::Kind::kNone:
      return "None";
    case Value::Kind::kBool:
      return v.as_bool() ? "True" : "False";
    case Value::Kind::kInt:
      return std::to_string(v.as_int());
    case Value::Kind::kFloat:
      return FloatRepr(v.as_number());
    case Value::Kind::kString:
      return StringRepr(v.as_string());
    case Value::Kind::kList:
      return SequenceRepr(v);
    case Value::Kind::kDict: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, e] : v.dict()) {
        if (!first) out += ", ";
        first = false;
        out += StringRepr(k) + ": " + ToRepr(e);
      }
      return out + "}";
    }
    case Value::Kind::kNamespace:
      return "<Namespace>";
    case Value::Kind::kFunction:
      return "<function " + v.name() + ">";
  }
  return "";
}

bool Equal(const Value& a, const Value& b) {
  using K = Value::Kind;
  bool a_num = a.is_number() || a.kind() == K::kBool;
  bool b_num = b.is_number() || b.kind() == K::kBool;
  if (a_num && b_num) {
    auto num = [](const Value& v) {
      return v.kind() == K::kBool ? (v.as_bool() ? 1.0 : 0.0) : v.as_number();
    };
    if (a.kind() == K::kFloat || b.kind() == K::kFloat) return num(a) == num(b);
    auto integer = [](const Value& v) {
      return v.kind() == K::kBool ? int64_t{v.as_bool()} : v.as_int();
    };
    return integer(a) == integer(b);
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::kUndefined:
    case K::kNone:
      return true;
    case K::kString:
      return a.as_string() == b.as_string();
    case K::kList: {
      if (a.is_tuple() != b.is_tuple() || a.list().size() != b.list().size()) return false;
      for (size_t i = 0; i < a.list().size(); ++i) {
        if (!Equal(a.list()[i], b.list()[i])) return false;
      }
      return true;
    }
    case K::kDict: {
      if (a.dict().size() != b.dict().size()) return false;
      for (const auto& [k, e] : a.dict()) {
        const Value* other = b.Find(k);
        if (other == nullptr || !Equal(e, *other)) return false;
      }
      return true;
    }
    case K::kNamespace:
      return &a.ns() == &b.ns();
    default:
      return false;
  }
}

Result<bool> Less(const Value& a, const Value& b) {
  using K = Value::Kind;
  bool a_num = a.is_number() || a.kind() == K::kBool;
  bool b_num = b.is_number() || b.kind() == K::kBool;
  if (a_num && b_num) {
    auto num = [](const Value& v) {
      return v.kind() == K::kBool ? (v.as_bool() ? 1.0 : 0.0) : v.as_number();
    };
    if (a.kind() == K::kInt && b.kind() == K::kInt) return a.as_int() < b.as_int();
    return num(a) < num(b);
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();
  if (a.kind() == K::kList && b.kind() == K::kList) {
    const List& x = a.list();
    const List& y = b.list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (Equal(x[i], y[i])) continue;
      return Less(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  return InvalidArgument("'<' not supported between a " + a.TypeName() + " and a " + b.TypeName());
}

namespace {

void JsonString(const std::string& s, std::string* out) {
  *out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          *out += buf;
        } else {
          *out += static_cast<char>(c);
        }
    }
  }
  *out += '"';
}

Status JsonValue(const Value& v, int indent, int depth, std::string* out) {
  if (depth > 200) return InvalidArgument("tojson: value nested too deeply");
  auto newline = [&](int level) {
    if (indent < 0) return;
    *out += '\n';
    out->append(static_cast<size_t>(indent) * level, ' ');
  };
  const char* item_sep = indent < 0 ? ", " : ",";
  switch (v.kind()) {
    case Value::Kind::kNone:
      *out += "null";
      return OkStatus();
    case Value::Kind::kBool:
      *out += v.as_bool() ? "true" : "false";
      return OkStatus();
    case Value::Kind::kInt:
      *out += std::to_string(v.as_int());
      return OkStatus();
    case Value::Kind::kFloat: {
      double d = v.as_number();
      if (std::isnan(d)) {
        *out += "NaN";
      } else if (std::isinf(d)) {
        *out += d < 0 ? "-Infinity" : "Infinity";
      } else {
        *out += FloatRepr(d);
      }
      return OkStatus();
    }
    case Value::Kind::kString:
      JsonString(v.as_string(), out);
      return OkStatus();
    case Value::Kind::kList: {
      if (v.list().empty()) {
        *out += "[]";
        return OkStatus();
      }
      *out += '[';
      for (size_t i = 0; i < v.list().size(); ++i) {
        if (i) *out += item_sep;
        newline(depth + 1);
        TF_RETURN_IF_ERROR(JsonValue(v.list()[i], indent, depth + 1, out));
      }
      newline(depth);
      *out += ']';
      return OkStatus();
    }
    case Value::Kind::kDict: {
      if (v.dict().empty()) {
        *out += "{}";
        return OkStatus();
      }
      *out += '{';
      bool first = true;
      for (const auto& [k, e] : v.dict()) {
        if (!first) *out += item_sep;
        first = false;
        newline(depth + 1);
        JsonString(k, out);
        *out += ": ";
        TF_RETURN_IF_ERROR(JsonValue(e, indent, depth + 1, out));
      }
      newline(depth);
      *out += '}';
      return OkStatus();
    }
    default:
      return InvalidArgument("tojson: a " + v.TypeName() + " is not JSON serializable");
  }
}

}  // namespace

Result<std::string> ToJson(const Value& v, int indent) {
  std::string out;
  TF_RETURN_IF_ERROR(JsonValue(v, indent, 0, &out));
  return out;
}

}  // namespace tf::engine::jinja
