#include "engine/chat/parser.h"

#include <cerrno>
#include <cstdlib>
#include <set>

#include "engine/chat/lexer.h"

namespace tf::engine::jinja {
namespace {

constexpr int kMaxDepth = 200;

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Result<std::shared_ptr<const Template>> Run() {
    auto tmpl = std::make_shared<Template>();
    std::string stop;
    TF_RETURN_IF_ERROR(ParseBody({}, &tmpl->body, &stop));
    return std::shared_ptr<const Template>(std::move(tmpl));
  }

 private:
  using K = Token::Kind;

  const Token& Peek(size_t ahead = 0) const {
    size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  const Token& Take() {
    const Token& t = Peek();
    if (pos_ < tokens_.size() - 1) ++pos_;
    return t;
  }
  bool IsOp(const char* op, size_t ahead = 0) const {
    return Peek(ahead).kind == K::kOp && Peek(ahead).text == op;
  }
  bool IsName(const char* name, size_t ahead = 0) const {
    return Peek(ahead).kind == K::kName && Peek(ahead).text == name;
  }
  static std::string Describe(const Token& t) {
    switch (t.kind) {
      case K::kEof:
        return "end of template";
      case K::kVarEnd:
        return "'}}'";
      case K::kBlockEnd:
        return "'%}'";
      case K::kVarBegin:
        return "'{{'";
      case K::kBlockBegin:
        return "'{%'";
      case K::kString:
        return "a string";
      case K::kText:
        return "text";
      default:
        return "'" + t.text + "'";
    }
  }
  Status Unexpected(const std::string& wanted) const {
    return SyntaxError(Peek().line, Peek().column,
                       "expected " + wanted + ", found " + Describe(Peek()));
  }
  Status ExpectOp(const char* op) {
    if (!IsOp(op)) return Unexpected(std::string("'") + op + "'");
    Take();
    return OkStatus();
  }
  Status ExpectBlockEnd() {
    if (Peek().kind != K::kBlockEnd) return Unexpected("'%}'");
    Take();
    return OkStatus();
  }
  Result<std::string> ExpectName() {
    if (Peek().kind != K::kName) return Unexpected("a name");
    return Take().text;
  }
  Status Deeper() {
    if (++depth_ > kMaxDepth) {
      return SyntaxError(Peek().line, Peek().column, "nested more than 200 levels deep");
    }
    return OkStatus();
  }

  // Statements until a block tag named in `stops` (its name is consumed and put in *stop), or
  // the end of the template when stops is empty.
  Status ParseBody(const std::set<std::string>& stops, Body* body, std::string* stop) {
    TF_RETURN_IF_ERROR(Deeper());
    while (true) {
      const Token& t = Peek();
      if (t.kind == K::kEof) {
        if (stops.empty()) break;
        std::string wanted = *stops.begin();
        for (const std::string& s : stops) {
          if (s.rfind("end", 0) == 0) wanted = s;
        }
        return SyntaxError(t.line, t.column, "the template ends before its {% " + wanted + " %}");
      }
      if (t.kind == K::kText) {
        auto node = MakeNode(Node::Kind::kText, t);
        node->text = t.text;
        body->push_back(std::move(node));
        Take();
        continue;
      }
      if (t.kind == K::kVarBegin) {
        auto node = MakeNode(Node::Kind::kOutput, t);
        Take();
        TF_ASSIGN_OR_RETURN(node->expr, ParseExpression());
        if (Peek().kind != K::kVarEnd) return Unexpected("'}}'");
        Take();
        body->push_back(std::move(node));
        continue;
      }
      if (t.kind != K::kBlockBegin) return Unexpected("text or a tag");
      const Token& name = Peek(1);
      if (name.kind != K::kName) {
        Take();
        return Unexpected("a tag name");
      }
      if (stops.count(name.text)) {
        Take();
        Take();
        *stop = name.text;
        break;
      }
      TF_RETURN_IF_ERROR(ParseStatement(body));
    }
    --depth_;
    return OkStatus();
  }

  static NodePtr MakeNode(Node::Kind kind, const Token& at) {
    auto node = std::make_unique<Node>();
    node->kind = kind;
    node->line = at.line;
    node->column = at.column;
    return node;
  }

  Status ParseStatement(Body* body) {
    Take();  // {%
    const Token& tag = Take();
    if (tag.text == "if") return ParseIf(tag, body);
    if (tag.text == "for") return ParseFor(tag, body);
    if (tag.text == "set") return ParseSet(tag, body);
    if (tag.text == "macro") return ParseMacro(tag, body);
    if (tag.text == "break" || tag.text == "continue") {
      if (loop_depth_ == 0) {
        return SyntaxError(tag.line, tag.column, "'" + tag.text + "' outside a for loop");
      }
      body->push_back(
          MakeNode(tag.text == "break" ? Node::Kind::kBreak : Node::Kind::kContinue, tag));
      return ExpectBlockEnd();
    }
    if (tag.text == "generation") {
      auto node = MakeNode(Node::Kind::kBlock, tag);
      TF_RETURN_IF_ERROR(ExpectBlockEnd());
      std::string stop;
      TF_RETURN_IF_ERROR(ParseBody({"endgeneration"}, &node->body, &stop));
      body->push_back(std::move(node));
      return ExpectBlockEnd();
    }
    return SyntaxError(tag.line, tag.column, "unknown tag '" + tag.text + "'");
  }

  Status ParseIf(const Token& tag, Body* body) {
    auto node = MakeNode(Node::Kind::kIf, tag);
    while (true) {
      TF_ASSIGN_OR_RETURN(ExprPtr cond, ParseExpression());
      TF_RETURN_IF_ERROR(ExpectBlockEnd());
      Body branch;
      std::string stop;
      TF_RETURN_IF_ERROR(ParseBody({"elif", "else", "endif"}, &branch, &stop));
      node->branches.emplace_back(std::move(cond), std::move(branch));
      if (stop == "elif") continue;
      if (stop == "else") {
        TF_RETURN_IF_ERROR(ExpectBlockEnd());
        TF_RETURN_IF_ERROR(ParseBody({"endif"}, &node->else_body, &stop));
      }
      break;
    }
    body->push_back(std::move(node));
    return ExpectBlockEnd();
  }

  Status ParseTargets(std::vector<std::string>* targets) {
    bool paren = IsOp("(");
    if (paren) Take();
    do {
      TF_ASSIGN_OR_RETURN(std::string name, ExpectName());
      targets->push_back(std::move(name));
    } while (IsOp(",") && (Take(), true));
    if (paren) TF_RETURN_IF_ERROR(ExpectOp(")"));
    return OkStatus();
  }

  Status ParseFor(const Token& tag, Body* body) {
    auto node = MakeNode(Node::Kind::kFor, tag);
    TF_RETURN_IF_ERROR(ParseTargets(&node->targets));
    if (!IsName("in")) return Unexpected("'in'");
    Take();
    TF_ASSIGN_OR_RETURN(node->expr, ParseOr(/*allow_cond=*/false));
    if (IsName("if")) {
      Take();
      TF_ASSIGN_OR_RETURN(node->condition, ParseExpression());
    }
    if (IsName("recursive")) {
      return SyntaxError(Peek().line, Peek().column, "recursive loops are not supported");
    }
    TF_RETURN_IF_ERROR(ExpectBlockEnd());
    std::string stop;
    ++loop_depth_;
    TF_RETURN_IF_ERROR(ParseBody({"else", "endfor"}, &node->body, &stop));
    --loop_depth_;
    if (stop == "else") {
      TF_RETURN_IF_ERROR(ExpectBlockEnd());
      TF_RETURN_IF_ERROR(ParseBody({"endfor"}, &node->else_body, &stop));
    }
    body->push_back(std::move(node));
    return ExpectBlockEnd();
  }

  Status ParseSet(const Token& tag, Body* body) {
    auto node = MakeNode(Node::Kind::kSet, tag);
    if (Peek().kind == K::kName && IsOp(".", 1)) {
      node->targets.push_back(Take().text);
      Take();
      TF_ASSIGN_OR_RETURN(node->attr, ExpectName());
    } else {
      TF_RETURN_IF_ERROR(ParseTargets(&node->targets));
    }
    if (Peek().kind == K::kBlockEnd && node->attr.empty() && node->targets.size() == 1) {
      Take();  // {% set x %}...{% endset %}
      std::string stop;
      TF_RETURN_IF_ERROR(ParseBody({"endset"}, &node->body, &stop));
      body->push_back(std::move(node));
      return ExpectBlockEnd();
    }
    TF_RETURN_IF_ERROR(ExpectOp("="));
    TF_ASSIGN_OR_RETURN(node->expr, ParseTupleOrExpression());
    body->push_back(std::move(node));
    return ExpectBlockEnd();
  }

  Status ParseMacro(const Token& tag, Body* body) {
    auto node = MakeNode(Node::Kind::kMacro, tag);
    TF_ASSIGN_OR_RETURN(node->text, ExpectName());
    TF_RETURN_IF_ERROR(ExpectOp("("));
    while (!IsOp(")")) {
      TF_ASSIGN_OR_RETURN(std::string param, ExpectName());
      ExprPtr def;
      if (IsOp("=")) {
        Take();
        TF_ASSIGN_OR_RETURN(def, ParseExpression());
      }
      node->params.emplace_back(std::move(param), std::move(def));
      if (!IsOp(",")) break;
      Take();
    }
    TF_RETURN_IF_ERROR(ExpectOp(")"));
    TF_RETURN_IF_ERROR(ExpectBlockEnd());
    std::string stop;
    int outer_loops = loop_depth_;
    loop_depth_ = 0;  // a macro's body is outside any loop around its definition
    TF_RETURN_IF_ERROR(ParseBody({"endmacro"}, &node->body, &stop));
    loop_depth_ = outer_loops;
    body->push_back(std::move(node));
    return ExpectBlockEnd();
  }

  // ---- expressions ----

  ExprPtr MakeExpr(Expr::Kind kind, const Token& at) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = at.line;
    e->column = at.column;
    return e;
  }

