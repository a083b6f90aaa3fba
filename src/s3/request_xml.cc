#include "s3/request_xml.h"

#include <charconv>

#include "s3/xml.h"

namespace tf::s3 {
namespace {

Result<XmlElement> ParseRoot(std::string_view body, std::string_view root) {
  TF_ASSIGN_OR_RETURN(XmlElement doc, ParseXml(body));
  if (doc.name != root) {
    return InvalidArgument("the body's root element is '" + doc.name + "', not '" +
                           std::string(root) + "'");
  }
  return doc;
}

}  // namespace

Result<std::string> ParseCreateBucketConfiguration(std::string_view body) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return std::string();
  TF_ASSIGN_OR_RETURN(XmlElement doc, ParseRoot(body, "CreateBucketConfiguration"));
  const XmlElement* location = doc.Child("LocationConstraint");
  return location ? location->text : std::string();
}

Result<DeleteRequest> ParseDeleteRequest(std::string_view body) {
  TF_ASSIGN_OR_RETURN(XmlElement doc, ParseRoot(body, "Delete"));
  DeleteRequest out;
  for (const XmlElement& child : doc.children) {
    if (child.name == "Quiet") {
      if (child.text != "true" && child.text != "false") {
        return InvalidArgument("Quiet must be true or false, not '" + child.text.substr(0, 32) +
                               "'");
      }
      out.quiet = child.text == "true";
    } else if (child.name == "Object") {
      const XmlElement* key = child.Child("Key");
      if (key == nullptr) return InvalidArgument("an Object has no Key");
      for (const XmlElement& field : child.children) {
        if (field.name != "Key" && field.name != "VersionId" && field.name != "ETag") {
          // LastModifiedTime and Size are conditions this server does not check: deleting
          // regardless of them would be worse than refusing.
          return InvalidArgument("an Object holds '" + field.name +
                                 "', which this server does not take (Key, VersionId, ETag)");
        }
      }
      DeleteTarget target{key->text, std::nullopt, std::nullopt};
      if (const XmlElement* version = child.Child("VersionId")) target.version_id = version->text;
      if (const XmlElement* etag = child.Child("ETag")) {
        std::string_view e = etag->text;
        if (e.size() >= 2 && e.front() == '"' && e.back() == '"') e = e.substr(1, e.size() - 2);
        if (e.empty()) return InvalidArgument("an Object's ETag is empty");
        target.etag = std::string(e);
      }
      out.objects.push_back(std::move(target));
    } else {
      return InvalidArgument("Delete holds an unknown element '" + child.name + "'");
    }
  }
  if (out.objects.empty()) return InvalidArgument("Delete names no Object");
  if (out.objects.size() > kMaxDeleteKeys) {
    return InvalidArgument("Delete names " + std::to_string(out.objects.size()) +
                           " objects; at most " + std::to_string(kMaxDeleteKeys) + " are allowed");
  }
  return out;
}

Result<AccessControlPolicy> ParseAccessControlPolicy(std::string_view body) {
  TF_ASSIGN_OR_RETURN(XmlElement doc, ParseRoot(body, "AccessControlPolicy"));
  AccessControlPolicy out;
  if (const XmlElement* owner = doc.Child("Owner")) {
    if (const XmlElement* id = owner->Child("ID")) out.owner_id = id->text;
  }
  const XmlElement* list = doc.Child("AccessControlList");
  if (list == nullptr) return InvalidArgument("AccessControlPolicy has no AccessControlList");
  for (const XmlElement& grant : list->children) {
    if (grant.name != "Grant") {
      return InvalidArgument("AccessControlList holds an unknown element '" + grant.name + "'");
    }
    const XmlElement* grantee = grant.Child("Grantee");
    const XmlElement* permission = grant.Child("Permission");
    if (grantee == nullptr || permission == nullptr) {
      return InvalidArgument("a Grant needs a Grantee and a Permission");
    }
    AclGrant g;
    if (const XmlElement* id = grantee->Child("ID")) g.id = id->text;
    if (const XmlElement* uri = grantee->Child("URI")) g.uri = uri->text;
    if (const XmlElement* email = grantee->Child("EmailAddress")) g.email = email->text;
    if (g.id.empty() + g.uri.empty() + g.email.empty() != 2) {
      return InvalidArgument("a Grantee is named by one of ID, URI and EmailAddress");
    }
    g.permission = permission->text;
    out.grants.push_back(std::move(g));
  }
  return out;
}

Result<std::vector<CompletedPart>> ParseCompleteMultipartUpload(std::string_view body) {
  TF_ASSIGN_OR_RETURN(XmlElement doc, ParseRoot(body, "CompleteMultipartUpload"));
  std::vector<CompletedPart> out;
  for (const XmlElement& child : doc.children) {
    if (child.name != "Part") {
      return InvalidArgument("CompleteMultipartUpload holds an unknown element '" + child.name +
                             "'");
    }
    const XmlElement* number = child.Child("PartNumber");
    const XmlElement* etag = child.Child("ETag");
    if (number == nullptr || etag == nullptr) {
      return InvalidArgument("a Part needs a PartNumber and an ETag");
    }
    CompletedPart part;
    const std::string& n = number->text;
    auto [end, err] = std::from_chars(n.data(), n.data() + n.size(), part.part_number);
    if (err != std::errc() || end != n.data() + n.size()) {
      return InvalidArgument("PartNumber '" + n.substr(0, 32) + "' is not a number");
    }
    part.etag = etag->text;
    if (part.etag.size() >= 2 && part.etag.front() == '"' && part.etag.back() == '"') {
      part.etag = part.etag.substr(1, part.etag.size() - 2);
    }
    for (const XmlElement& field : child.children) {
      if (field.name.rfind("Checksum", 0) == 0) part.checksums[field.name] = field.text;
    }
    out.push_back(std::move(part));
  }
  if (out.empty()) return InvalidArgument("CompleteMultipartUpload names no Part");
  return out;
}

}  // namespace tf::s3
