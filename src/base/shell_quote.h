// Words for a POSIX shell (/bin/sh -c, a script sent over ssh).
#pragma once

#include <string>
#include <string_view>

namespace tf {

// `text` as one word for /bin/sh: in single quotes, with any single quote written '\''.
std::string ShellQuote(std::string_view text);

}  // namespace tf