  // `a, b` (a tuple) or one expression: what `set x = ...` takes.
  Result<ExprPtr> ParseTupleOrExpression() {
    Token at = Peek();
    TF_ASSIGN_OR_RETURN(ExprPtr first, ParseExpression());
    if (!IsOp(",")) return first;
    auto tuple = MakeExpr(Expr::Kind::kTuple, at);
    tuple->args.push_back(std::move(first));
    while (IsOp(",")) {
      Take();
      if (Peek().kind == K::kBlockEnd) break;
      TF_ASSIGN_OR_RETURN(ExprPtr item, ParseExpression());
      tuple->args.push_back(std::move(item));
    }
    return tuple;
  }

  Result<ExprPtr> ParseExpression() { return ParseOr(/*allow_cond=*/true); }

  Result<ExprPtr> ParseOr(bool allow_cond) {
    TF_RETURN_IF_ERROR(Deeper());
    Token at = Peek();
    TF_ASSIGN_OR_RETURN(ExprPtr left, ParseAnd());
    while (IsName("or")) {
      Take();
      TF_ASSIGN_OR_RETURN(ExprPtr right, ParseAnd());
      auto e = MakeExpr(Expr::Kind::kOr, at);
      e->args.push_back(std::move(left));
      e->args.push_back(std::move(right));
      left = std::move(e);
    }
    if (allow_cond && IsName("if")) {
      Take();
      auto e = MakeExpr(Expr::Kind::kCond, at);
      e->args.push_back(std::move(left));
      TF_ASSIGN_OR_RETURN(ExprPtr cond, ParseOr(false));
      e->args.push_back(std::move(cond));
      if (IsName("else")) {
        Take();
        TF_ASSIGN_OR_RETURN(ExprPtr other, ParseOr(true));
        e->args.push_back(std::move(other));
      } else {
        e->args.push_back(nullptr);
      }
      left = std::move(e);
    }
    --depth_;
    return left;
  }

