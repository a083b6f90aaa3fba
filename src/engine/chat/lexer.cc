#include "engine/chat/lexer.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "engine/chat/strings.h"
#include "engine/tokenizers/unicode.h"

namespace tf::engine::jinja {

Status SyntaxError(int line, int column, const std::string& message) {
  return InvalidArgument("chat template line " + std::to_string(line) + ", column " +
                         std::to_string(column) + ": " + message);
}

namespace {

// "\r\n" and "\r" become "\n"; one trailing newline goes (jinja2's keep_trailing_newline off).
std::string NormalizeNewlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Whether s is all whitespace as Python's re \s sees it (jinja2's lstrip_blocks test).
bool AllSpace(std::string_view s) {
  for (char32_t c : CodePoints(s)) {
    if (!IsPySpace(c)) return false;
  }
  return true;
}

class Lexer {
 public:
  explicit Lexer(std::string src) : src_(std::move(src)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  Result<std::vector<Token>> Run() {
    bool line_starting = true;
    while (pos_ < src_.size()) {
      size_t start = FindTagStart(pos_);
      std::string text = src_.substr(pos_, start - pos_);
      if (start == src_.size()) {
        Emit(Token::Kind::kText, std::move(text), pos_);
        pos_ = start;
        break;
      }
      char type = src_[start + 1];  // '{', '%' or '#'
      char modifier = start + 2 < src_.size() ? src_[start + 2] : '\0';
      if (modifier == '-') {
        text = PyStrip(text, std::nullopt, false, true);
      } else if (modifier != '+' && type != '{') {
        // lstrip_blocks: whitespace alone before the tag on its line.
        size_t line_begin = text.rfind('\n');
        line_begin = line_begin == std::string::npos ? 0 : line_begin + 1;
        if ((line_begin > 0 || line_starting) &&
            AllSpace(std::string_view(text).substr(line_begin))) {
          text.resize(line_begin);
        }
      }
      Emit(Token::Kind::kText, std::move(text), pos_);
      pos_ = start + 2 + (modifier == '-' || modifier == '+' ? 1 : 0);
      if (type == '#') {
        TF_RETURN_IF_ERROR(Comment(start));
      } else {
        TF_RETURN_IF_ERROR(Tag(type == '{', start));
      }
      line_starting = pos_ > 0 && src_[pos_ - 1] == '\n';
    }
    tokens_.push_back({Token::Kind::kEof, "", Line(src_.size()), Column(src_.size())});
    return std::move(tokens_);
  }

 private:
  size_t FindTagStart(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i) {
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) {
        return i;
      }
    }
    return src_.size();
  }

