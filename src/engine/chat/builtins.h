// What a chat template can do with values beyond operators: attribute and item access, slices,
// iteration, the filters and tests of jinja2 that templates use, and the methods of str and
// dict (.strip(), .startswith(), .split(), .get(), .items(), ...).
//
// Errors are plain messages ("unknown filter 'foo'"); the renderer adds where in the template.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "engine/chat/value.h"

namespace tf::engine::jinja {

// The most items a list built by a template (range, repetition, a filter) may hold, and the
// longest string it may build: a bound on what a hostile template can make us allocate.
constexpr size_t kMaxItems = 1 << 17;
constexpr size_t kMaxStringBytes = 16u << 20;

// obj.name as jinja2 resolves it: a method of str or dict first, then a dict's key or a
// namespace's attribute; an undefined value (carrying jinja2's message) when there is none.
// Asking an undefined value is an error.
Result<Value> GetAttr(const Value& obj, const std::string& name);
// obj[key]: list and string indexes (negative from the end), dict keys; undefined when absent.
Result<Value> GetItem(const Value& obj, const Value& key);
// obj[start:stop:step] on lists and strings; null bounds are Python's defaults.
Result<Value> Slice(const Value& obj, const Value* start, const Value* stop, const Value* step);
// The items `for` walks: a list's items, a dict's keys, a string's characters, nothing for
// undefined.
Result<List> Iterate(const Value& v);
// `item in container`.
Result<bool> Contains(const Value& container, const Value& item);

Result<Value> CallFilter(const std::string& name, const Value& input, std::vector<Value>& args,
                         Kwargs& kwargs);
Result<bool> CallTest(const std::string& name, const Value& input, std::vector<Value>& args);

}  // namespace tf::engine::jinja