  Result<ExprPtr> ParseAnd() {
    Token at = Peek();
    TF_ASSIGN_OR_RETURN(ExprPtr left, ParseNot());
    while (IsName("and")) {
      Take();
      TF_ASSIGN_OR_RETURN(ExprPtr right, ParseNot());
      auto e = MakeExpr(Expr::Kind::kAnd, at);
      e->args.push_back(std::move(left));
      e->args.push_back(std::move(right));
      left = std::move(e);
    }
    return left;
  }

  Result<ExprPtr> ParseNot() {
    if (IsName("not")) {
      TF_RETURN_IF_ERROR(Deeper());
      Token at = Take();
      TF_ASSIGN_OR_RETURN(ExprPtr operand, ParseNot());
      auto e = MakeExpr(Expr::Kind::kNot, at);
      e->args.push_back(std::move(operand));
      --depth_;
      return e;
    }
    return ParseCompare();
  }

  Result<ExprPtr> ParseCompare() {
    Token at = Peek();
    TF_ASSIGN_OR_RETURN(ExprPtr left, ParseAdd());
    while (true) {
      std::string op;
      if (Peek().kind == K::kOp &&
          (Peek().text == "==" || Peek().text == "!=" || Peek().text == "<" || Peek().text == ">" ||
           Peek().text == "<=" || Peek().text == ">=")) {
        at = Take();
        op = at.text;
      } else if (IsName("in")) {
        at = Take();
        op = "in";
      } else if (IsName("not") && IsName("in", 1)) {
        at = Take();
        Take();
        op = "not in";
      } else {
        break;
      }
      TF_ASSIGN_OR_RETURN(ExprPtr right, ParseAdd());
      auto e = MakeExpr(Expr::Kind::kCompare, at);
      e->name = op;
      e->args.push_back(std::move(left));
      e->args.push_back(std::move(right));
      left = std::move(e);
    }
    return left;
  }

