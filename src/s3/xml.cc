#include "s3/xml.h"

#include <algorithm>
#include <cstdint>

#include "base/utf8.h"

namespace tf::s3 {
namespace {

// Whether XML 1.0 allows the character in a document.
bool IsXmlChar(uint32_t cp) {
  return cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) ||
         (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool IsNameStart(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':' ||
         static_cast<unsigned char>(c) >= 0x80;
}

bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9') || c == '-' || c == '.'; }

class Parser {
 public:
  explicit Parser(std::string_view doc) : doc_(doc) {}

  Result<XmlElement> Document() {
    for (size_t i = 0; i < doc_.size();) {
      size_t len;
      const uint32_t cp = DecodeUtf8At(doc_.substr(i), &len);
      if (len == 0) return Fail(i, "not valid UTF-8");
      if (!IsXmlChar(cp)) return Fail(i, "a character XML does not allow");
      i += len;
    }
    SkipSpace();
    if (Starts("<?xml") && pos_ + 5 < doc_.size() && IsSpace(doc_[pos_ + 5])) {
      size_t end = doc_.find("?>", pos_);
      if (end == std::string_view::npos) return Fail(pos_, "an unterminated XML declaration");
      pos_ = end + 2;
    }
    TF_RETURN_IF_ERROR(SkipMisc());
    if (pos_ >= doc_.size()) return Fail(pos_, "no root element");
    XmlElement root;
    TF_RETURN_IF_ERROR(Element(1, &root));
    TF_RETURN_IF_ERROR(SkipMisc());
    if (pos_ != doc_.size()) return Fail(pos_, "content after the root element");
    return root;
  }

 private:
  Status Fail(size_t at, const std::string& what) const {
    return InvalidArgument("malformed XML at byte " + std::to_string(at) + ": " + what);
  }

  bool Starts(std::string_view s) const { return doc_.substr(pos_, s.size()) == s; }

  void SkipSpace() {
    while (pos_ < doc_.size() && IsSpace(doc_[pos_])) ++pos_;
  }

  // Whitespace and comments; anything else starting with "<!" or "<?" is refused.
  Status SkipMisc() {
    for (;;) {
      SkipSpace();
      if (Starts("<!--")) {
        size_t end = doc_.find("-->", pos_ + 4);
        if (end == std::string_view::npos) return Fail(pos_, "an unterminated comment");
        pos_ = end + 3;
      } else if (Starts("<!")) {
        return Fail(pos_, "DOCTYPE, CDATA and other declarations are not accepted");
      } else if (Starts("<?")) {
        return Fail(pos_, "processing instructions are not accepted");
      } else {
        return OkStatus();
      }
    }
  }

  Result<std::string> Name() {
    size_t start = pos_;
    if (pos_ >= doc_.size() || !IsNameStart(doc_[pos_])) return Fail(pos_, "a name was expected");
    while (pos_ < doc_.size() && IsNameChar(doc_[pos_])) ++pos_;
    return std::string(doc_.substr(start, pos_ - start));
  }

  static std::string LocalName(const std::string& name) {
    size_t colon = name.rfind(':');
    return colon == std::string::npos ? name : name.substr(colon + 1);
  }

  // Character data up to `stop` (exclusive), with references decoded, appended to *out.
  Status Text(size_t stop, std::string* out) {
    while (pos_ < stop) {
      char c = doc_[pos_];
      if (c == '<') return Fail(pos_, "'<' in text");
      if (c != '&') {
        out->push_back(c);
        ++pos_;
        continue;
      }
      // The longest reference ("&#x10FFFF;") is 10 bytes: look no further than that.
      size_t semi = doc_.substr(pos_, std::min<size_t>(stop - pos_, 12)).find(';');
      if (semi == std::string_view::npos) return Fail(pos_, "an unterminated reference");
      semi += pos_;
      std::string_view ref = doc_.substr(pos_ + 1, semi - pos_ - 1);
      if (ref == "amp") {
        out->push_back('&');
      } else if (ref == "lt") {
        out->push_back('<');
      } else if (ref == "gt") {
        out->push_back('>');
      } else if (ref == "quot") {
        out->push_back('"');
      } else if (ref == "apos") {
        out->push_back('\'');
      } else if (ref.size() >= 2 && ref[0] == '#') {
        bool hex = ref[1] == 'x';
        std::string_view digits = ref.substr(hex ? 2 : 1);
        if (digits.empty()) return Fail(pos_, "an empty character reference");
        uint32_t cp = 0;
        for (char d : digits) {
          int v = (d >= '0' && d <= '9')          ? d - '0'
                  : (hex && d >= 'a' && d <= 'f') ? d - 'a' + 10
                  : (hex && d >= 'A' && d <= 'F') ? d - 'A' + 10
                                                  : -1;
          if (v < 0) return Fail(pos_, "a malformed character reference");
          cp = cp * (hex ? 16 : 10) + static_cast<uint32_t>(v);
          if (cp > 0x10ffff) return Fail(pos_, "a character reference past U+10FFFF");
        }
        if (!IsXmlChar(cp)) return Fail(pos_, "a reference to a character XML does not allow");
        AppendUtf8(cp, out);
      } else {
        return Fail(pos_, "an unknown entity '&" + std::string(ref) + ";'");
      }
      pos_ = semi + 1;
    }
    return OkStatus();
  }

  Status Attributes(bool* empty_element) {
    for (;;) {
      size_t before = pos_;
      SkipSpace();
      if (pos_ >= doc_.size()) return Fail(pos_, "an unterminated start tag");
      if (Starts("/>")) {
        pos_ += 2;
        *empty_element = true;
        return OkStatus();
      }
      if (doc_[pos_] == '>') {
        ++pos_;
        *empty_element = false;
        return OkStatus();
      }
      if (pos_ == before) return Fail(pos_, "attributes must be separated by whitespace");
      TF_RETURN_IF_ERROR(Name().status());
      SkipSpace();
      if (pos_ >= doc_.size() || doc_[pos_] != '=') return Fail(pos_, "'=' was expected");
      ++pos_;
      SkipSpace();
      if (pos_ >= doc_.size() || (doc_[pos_] != '"' && doc_[pos_] != '\'')) {
        return Fail(pos_, "a quoted attribute value was expected");
      }
      char quote = doc_[pos_++];
      size_t end = doc_.find(quote, pos_);
      if (end == std::string_view::npos) return Fail(pos_, "an unterminated attribute value");
      std::string ignored;
      TF_RETURN_IF_ERROR(Text(end, &ignored));
      pos_ = end + 1;
    }
  }

  Status Element(int depth, XmlElement* out) {
    if (depth > kMaxXmlDepth) return Fail(pos_, "elements nested too deeply");
    if (++elements_ > kMaxXmlElements) return Fail(pos_, "too many elements");
    ++pos_;  // '<'
    TF_ASSIGN_OR_RETURN(std::string name, Name());
    out->name = LocalName(name);
    bool empty = false;
    TF_RETURN_IF_ERROR(Attributes(&empty));
    if (empty) return OkStatus();
    bool text_beside_children = false;
    for (;;) {
      if (pos_ >= doc_.size()) return Fail(pos_, "element '" + name + "' is not closed");
      if (Starts("</")) {
        pos_ += 2;
        TF_ASSIGN_OR_RETURN(std::string closing, Name());
        if (closing != name) {
          return Fail(pos_, "'" + closing + "' closes '" + name + "'");
        }
        SkipSpace();
        if (pos_ >= doc_.size() || doc_[pos_] != '>') return Fail(pos_, "'>' was expected");
        ++pos_;
        break;
      }
      if (Starts("<!--")) {
        size_t end = doc_.find("-->", pos_ + 4);
        if (end == std::string_view::npos) return Fail(pos_, "an unterminated comment");
        pos_ = end + 3;
      } else if (Starts("<!")) {
        return Fail(pos_, "CDATA and declarations are not accepted");
      } else if (Starts("<?")) {
        return Fail(pos_, "processing instructions are not accepted");
      } else if (doc_[pos_] == '<') {
        out->children.emplace_back();
        TF_RETURN_IF_ERROR(Element(depth + 1, &out->children.back()));
      } else {
        size_t stop = std::min(doc_.find('<', pos_), doc_.size());
        std::string piece;
        TF_RETURN_IF_ERROR(Text(stop, &piece));
        for (char c : piece) {
          if (!IsSpace(c)) text_beside_children = true;
        }
        out->text += piece;
      }
    }
    if (!out->children.empty()) {
      if (text_beside_children) {
        return Fail(pos_, "element '" + name + "' mixes text and elements");
      }
      out->text.clear();
    }
    return OkStatus();
  }

  std::string_view doc_;
  size_t pos_ = 0;
  size_t elements_ = 0;
};

}  // namespace

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t len;
    const uint32_t cp = DecodeUtf8At(text.substr(i), &len);
    if (len == 0) {  // not UTF-8: U+FFFD in its place
      out += "\xef\xbf\xbd";
      ++i;
      continue;
    }
    i += len;
    switch (cp) {
      case '&':
        out += "&amp;";
        continue;
      case '<':
        out += "&lt;";
        continue;
      case '>':
        out += "&gt;";
        continue;
      case '"':
        out += "&quot;";
        continue;
      case '\'':
        out += "&apos;";
        continue;
      case '\r':
        out += "&#13;";
        continue;  // kept through a parser's newline handling
      default:
        break;
    }
    if ((cp < 0x20 && cp != '\t' && cp != '\n') || cp == 0xfffe || cp == 0xffff) {
      out += "\xef\xbf\xbd";  // XML 1.0 cannot carry it at all, not even as a reference
    } else {
      out.append(text.substr(i - len, len));
    }
  }
  return out;
}

