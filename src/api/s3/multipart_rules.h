// S3's rules for completing a multipart upload, as pure functions: which parts a
// CompleteMultipartUpload may name, and the ETag of the object it makes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "objects/multipart.h"
#include "s3/errors.h"
#include "s3/request_xml.h"

namespace tf::api {

// Checks the parts a CompleteMultipartUpload names against those uploaded, in this order:
// InvalidArgument for a number outside 1-10000; InvalidPartOrder unless the numbers ascend
// strictly; InvalidPart for a part not uploaded or with another ETag; EntityTooSmall for a part
// other than the last that is under 5 MiB. nullopt when the upload may complete.
std::optional<s3::Error> CheckCompletion(const std::vector<s3::CompletedPart>& requested,
                                         const std::vector<objects::PartInfo>& uploaded,
                                         const std::string& upload_id);

// S3's ETag for an object made of parts: the MD5 of the parts' binary MD5s, one after another,
// in hex, then "-" and the number of parts ("9b2cf535f27731c974343645a3985328-3").
std::string MultipartEtag(const std::vector<std::string>& part_md5_hex);

}  // namespace tf::api