  Result<ExprPtr> Binary(ExprPtr left, const Token& at, std::string op, ExprPtr right) {
    auto e = MakeExpr(Expr::Kind::kBinary, at);
    e->name = std::move(op);
    e->args.push_back(std::move(left));
    e->args.push_back(std::move(right));
    return e;
  }

  Result<ExprPtr> ParseAdd() {
    Token at = Peek();
    TF_ASSIGN_OR_RETURN(ExprPtr left, ParseConcat());
    while (IsOp("+") || IsOp("-")) {
      at = Take();
      std::string op = at.text;
      TF_ASSIGN_OR_RETURN(ExprPtr right, ParseConcat());
      TF_ASSIGN_OR_RETURN(left, Binary(std::move(left), at, op, std::move(right)));
    }
    return left;
  }

  Result<ExprPtr> ParseConcat() {
    Token at = Peek();
    TF_ASSIGN_OR_RETURN(ExprPtr left, ParseMul());
    while (IsOp("~")) {
      at = Take();
      TF_ASSIGN_OR_RETURN(ExprPtr right, ParseMul());
      TF_ASSIGN_OR_RETURN(left, Binary(std::move(left), at, "~", std::move(right)));
    }
    return left;
  }

  Result<ExprPtr> ParseMul() {
    Token at = Peek();
    TF_ASSIGN_OR_RETURN(ExprPtr left, ParsePow());
    while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
      at = Take();
      std::string op = at.text;
      TF_ASSIGN_OR_RETURN(ExprPtr right, ParsePow());
      TF_ASSIGN_OR_RETURN(left, Binary(std::move(left), at, op, std::move(right)));
    }
    return left;
  }

  Result<ExprPtr> ParsePow() {
    Token at = Peek();
    TF_ASSIGN_OR_RETURN(ExprPtr left, ParseUnary());
    while (IsOp("**")) {
      at = Take();
      TF_ASSIGN_OR_RETURN(ExprPtr right, ParseUnary());
      TF_ASSIGN_OR_RETURN(left, Binary(std::move(left), at, "**", std::move(right)));
    }
    return left;
  }

  // As jinja2: in `-x | f` the filter applies to -x.
  Result<ExprPtr> ParseUnary(bool with_filters = true) {
    TF_RETURN_IF_ERROR(Deeper());
    ExprPtr result;
    if (IsOp("-") || IsOp("+")) {
      Token at = Take();
      TF_ASSIGN_OR_RETURN(ExprPtr operand, ParseUnary(/*with_filters=*/false));
      result = MakeExpr(Expr::Kind::kUnary, at);
      result->name = at.text;
      result->args.push_back(std::move(operand));
    } else {
      TF_ASSIGN_OR_RETURN(result, ParsePrimary());
      TF_ASSIGN_OR_RETURN(result, ParsePostfix(std::move(result)));
    }
    if (with_filters) {
      TF_ASSIGN_OR_RETURN(result, ParseFilters(std::move(result)));
    }
    --depth_;
    return result;
  }