  int Line(size_t offset) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    return static_cast<int>(it - line_starts_.begin());
  }
  int Column(size_t offset) const {
    return static_cast<int>(offset - line_starts_[Line(offset) - 1]) + 1;
  }

  void Emit(Token::Kind kind, std::string text, size_t offset) {
    if (kind == Token::Kind::kText && text.empty()) return;
    int line = Line(offset);
    tokens_.push_back({kind, std::move(text), line, Column(offset)});
  }

  // After the end of a block or comment tag: `-` eats all whitespace, `+` nothing, otherwise
  // trim_blocks eats one newline.
  void AfterBlockEnd(char modifier) {
    if (modifier == '-') {
      while (pos_ < src_.size()) {
        size_t n = Utf8SequenceLength(std::string_view(src_).substr(pos_));
        if (n == 0) break;
        std::vector<char32_t> cp = CodePoints(std::string_view(src_).substr(pos_, n));
        if (cp.empty() || !IsPySpace(cp[0])) break;
        pos_ += n;
      }
    } else if (modifier != '+' && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
    }
  }

  Status Comment(size_t start) {
    size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) {
      return SyntaxError(Line(start), Column(start), "comment is not closed with '#}'");
    }
    char modifier = end > pos_ ? src_[end - 1] : '\0';
    pos_ = end + 2;
    AfterBlockEnd(modifier);
    return OkStatus();
  }

  Status Tag(bool variable, size_t start) {
    Emit(variable ? Token::Kind::kVarBegin : Token::Kind::kBlockBegin, "", start);
    int depth = 0;  // open brackets: a '}}' inside a dict literal does not end the tag
    while (true) {
      while (pos_ < src_.size() && std::isspace(static_cast<unsigned char>(src_[pos_]))) ++pos_;
      if (pos_ >= src_.size()) {
        return SyntaxError(
            Line(start), Column(start),
            std::string("tag is not closed with '") + (variable ? "}}" : "%}") + "'");
      }
      const char* close = variable ? "}}" : "%}";
      if (depth == 0) {
        for (char modifier : {'-', '+', '\0'}) {
          size_t at = pos_ + (modifier ? 1 : 0);
          if (modifier && (pos_ >= src_.size() || src_[pos_] != modifier)) continue;
          if (src_.compare(at, 2, close) == 0) {
            Emit(variable ? Token::Kind::kVarEnd : Token::Kind::kBlockEnd, "", pos_);
            pos_ = at + 2;
            if (variable) {
              if (modifier == '-') AfterBlockEnd('-');
            } else {
              AfterBlockEnd(modifier);
            }
            return OkStatus();
          }
        }
      }
      TF_RETURN_IF_ERROR(Next(&depth));
    }
  }

  Status Next(int* depth) {
    size_t at = pos_;
    char c = src_[pos_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (pos_ < src_.size() &&
             (std::isalnum(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) {
        ++pos_;
      }
      Emit(Token::Kind::kName, src_.substr(at, pos_ - at), at);
      return OkStatus();
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return Number(at);
    if (c == '\'' || c == '"') return String(at);
    static const char* kTwo[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const char* op : kTwo) {
      if (src_.compare(pos_, 2, op) == 0) {
        pos_ += 2;
        Emit(Token::Kind::kOp, op, at);
        return OkStatus();
      }
    }
    if (std::strchr("+-*/%~<>()[]{},.:|=", c) != nullptr && c != '\0') {
      if (c == '(' || c == '[' || c == '{') ++*depth;
      if ((c == ')' || c == ']' || c == '}') && *depth > 0) --*depth;
      ++pos_;
      Emit(Token::Kind::kOp, std::string(1, c), at);
      return OkStatus();
    }
    return SyntaxError(Line(at), Column(at),
                       "unexpected character '" + std::string(1, c) + "' in a tag");
  }

  Status Number(size_t at) {
    auto digits = [&] {
      while (pos_ < src_.size() &&
             (std::isdigit(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) {
        ++pos_;
      }
    };
    digits();
    bool is_float = false;
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' &&
        std::isdigit(static_cast<unsigned char>(src_[pos_ + 1]))) {
      is_float = true;
      ++pos_;
      digits();
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t e = pos_ + 1;
      if (e < src_.size() && (src_[e] == '+' || src_[e] == '-')) ++e;
      if (e < src_.size() && std::isdigit(static_cast<unsigned char>(src_[e]))) {
        is_float = true;
        pos_ = e;
        digits();
      }
    }
    std::string text;
    for (size_t i = at; i < pos_; ++i) {
      if (src_[i] != '_') text += src_[i];
    }
    Emit(is_float ? Token::Kind::kFloat : Token::Kind::kInt, text, at);
    return OkStatus();
  }

  // A quoted string, with Python's escapes decoded.
  Status String(size_t at) {
    char quote = src_[pos_++];
    std::string value;
    while (true) {
      if (pos_ >= src_.size()) {
        return SyntaxError(Line(at), Column(at), "string is not closed");
      }
      char c = src_[pos_++];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (pos_ >= src_.size()) return SyntaxError(Line(at), Column(at), "string is not closed");
      char e = src_[pos_++];
      switch (e) {
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case 'r':
          value += '\r';
          break;
        case '\\':
          value += '\\';
          break;
        case '\'':
          value += '\'';
          break;
        case '"':
          value += '"';
          break;
        case 'a':
          value += '\a';
          break;
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case 'v':
          value += '\v';
          break;
        case '0':
          value += '\0';
          break;
        case '\n':
          break;
        case 'x':
        case 'u':
        case 'U': {
          int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (pos_ + n > src_.size()) {
            return SyntaxError(Line(at), Column(at),
                               "truncated \\" + std::string(1, e) + " escape in a string");
          }
          char32_t cp = 0;
          for (int i = 0; i < n; ++i) {
            char h = src_[pos_ + i];
            if (!std::isxdigit(static_cast<unsigned char>(h))) {
              return SyntaxError(Line(at), Column(at),
                                 "bad \\" + std::string(1, e) + " escape in a string");
            }
            cp = cp * 16 + (std::isdigit(static_cast<unsigned char>(h))
                                ? h - '0'
                                : std::tolower(static_cast<unsigned char>(h)) - 'a' + 10);
          }
          pos_ += n;
          if (cp > 0x10ffff) return SyntaxError(Line(at), Column(at), "escape past U+10FFFF");
          AppendUtf8(cp, &value);
          break;
        }
        default:
          value += '\\';
          value += e;
      }
    }
    Emit(Token::Kind::kString, std::move(value), at);
    return OkStatus();
  }

  std::string src_;
  size_t pos_ = 0;
  std::vector<Token> tokens_;
  std::vector<size_t> line_starts_;  // the offset where each line begins
};

}  // namespace

Result<std::vector<Token>> Tokenize(std::string_view source) {
  return Lexer(NormalizeNewlines(source)).Run();
}

}  // namespace tf::engine::jinja
