#include "jobs/yaml_document.h"

#include <yaml-cpp/eventhandler.h>

#include <sstream>
#include <string>

namespace tf::jobs {
namespace {

// The most documents looked at: "---" separators beyond this are refused, and a parser stuck
// on a token it cannot consume is stopped.
constexpr int kMaxDocuments = 1000;

// Notes where each document starts and whether it holds anything but a null.
class DocumentScan final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    start = mark;
    has_content = false;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { null_at = mark; }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { has_content = true; }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {
    has_content = true;
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    has_content = true;
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    has_content = true;
  }
  void OnMapEnd() override {}

  YAML::Mark start;
  YAML::Mark null_at = YAML::Mark::null_mark();
  bool has_content = false;
};

std::string Where(std::string_view source, const YAML::Mark& mark) {
  return std::string(source) + ":" + std::to_string(mark.line + 1) + ":" +
         std::to_string(mark.column + 1);
}

// A hint for the usual cause of a syntax error on `line` (0-based): tab indentation.
std::string Hint(std::string_view text, int line) {
  size_t start = 0;
  for (int i = 0; i < line && start != std::string_view::npos; ++i) {
    start = text.find('\n', start);
    if (start != std::string_view::npos) ++start;
  }
  if (start == std::string_view::npos) return "";
  std::string_view row = text.substr(start, text.find('\n', start) - start);
  std::string_view indent = row.substr(0, row.find_first_not_of(" \t"));
  return indent.find('\t') == std::string_view::npos ? "" : " (indent with spaces, not tabs)";
}

// Walks the documents after the first, bounded: each must be empty, and the parser must move
// on from one to the next.
Status CheckNoMoreDocuments(const std::string& text, std::string_view source) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentScan scan;
  YAML::Mark last_null = YAML::Mark::null_mark();
  for (int i = 0; i < kMaxDocuments; ++i) {
    scan.null_at = YAML::Mark::null_mark();
    if (!parser.HandleNextDocument(scan)) return OkStatus();
    if (scan.has_content && i > 0) {
      return InvalidArgument(std::string(source) + ":" + std::to_string(scan.start.line + 1) +
                             ": the spec must be one YAML document, found another");
    }
    if (!scan.has_content) {
      // An empty document where the last one was: a token the parser does not consume.
      bool stuck =
          !scan.null_at.is_null() && !last_null.is_null() && scan.null_at.pos == last_null.pos;
      if (stuck)
        return InvalidArgument(Where(source, scan.null_at) + ": invalid YAML: unexpected token");
      last_null = scan.null_at;
    }
  }
  return InvalidArgument(std::string(source) + ": invalid YAML: more than " +
                         std::to_string(kMaxDocuments) + " documents");
}

}  // namespace

Result<YAML::Node> LoadOneDocument(std::string_view text, std::string_view source) {
  std::string copy(text);
  try {
    YAML::Node first = YAML::Load(copy);
    TF_RETURN_IF_ERROR(CheckNoMoreDocuments(copy, source));
    return first;
  } catch (const YAML::ParserException& e) {
    return InvalidArgument(Where(source, e.mark) + ": invalid YAML: " + e.msg +
                           Hint(text, e.mark.line));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string(source) + ": invalid YAML: " + e.what());
  }
}

}  // namespace tf::jobs
