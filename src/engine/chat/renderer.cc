#include "engine/chat/renderer.h"

#include <cmath>
#include <map>
#include <memory>

#include "engine/chat/builtins.h"

namespace tf::engine::jinja {
namespace {

// Raised errors are told apart by this prefix, which no other message starts with.
constexpr std::string_view kRaisedMark = "\x01raised:";

using Scope = std::map<std::string, Value>;

class Renderer {
 public:
  Renderer(const Dict& globals, const RenderLimits& limits) : limits_(limits) {
    auto root = std::make_shared<Scope>();
    for (const auto& [k, v] : globals) (*root)[k] = v;
    scopes_.push_back(root);
  }

  Result<std::string> Run(const Template& tmpl) {
    std::string out;
    out_ = &out;
    TF_RETURN_IF_ERROR(Exec(tmpl.body));
    return out;
  }

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  static Status At(int line, int column, const Status& s) {
    if (s.message().rfind(kRaisedMark, 0) == 0 || s.message().rfind("chat template line", 0) == 0) {
      return s;
    }
    return InvalidArgument("chat template line " + std::to_string(line) + ", column " +
                           std::to_string(column) + ": " + s.message());
  }
  static Status At(const Expr& e, const Status& s) { return At(e.line, e.column, s); }
  static Status At(const Node& n, const Status& s) { return At(n.line, n.column, s); }

  Status Emit(const std::string& s) {
    if (out_->size() + s.size() > limits_.max_output_bytes) {
      return InvalidArgument("the rendered text is longer than " +
                             std::to_string(limits_.max_output_bytes) + " bytes");
    }
    *out_ += s;
    return OkStatus();
  }

  Value Lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = (*it)->find(name);
      if (found != (*it)->end()) return found->second;
    }
    return Value::Undefined("'" + name + "' is undefined");
  }
  void Assign(const std::string& name, Value v) { (*scopes_.back())[name] = std::move(v); }

  Status Exec(const Body& body) {
    for (const NodePtr& node : body) {
      TF_RETURN_IF_ERROR(ExecNode(*node));
      if (flow_ != Flow::kNormal) break;
    }
    return OkStatus();
  }

  // Counts one more level of nesting while alive; the renderer refuses to go deeper than
  // max_nesting, whatever mix of statements, expressions and macro calls got it there.
  class Nested {
   public:
    explicit Nested(int* depth) : depth_(depth) { ++*depth_; }
    ~Nested() { --*depth_; }

   private:
    int* depth_;
  };
  Status TooDeep() const {
    return InvalidArgument("statements, expressions and macro calls nested more than " +
                           std::to_string(limits_.max_nesting) + " deep");
  }

  Status ExecNode(const Node& node) {
    Nested nested(&nesting_);
    if (nesting_ > limits_.max_nesting) return At(node, TooDeep());
    switch (node.kind) {
      case Node::Kind::kText:
        return Emit(node.text);
      case Node::Kind::kOutput: {
        TF_ASSIGN_OR_RETURN(Value v, Eval(*node.expr));
        return Emit(ToStr(v));
      }
      case Node::Kind::kIf:
        for (const auto& [cond, branch] : node.branches) {
          TF_ASSIGN_OR_RETURN(Value c, Eval(*cond));
          if (c.Truthy()) return Exec(branch);
        }
        return Exec(node.else_body);
      case Node::Kind::kFor:
        return ExecFor(node);
      case Node::Kind::kSet:
        return ExecSet(node);
      case Node::Kind::kMacro:
        Assign(node.text, MakeMacro(node));
        return OkStatus();
      case Node::Kind::kBreak:
        flow_ = Flow::kBreak;
        return OkStatus();
      case Node::Kind::kContinue:
        flow_ = Flow::kContinue;
        return OkStatus();
      case Node::Kind::kBlock:
        return Exec(node.body);
    }
    return OkStatus();
  }

