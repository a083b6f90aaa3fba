// Splits a template into text and the tokens inside its tags, applying jinja2's whitespace
// rules as transformers configures them: `-` strips all whitespace on that side, trim_blocks
// drops the first newline after a block or comment tag, lstrip_blocks drops the whitespace
// before one on its own line (unless it starts with `+`); newlines become "\n" and one trailing
// newline at the end of the template is dropped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tf::engine::jinja {

struct Token {
  enum class Kind {
    kText,
    kVarBegin,    // {{
    kVarEnd,      // }}
    kBlockBegin,  // {%
    kBlockEnd,    // %}
    kName,
    kString,  // text: the decoded value
    kInt,
    kFloat,
    kOp,  // text: the operator
    kEof,
  };
  Kind kind;
  std::string text;
  int line = 0;
  int column = 0;
};

// The tokens of `source`, ending with kEof; InvalidArgument with line and column for an
// unterminated tag, comment or string, or a character that starts no token.
Result<std::vector<Token>> Tokenize(std::string_view source);

// "chat template line L, column C: message"
Status SyntaxError(int line, int column, const std::string& message);

}  // namespace tf::engine::jinja
