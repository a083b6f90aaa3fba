// The parsed form of a chat template: expressions and statements, each with where it starts in
// the source (for error messages).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/chat/value.h"

namespace tf::engine::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    kLiteral,  // literal
    kName,     // name
    kList,     // args: the items
    kTuple,    // args: the items
    kDict,     // args: key, value, key, value, ...
    kGetAttr,  // args[0].name
    kGetItem,  // args[0][args[1]]
    kSlice,    // args[0][args[1]:args[2]:args[3]], each bound may be null
    kCall,     // args[0](args[1..], kwargs)
    kFilter,   // args[0] | name(args[1..], kwargs)
    kTest,     // args[0] is [not] name(args[1..])
    kUnary,    // name ("-", "+") args[0]
    kBinary,   // args[0] name args[1]: + - * / // % ** ~
    kCompare,  // args[0] name args[1]: == != < <= > >= in "not in"
    kAnd,
    kOr,
    kNot,
    kCond,  // args[0] if args[1] else args[2] (args[2] may be null)
  };
  Kind kind;
  int line = 0;
  int column = 0;
  std::string name;
  Value literal;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  bool negated = false;  // `is not`
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct Node {
  enum class Kind {
    kText,    // text
    kOutput,  // {{ expr }}
    kIf,      // branches (condition, body); else_body
    kFor,     // for targets in expr [if condition]: body; else_body
    kSet,     // set targets = expr, or set target.attr = expr, or {% set x %}body{% endset %}
    kMacro,   // macro name(params) body
    kBreak,
    kContinue,
    kBlock,  // a body with no effect of its own ({% generation %})
  };
  Kind kind;
  int line = 0;
  int column = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr condition;
  std::vector<std::string> targets;
  std::string attr;  // set ns.attr: targets[0] is ns, attr is attr
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body;
  Body else_body;
  std::vector<std::pair<std::string, ExprPtr>> params;  // macro parameters and defaults
};

struct Template {
  Body body;
};

}  // namespace tf::engine::jinja
