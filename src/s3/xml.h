// The little XML that S3 speaks: a writer for response documents and a strict parser for the
// few request bodies S3 has (request_xml.h reads them). No Asio here: the fuzzer links this file.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace tf::s3 {

inline constexpr std::string_view kS3Namespace = "http://s3.amazonaws.com/doc/2006-03-01/";

// Builds a document element by element. Text is escaped; bytes that are not valid UTF-8 and
// characters XML 1.0 cannot carry at all (control characters but tab, newline and carriage
// return) become U+FFFD, so that every document parses. (S3 writes the latter as character
// references, which XML parsers refuse.) A listing of keys that hold such characters is exact
// only with encoding-type=url, which boto3 and the AWS CLI ask for.
class XmlWriter {
 public:
  XmlWriter();  // starts with the XML declaration
  // <name> or <name xmlns="...">; every Open needs a Close.
  void Open(std::string_view name, std::string_view xmlns = {});
  // <name a="v" ...>, the values escaped; every Open needs a Close.
  void Open(std::string_view name,
            std::initializer_list<std::pair<std::string_view, std::string_view>> attributes);
  void Close();
  // <name>text</name>
  void Element(std::string_view name, std::string_view text);
  // The document, with whatever is still open closed.
  std::string Finish();

 private:
  std::string out_;
  std::vector<std::string> open_;
};

// `text` escaped for XML character data or an attribute value.
std::string XmlEscape(std::string_view text);

// An element of a parsed document. Names lose any namespace prefix ("s3:Key" -> "Key").
struct XmlElement {
  std::string name;
  std::string text;  // the element's own character data, references decoded
  std::vector<XmlElement> children;

  // The first child called `name`; null if none.
  const XmlElement* Child(std::string_view name) const;
};

// Limits that keep a hostile body from costing more than its size.
inline constexpr int kMaxXmlDepth = 16;
inline constexpr size_t kMaxXmlElements = 100'000;

// Parses a whole document: an optional XML declaration, comments and whitespace around one
// root element. Strict: no DOCTYPE, no processing instructions, no CDATA, no entities other
// than XML's five and character references, no text beside child elements but whitespace,
// valid UTF-8 only. kInvalidArgument saying what is wrong and at which byte.
Result<XmlElement> ParseXml(std::string_view document);

}  // namespace tf::s3