XmlWriter::XmlWriter() : out_("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n") {}

void XmlWriter::Open(std::string_view name, std::string_view xmlns) {
  using Attributes = std::initializer_list<std::pair<std::string_view, std::string_view>>;
  Open(name, xmlns.empty() ? Attributes{} : Attributes{{"xmlns", xmlns}});
}

void XmlWriter::Open(
    std::string_view name,
    std::initializer_list<std::pair<std::string_view, std::string_view>> attributes) {
  out_ += "<";
  out_ += name;
  for (const auto& [attribute, value] : attributes) {
    out_ += " ";
    out_ += attribute;
    out_ += "=\"" + XmlEscape(value) + "\"";
  }
  out_ += ">";
  open_.emplace_back(name);
}

void XmlWriter::Close() {
  out_ += "</" + open_.back() + ">";
  open_.pop_back();
}

void XmlWriter::Element(std::string_view name, std::string_view text) {
  out_ += "<";
  out_ += name;
  out_ += ">";
  out_ += XmlEscape(text);
  out_ += "</";
  out_ += name;
  out_ += ">";
}

std::string XmlWriter::Finish() {
  while (!open_.empty()) Close();
  return std::move(out_);
}

const XmlElement* XmlElement::Child(std::string_view child) const {
  for (const auto& c : children) {
    if (c.name == child) return &c;
  }
  return nullptr;
}

Result<XmlElement> ParseXml(std::string_view document) { return Parser(document).Document(); }

}  // namespace tf::s3