  Result<ExprPtr> ParsePrimary() {
    const Token t = Take();
    switch (t.kind) {
      case K::kName: {
        if (t.text == "true" || t.text == "True" || t.text == "false" || t.text == "False") {
          auto e = MakeExpr(Expr::Kind::kLiteral, t);
          e->literal = Value::Bool(t.text[0] == 't' || t.text[0] == 'T');
          return e;
        }
        if (t.text == "none" || t.text == "None") {
          auto e = MakeExpr(Expr::Kind::kLiteral, t);
          e->literal = Value::None();
          return e;
        }
        auto e = MakeExpr(Expr::Kind::kName, t);
        e->name = t.text;
        return e;
      }
      case K::kString: {
        std::string s = t.text;
        while (Peek().kind == K::kString) s += Take().text;  // 'a' 'b' is 'ab'
        auto e = MakeExpr(Expr::Kind::kLiteral, t);
        e->literal = Value::String(std::move(s));
        return e;
      }
      case K::kInt: {
        auto e = MakeExpr(Expr::Kind::kLiteral, t);
        errno = 0;
        long long v = std::strtoll(t.text.c_str(), nullptr, 10);
        if (errno == ERANGE) return SyntaxError(t.line, t.column, "integer out of range");
        e->literal = Value::Int(v);
        return e;
      }
      case K::kFloat: {
        auto e = MakeExpr(Expr::Kind::kLiteral, t);
        e->literal = Value::Float(std::strtod(t.text.c_str(), nullptr));
        return e;
      }
      case K::kOp:
        if (t.text == "(") return ParseParen(t);
        if (t.text == "[") return ParseList(t);
        if (t.text == "{") return ParseDict(t);
        break;
      default:
        break;
    }
    --pos_;
    return Unexpected("an expression");
  }

  Result<ExprPtr> ParseParen(const Token& at) {
    if (IsOp(")")) {
      Take();
      return MakeExpr(Expr::Kind::kTuple, at);
    }
    TF_ASSIGN_OR_RETURN(ExprPtr first, ParseExpression());
    if (IsOp(")")) {
      Take();
      return first;
    }
    auto tuple = MakeExpr(Expr::Kind::kTuple, at);
    tuple->args.push_back(std::move(first));
    while (IsOp(",")) {
      Take();
      if (IsOp(")")) break;
      TF_ASSIGN_OR_RETURN(ExprPtr item, ParseExpression());
      tuple->args.push_back(std::move(item));
    }
    TF_RETURN_IF_ERROR(ExpectOp(")"));
    return tuple;
  }

  Result<ExprPtr> ParseList(const Token& at) {
    auto list = MakeExpr(Expr::Kind::kList, at);
    while (!IsOp("]")) {
      TF_ASSIGN_OR_RETURN(ExprPtr item, ParseExpression());
      list->args.push_back(std::move(item));
      if (!IsOp(",")) break;
      Take();
    }
    TF_RETURN_IF_ERROR(ExpectOp("]"));
    return list;
  }

  Result<ExprPtr> ParseDict(const Token& at) {
    auto dict = MakeExpr(Expr::Kind::kDict, at);
    while (!IsOp("}")) {
      TF_ASSIGN_OR_RETURN(ExprPtr key, ParseExpression());
      TF_RETURN_IF_ERROR(ExpectOp(":"));
      TF_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
      dict->args.push_back(std::move(key));
      dict->args.push_back(std::move(value));
      if (!IsOp(",")) break;
      Take();
    }
    TF_RETURN_IF_ERROR(ExpectOp("}"));
    return dict;
  }

  Result<ExprPtr> ParsePostfix(ExprPtr e) {
    while (true) {
      if (IsOp(".")) {
        Token at = Take();
        auto get = MakeExpr(Expr::Kind::kGetAttr, at);
        if (Peek().kind == K::kInt) {  // foo.0 is foo[0]
          get->kind = Expr::Kind::kGetItem;
          get->args.push_back(std::move(e));
          TF_ASSIGN_OR_RETURN(ExprPtr index, ParsePrimary());
          get->args.push_back(std::move(index));
        } else {
          TF_ASSIGN_OR_RETURN(get->name, ExpectName());
          get->args.push_back(std::move(e));
        }
        e = std::move(get);
      } else if (IsOp("[")) {
        Token at = Take();
        TF_ASSIGN_OR_RETURN(e, ParseSubscript(std::move(e), at));
      } else if (IsOp("(")) {
        Token at = Take();
        auto call = MakeExpr(Expr::Kind::kCall, at);
        call->args.push_back(std::move(e));
        TF_RETURN_IF_ERROR(ParseCallArgs(call.get()));
        e = std::move(call);
      } else {
        return e;
      }
    }
  }

