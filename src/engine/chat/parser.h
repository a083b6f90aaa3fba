// Parses a chat template's tokens into statements and expressions, with jinja2's operator
// precedence (lowest first): `x if c else y`, or, and, not, comparisons and `in`, + -, ~,
// * / // %, **, unary - +, then postfix (.attr, [item], [a:b:c], calls), filters and tests.
#pragma once

#include <memory>
#include <string_view>

#include "base/status.h"
#include "engine/chat/ast.h"

namespace tf::engine::jinja {

// The parsed template; InvalidArgument "chat template line L, column C: ..." when it does not
// parse (an unknown tag, an unclosed block, an unexpected token, nesting deeper than 200).
Result<std::shared_ptr<const Template>> ParseTemplate(std::string_view source);

}  // namespace tf::engine::jinja