  [[gnu::noinline]] Status Unpack(const Node& node, const Value& item) {
    if (node.targets.size() == 1) {
      Assign(node.targets[0], item);
      return OkStatus();
    }
    if (item.kind() != Value::Kind::kList && !item.is_string()) {
      return At(node, InvalidArgument("cannot unpack a " + item.TypeName() + " into " +
                                      std::to_string(node.targets.size()) + " names"));
    }
    TF_ASSIGN_OR_RETURN(List parts, Iterate(item));
    if (parts.size() != node.targets.size()) {
      return At(node,
                InvalidArgument("cannot unpack " + std::to_string(parts.size()) + " values into " +
                                std::to_string(node.targets.size()) + " names"));
    }
    for (size_t i = 0; i < parts.size(); ++i) Assign(node.targets[i], parts[i]);
    return OkStatus();
  }

  // The handlers below stay out of line so that the recursive ExecNode and EvalInner keep
  // small stack frames (nesting costs one frame of each per level).
  [[gnu::noinline]] Status ExecFor(const Node& node) {
    TF_ASSIGN_OR_RETURN(Value iterable, Eval(*node.expr));
    Result<List> all = Iterate(iterable);
    if (!all.ok()) return At(*node.expr, all.status());
    scopes_.push_back(std::make_shared<Scope>());
    List items;
    if (node.condition) {  // the loop's `if` filters before loop.length is known
      for (const Value& item : *all) {
        TF_RETURN_IF_ERROR(Unpack(node, item));
        TF_ASSIGN_OR_RETURN(Value keep, Eval(*node.condition));
        if (keep.Truthy()) items.push_back(item);
      }
      scopes_.back()->clear();
    } else {
      items = std::move(*all);
    }
    Status status;
    // As jinja2 compiles loops: each iteration starts from the variables outside the loop (a
    // set in the body does not carry to the next iteration), and the else body runs unless
    // some iteration reached the end of the body (break and continue skip that).
    bool completed_one = false;
    int64_t n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n && status.ok(); ++i) {
      scopes_.back()->clear();
      if (++iterations_ > limits_.max_iterations) {
        status = At(node, InvalidArgument("more than " + std::to_string(limits_.max_iterations) +
                                          " loop iterations"));
        break;
      }
      const Value& item = items[static_cast<size_t>(i)];
      Assign("loop", LoopValue(items, i));
      status = Unpack(node, item);
      if (status.ok()) status = Exec(node.body);
      if (status.ok() && flow_ == Flow::kNormal) completed_one = true;
      if (flow_ == Flow::kBreak) {
        flow_ = Flow::kNormal;
        break;
      }
      flow_ = Flow::kNormal;
    }
    scopes_.pop_back();
    TF_RETURN_IF_ERROR(status);
    if (!completed_one) return Exec(node.else_body);
    return OkStatus();
  }

  // `loop` in iteration i of items.
  [[gnu::noinline]] static Value LoopValue(const List& items, int64_t i) {
    int64_t n = static_cast<int64_t>(items.size());
    Dict loop = {
        {"index0", Value::Int(i)},
        {"index", Value::Int(i + 1)},
        {"revindex0", Value::Int(n - i - 1)},
        {"revindex", Value::Int(n - i)},
        {"first", Value::Bool(i == 0)},
        {"last", Value::Bool(i == n - 1)},
        {"length", Value::Int(n)},
        {"previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value::Undefined("no previtem")},
        {"nextitem",
         i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value::Undefined("no nextitem")},
        {"cycle", Value::MakeFunction("cycle",
                                      [i](std::vector<Value>& args, Kwargs&) -> Result<Value> {
                                        if (args.empty())
                                          return InvalidArgument(
                                              "loop.cycle needs at least one value");
                                        return args[static_cast<size_t>(i) % args.size()];
                                      })},
    };
    return Value::MakeDict(std::move(loop));
  }

  [[gnu::noinline]] Status ExecSet(const Node& node) {
    Value v;
    if (node.expr) {
      TF_ASSIGN_OR_RETURN(v, Eval(*node.expr));
    } else {  // {% set x %}...{% endset %}: the body's own sets stay inside it, as in jinja2
      std::string captured;
      std::string* saved = out_;
      out_ = &captured;
      scopes_.push_back(std::make_shared<Scope>());
      Status s = Exec(node.body);
      scopes_.pop_back();
      out_ = saved;
      TF_RETURN_IF_ERROR(s);
      v = Value::String(std::move(captured));
    }
    if (!node.attr.empty()) {
      Value target = Lookup(node.targets[0]);
      if (target.kind() != Value::Kind::kNamespace) {
        return At(node, InvalidArgument("cannot assign attribute '" + node.attr + "' on '" +
                                        node.targets[0] + "', which is not a namespace"));
      }
      target.ns().attrs[node.attr] = std::make_shared<Value>(std::move(v));
      return OkStatus();
    }
    if (node.targets.size() == 1) {
      Assign(node.targets[0], std::move(v));
      return OkStatus();
    }
    return Unpack(node, v);
  }

  [[gnu::noinline]] Value MakeMacro(const Node& node) {
    const Node* macro = &node;
    return Value::MakeFunction(
        node.text, [this, macro](std::vector<Value>& args, Kwargs& kwargs) -> Result<Value> {
          return CallMacro(*macro, args, kwargs);
        });
  }

  [[gnu::noinline]] Result<Value> CallMacro(const Node& macro, std::vector<Value>& args,
                                            Kwargs& kwargs) {
    if (call_depth_ >= limits_.max_call_depth) {
      return InvalidArgument("macro calls nested more than " +
                             std::to_string(limits_.max_call_depth) + " deep");
    }
    if (args.size() > macro.params.size()) {
      return InvalidArgument("macro '" + macro.text + "' takes " +
                             std::to_string(macro.params.size()) + " arguments");
    }
    auto scope = std::make_shared<Scope>();
    for (size_t i = 0; i < macro.params.size(); ++i) {
      const auto& [name, def] = macro.params[i];
      Value v = Value::Undefined("'" + name + "' is undefined");
      if (i < args.size()) {
        v = args[i];
      } else {
        bool found = false;
        for (auto& [k, kv] : kwargs) {
          if (k == name) {
            v = kv;
            found = true;
          }
        }
        if (!found && def) {
          TF_ASSIGN_OR_RETURN(v, Eval(*def));
        }
      }
      (*scope)[name] = v;
    }
    std::vector<std::shared_ptr<Scope>> saved_scopes = {scopes_.front(), scope};
    std::swap(saved_scopes, scopes_);
    std::string captured;
    std::string* saved_out = out_;
    out_ = &captured;
    ++call_depth_;
    Status s = Exec(macro.body);
    --call_depth_;
    flow_ = Flow::kNormal;
    out_ = saved_out;
    std::swap(saved_scopes, scopes_);
    TF_RETURN_IF_ERROR(s);
    return Value::String(std::move(captured));
  }

  // ---- expressions ----

  Result<Value> Eval(const Expr& e) {
    Nested nested(&nesting_);
    if (nesting_ > limits_.max_nesting) return At(e, TooDeep());
    Result<Value> v = EvalInner(e);
    if (!v.ok()) return At(e, v.status());
    return v;
  }

  Result<Value> EvalInner(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::kLiteral:
        return e.literal;
      case Expr::Kind::kName:
        return Lookup(e.name);
      case Expr::Kind::kList:
      case Expr::Kind::kTuple:
        return EvalList(e);
      case Expr::Kind::kDict:
        return EvalDict(e);
      case Expr::Kind::kGetAttr:
      case Expr::Kind::kGetItem:
      case Expr::Kind::kSlice:
        return EvalAccess(e);
      case Expr::Kind::kCall:
        return EvalCall(e);
      case Expr::Kind::kFilter:
      case Expr::Kind::kTest:
        return EvalFilterOrTest(e);
      case Expr::Kind::kUnary:
        return EvalUnary(e);
      case Expr::Kind::kBinary:
      case Expr::Kind::kCompare:
        return EvalBinary(e);
      case Expr::Kind::kAnd:
      case Expr::Kind::kOr:
      case Expr::Kind::kNot:
      case Expr::Kind::kCond:
        return EvalLogic(e);
    }
    return Internal("unknown expression");
  }

  [[gnu::noinline]] Result<Value> EvalList(const Expr& e) {
    List items;
    for (const ExprPtr& a : e.args) {
      TF_ASSIGN_OR_RETURN(Value v, Eval(*a));
      items.push_back(std::move(v));
    }
    return Value::MakeList(std::move(items), e.kind == Expr::Kind::kTuple);
  }

  [[gnu::noinline]] Result<Value> EvalDict(const Expr& e) {
    Dict items;
    for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
      TF_ASSIGN_OR_RETURN(Value k, Eval(*e.args[i]));
      TF_ASSIGN_OR_RETURN(Value v, Eval(*e.args[i + 1]));
      if (!k.is_string()) return InvalidArgument("dict keys must be strings");
      bool replaced = false;
      for (auto& [ek, ev] : items) {
        if (ek == k.as_string()) {
          ev = v;
          replaced = true;
        }
      }
      if (!replaced) items.emplace_back(k.as_string(), std::move(v));
    }
    return Value::MakeDict(std::move(items));
  }

  [[gnu::noinline]] Result<Value> EvalAccess(const Expr& e) {
    TF_ASSIGN_OR_RETURN(Value obj, Eval(*e.args[0]));
    if (e.kind == Expr::Kind::kGetAttr) return GetAttr(obj, e.name);
    if (e.kind == Expr::Kind::kGetItem) {
      TF_ASSIGN_OR_RETURN(Value key, Eval(*e.args[1]));
      return GetItem(obj, key);
    }
    Value bounds[3];
    const Value* ptrs[3] = {nullptr, nullptr, nullptr};
    for (int i = 0; i < 3; ++i) {
      if (e.args[i + 1]) {
        TF_ASSIGN_OR_RETURN(bounds[i], Eval(*e.args[i + 1]));
        ptrs[i] = &bounds[i];
      }
    }
    return Slice(obj, ptrs[0], ptrs[1], ptrs[2]);
  }

  [[gnu::noinline]] Result<Value> EvalFilterOrTest(const Expr& e) {
    TF_ASSIGN_OR_RETURN(Value input, Eval(*e.args[0]));
    std::vector<Value> args;
    Kwargs kwargs;
    TF_RETURN_IF_ERROR(EvalArgs(e, &args, &kwargs));
    if (e.kind == Expr::Kind::kFilter) return CallFilter(e.name, input, args, kwargs);
    TF_ASSIGN_OR_RETURN(bool result, CallTest(e.name, input, args));
    return Value::Bool(result != e.negated);
  }

  [[gnu::noinline]] Result<Value> EvalUnary(const Expr& e) {
    TF_ASSIGN_OR_RETURN(Value v, Eval(*e.args[0]));
    if (v.kind() == Value::Kind::kBool) v = Value::Int(v.as_bool());
    if (v.kind() == Value::Kind::kInt) {
      if (e.name == "-" && v.as_int() == INT64_MIN) return Value::Float(9.223372036854775808e18);
      return Value::Int(e.name == "-" ? -v.as_int() : v.as_int());
    }
    if (v.kind() == Value::Kind::kFloat) {
      return Value::Float(e.name == "-" ? -v.as_number() : v.as_number());
    }
    if (v.is_undefined()) return InvalidArgument(v.name());
    return InvalidArgument("bad operand type for unary " + e.name + ": '" + v.TypeName() + "'");
  }

  [[gnu::noinline]] Result<Value> EvalBinary(const Expr& e) {
    TF_ASSIGN_OR_RETURN(Value a, Eval(*e.args[0]));
    TF_ASSIGN_OR_RETURN(Value b, Eval(*e.args[1]));
    if (e.kind == Expr::Kind::kCompare) return Compare(e.name, a, b);
    return Arithmetic(e.name, a, b);
  }

  [[gnu::noinline]] Result<Value> EvalLogic(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::kAnd: {
        TF_ASSIGN_OR_RETURN(Value a, Eval(*e.args[0]));
        if (!a.Truthy()) return a;
        return Eval(*e.args[1]);
      }
      case Expr::Kind::kOr: {
        TF_ASSIGN_OR_RETURN(Value a, Eval(*e.args[0]));
        if (a.Truthy()) return a;
        return Eval(*e.args[1]);
      }
      case Expr::Kind::kNot: {
        TF_ASSIGN_OR_RETURN(Value a, Eval(*e.args[0]));
        return Value::Bool(!a.Truthy());
      }
      default: {  // kCond
        TF_ASSIGN_OR_RETURN(Value c, Eval(*e.args[1]));
        if (c.Truthy()) return Eval(*e.args[0]);
        if (e.args[2]) return Eval(*e.args[2]);
        return Value::Undefined("the if expression was false and had no else");
      }
    }
  }

  [[gnu::noinline]] Status EvalArgs(const Expr& e, std::vector<Value>* args, Kwargs* kwargs) {
    for (size_t i = 1; i < e.args.size(); ++i) {
      TF_ASSIGN_OR_RETURN(Value v, Eval(*e.args[i]));
      args->push_back(std::move(v));
    }
    for (const auto& [k, a] : e.kwargs) {
      TF_ASSIGN_OR_RETURN(Value v, Eval(*a));
      kwargs->emplace_back(k, std::move(v));
    }
    return OkStatus();
  }

  [[gnu::noinline]] Result<Value> EvalCall(const Expr& e) {
    TF_ASSIGN_OR_RETURN(Value callee, Eval(*e.args[0]));
    std::vector<Value> args;
    Kwargs kwargs;
    TF_RETURN_IF_ERROR(EvalArgs(e, &args, &kwargs));
    if (callee.is_undefined()) return InvalidArgument(callee.name());
    if (callee.kind() != Value::Kind::kFunction) {
      return InvalidArgument("'" + callee.TypeName() + "' is not callable");
    }
    if (++iterations_ > limits_.max_iterations) {
      return InvalidArgument("more than " + std::to_string(limits_.max_iterations) + " calls");
    }
    return callee.function()(args, kwargs);
  }

  [[gnu::noinline]] static Result<Value> Compare(const std::string& op, const Value& a,
                                                 const Value& b) {
    if (op == "==") return Value::Bool(Equal(a, b));
    if (op == "!=") return Value::Bool(!Equal(a, b));
    if (op == "in" || op == "not in") {
      TF_ASSIGN_OR_RETURN(bool in, Contains(b, a));
      return Value::Bool(in == (op == "in"));
    }
    if (a.is_undefined()) return InvalidArgument(a.name());
    if (b.is_undefined()) return InvalidArgument(b.name());
    TF_ASSIGN_OR_RETURN(bool lt, Less(a, b));
    TF_ASSIGN_OR_RETURN(bool gt, Less(b, a));
    if (op == "<") return Value::Bool(lt);
    if (op == ">") return Value::Bool(gt);
    if (op == "<=") return Value::Bool(!gt);
    return Value::Bool(!lt);  // >=
  }

  [[gnu::noinline]] static Result<Value> Arithmetic(const std::string& op, Value a, Value b) {
    if (op == "~") {
      std::string s = ToStr(a) + ToStr(b);
      if (s.size() > kMaxStringBytes) return InvalidArgument("string too long");
      return Value::String(std::move(s));
    }
    if (a.is_undefined()) return InvalidArgument(a.name());
    if (b.is_undefined()) return InvalidArgument(b.name());
    if (a.kind() == Value::Kind::kBool) a = Value::Int(a.as_bool());
    if (b.kind() == Value::Kind::kBool) b = Value::Int(b.as_bool());
    auto unsupported = [&]() {
      return InvalidArgument("unsupported operand type(s) for " + op + ": '" + a.TypeName() +
                             "' and '" + b.TypeName() + "'");
    };
    if (op == "+") {
      if (a.is_string() && b.is_string()) {
        if (a.as_string().size() + b.as_string().size() > kMaxStringBytes) {
          return InvalidArgument("string too long");
        }
        return Value::String(a.as_string() + b.as_string());
      }
      if (a.kind() == Value::Kind::kList && b.kind() == Value::Kind::kList &&
          a.is_tuple() == b.is_tuple()) {
        if (a.list().size() + b.list().size() > kMaxItems) return InvalidArgument("list too long");
        List items = a.list();
        items.insert(items.end(), b.list().begin(), b.list().end());
        return Value::MakeList(std::move(items), a.is_tuple());
      }
    }
    if (op == "*") {
      const Value& seq = a.is_number() ? b : a;
      const Value& count = a.is_number() ? a : b;
      if ((seq.is_string() || seq.kind() == Value::Kind::kList) &&
          count.kind() == Value::Kind::kInt) {
        int64_t n = std::max<int64_t>(0, count.as_int());
        if (seq.is_string()) {
          if (!seq.as_string().empty() &&
              static_cast<uint64_t>(n) > kMaxStringBytes / seq.as_string().size()) {
            return InvalidArgument("string too long");
          }
          std::string out;
          for (int64_t i = 0; i < n; ++i) out += seq.as_string();
          return Value::String(std::move(out));
        }
        if (!seq.list().empty() && static_cast<uint64_t>(n) > kMaxItems / seq.list().size()) {
          return InvalidArgument("list too long");
        }
        List items;
        for (int64_t i = 0; i < n; ++i)
          items.insert(items.end(), seq.list().begin(), seq.list().end());
        return Value::MakeList(std::move(items), seq.is_tuple());
      }
    }
    if (!a.is_number() || !b.is_number()) return unsupported();
    bool ints = a.kind() == Value::Kind::kInt && b.kind() == Value::Kind::kInt;
    if (ints && op != "/" && op != "**") {
      int64_t x = a.as_int(), y = b.as_int(), r = 0;
      if (op == "+" && !__builtin_add_overflow(x, y, &r)) return Value::Int(r);
      if (op == "-" && !__builtin_sub_overflow(x, y, &r)) return Value::Int(r);
      if (op == "*" && !__builtin_mul_overflow(x, y, &r)) return Value::Int(r);
      if (op == "//" || op == "%") {
        if (y == 0) return InvalidArgument("integer division or modulo by zero");
        if (x == INT64_MIN && y == -1) return InvalidArgument("integer overflow");
        int64_t q = x / y, m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
          --q;
          m += y;
        }
        return Value::Int(op == "//" ? q : m);
      }
      if (op == "+" || op == "-" || op == "*") return InvalidArgument("integer overflow");
    }
    double x = a.as_number(), y = b.as_number();
    if (op == "+") return Value::Float(x + y);
    if (op == "-") return Value::Float(x - y);
    if (op == "*") return Value::Float(x * y);
    if (op == "/") {
      if (y == 0) return InvalidArgument("division by zero");
      return Value::Float(x / y);
    }
    if (op == "//" || op == "%") {
      if (y == 0) return InvalidArgument("float division or modulo by zero");
      double m = std::fmod(x, y);
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      if (op == "%") return Value::Float(m);
      return Value::Float(std::floor(x / y));
    }
    if (op == "**") {
      if (ints && b.as_int() >= 0) {
        int64_t r = 1, base = a.as_int();
        for (int64_t i = 0; i < b.as_int(); ++i) {
          if (__builtin_mul_overflow(r, base, &r)) return InvalidArgument("integer overflow");
          if (r == 0 || r == 1) break;
          if (i > 64 && (base == -1)) {
            r = (b.as_int() % 2 == 0) ? 1 : -1;
            break;
          }
        }
        return Value::Int(r);
      }
      if (x == 0 && y < 0) return InvalidArgument("zero to a negative power");
      return Value::Float(std::pow(x, y));
    }
    return unsupported();
  }

  RenderLimits limits_;
  std::vector<std::shared_ptr<Scope>> scopes_;  // innermost last; [0] the template's globals
  std::string* out_ = nullptr;                  // where output goes now
  Flow flow_ = Flow::kNormal;
  size_t iterations_ = 0;
  int call_depth_ = 0;
  int nesting_ = 0;  // ExecNode and Eval frames on the stack now
};

}  // namespace

Status RaisedError(const std::string& message) {
  return InvalidArgument(std::string(kRaisedMark) + message);
}

Result<std::string> RenderTemplate(const Template& tmpl, const Dict& globals,
                                   const RenderLimits& limits) {
  Result<std::string> out = Renderer(globals, limits).Run(tmpl);
  if (!out.ok() && out.status().message().rfind(kRaisedMark, 0) == 0) {
    return InvalidArgument(out.status().message().substr(kRaisedMark.size()));
  }
  return out;
}

}  // namespace tf::engine::jinja
