// Runs a parsed chat template: statements in order, variables in scopes as jinja2 keeps them
// (a for loop's body and a macro call have their own; if does not), output appended to one
// string.
#pragma once

#include <string>

#include "base/status.h"
#include "engine/chat/ast.h"

namespace tf::engine::jinja {

// What a template's run may use at most: loop iterations, nested macro calls, nested
// statements and expressions being evaluated at once (the stack), bytes of output.
struct RenderLimits {
  size_t max_iterations = 10'000'000;
  int max_call_depth = 64;
  int max_nesting = 250;
  size_t max_output_bytes = 64u << 20;
};

// Renders `tmpl` with `globals` (variables and functions by name). Errors: InvalidArgument
// "chat template line L, column C: ..." for a failed operation; a function whose error is
// marked raised (see RaisedError) returns its message unchanged.
Result<std::string> RenderTemplate(const Template& tmpl, const Dict& globals,
                                   const RenderLimits& limits = {});

// An error that a template raised on purpose (raise_exception): rendering stops and returns it
// as is, without the position prefix.
Status RaisedError(const std::string& message);

}  // namespace tf::engine::jinja