  Result<ExprPtr> ParseSubscript(ExprPtr object, const Token& at) {
    ExprPtr bounds[3];
    int part = 0;
    bool slice = false;
    while (!IsOp("]")) {
      if (IsOp(":")) {
        Take();
        slice = true;
        if (++part > 2) return Unexpected("']'");
        continue;
      }
      if (bounds[part]) return Unexpected("':' or ']'");
      TF_ASSIGN_OR_RETURN(bounds[part], ParseExpression());
    }
    Take();
    if (!slice) {
      if (!bounds[0]) return SyntaxError(at.line, at.column, "empty subscript");
      auto get = MakeExpr(Expr::Kind::kGetItem, at);
      get->args.push_back(std::move(object));
      get->args.push_back(std::move(bounds[0]));
      return get;
    }
    auto s = MakeExpr(Expr::Kind::kSlice, at);
    s->args.push_back(std::move(object));
    for (auto& b : bounds) s->args.push_back(std::move(b));
    return s;
  }

  // After '(': positional and name=value arguments up to ')'.
  Status ParseCallArgs(Expr* call) {
    while (!IsOp(")")) {
      if (Peek().kind == K::kName && IsOp("=", 1)) {
        std::string name = Take().text;
        Take();
        TF_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
        call->kwargs.emplace_back(std::move(name), std::move(value));
      } else {
        if (!call->kwargs.empty()) {
          return SyntaxError(Peek().line, Peek().column,
                             "positional argument after a keyword argument");
        }
        TF_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
        call->args.push_back(std::move(value));
      }
      if (!IsOp(",")) break;
      Take();
    }
    return ExpectOp(")");
  }

  Result<ExprPtr> ParseFilters(ExprPtr e) {
    while (true) {
      if (IsOp("|")) {
        Token at = Take();
        auto filter = MakeExpr(Expr::Kind::kFilter, at);
        TF_ASSIGN_OR_RETURN(filter->name, ExpectName());
        filter->args.push_back(std::move(e));
        if (IsOp("(")) {
          Take();
          TF_RETURN_IF_ERROR(ParseCallArgs(filter.get()));
        }
        e = std::move(filter);
      } else if (IsName("is")) {
        Token at = Take();
        auto test = MakeExpr(Expr::Kind::kTest, at);
        if (IsName("not")) {
          Take();
          test->negated = true;
        }
        TF_ASSIGN_OR_RETURN(test->name, ExpectName());
        test->args.push_back(std::move(e));
        if (IsOp("(")) {
          Take();
          TF_RETURN_IF_ERROR(ParseCallArgs(test.get()));
        } else if (StartsTestArgument()) {
          TF_ASSIGN_OR_RETURN(ExprPtr arg, ParsePrimary());
          TF_ASSIGN_OR_RETURN(arg, ParsePostfix(std::move(arg)));
          test->args.push_back(std::move(arg));
        }
        e = std::move(test);
      } else {
        return e;
      }
    }
  }

  // `x is divisibleby 3`: a test may take one argument without parentheses.
  bool StartsTestArgument() const {
    const Token& t = Peek();
    if (t.kind == K::kString || t.kind == K::kInt || t.kind == K::kFloat) return true;
    if (t.kind == K::kOp) return t.text == "[" || t.text == "{";
    if (t.kind != K::kName) return false;
    static const std::set<std::string> kNotArgument = {"else", "or",  "and", "if",
                                                       "in",   "not", "is"};
    return kNotArgument.count(t.text) == 0;
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;  // for loops around the statement being parsed
};

}  // namespace

Result<std::shared_ptr<const Template>> ParseTemplate(std::string_view source) {
  TF_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(source));
  return Parser(std::move(tokens)).Run();
}

}  // namespace tf::engine::jinja
