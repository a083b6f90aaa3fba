// Blobs in a bucket of an external S3-compatible service (`tensorfleet server --objects
// s3://BUCKET/PREFIX?endpoint=...`), so that several servers sharing one database also share
// the objects' content.
//
// Each blob is one object, PREFIX + "blobs/ab/<id>", holding the same bytes as a local blob file
// (blob_format.h: content, block CRCs, footer), so reads are checked block by block exactly as
// on local disk. A writer spools the blob to a local file (SPOOL/tmp/<id>) and sends it with one
// signed PUT when sealed: S3 makes an object visible whole or not at all, so a crash leaves no
// partial blob there and at most a spool file here, which RemoveUnsealed deletes. A blob sealed
// in S3 whose metadata never committed is a pending blob of this owner (the owner id lives in
// SPOOL/owner) and is removed by the object service's recovery, as on local disk.
//
// Limits: one PUT per blob, so a blob is at most what the service takes in one PUT (5 GiB on
// AWS); the content passes through the local disk once on the way.
#pragma once

#include <filesystem>
#include <memory>

#include "base/clock.h"
#include "base/status.h"
#include "objects/blob_store.h"
#include "s3/request_signer.h"

namespace tf::objects {

// Checks that the bucket answers (kNotFound, kPermissionDenied or kUnavailable naming the
// endpoint and bucket otherwise) and opens the store. `spool` is created if missing.
Result<std::unique_ptr<objects::BlobStore>> OpenS3BlobStore(const s3::BucketLocation& location,
                                                            const std::filesystem::path& spool,
                                                            const Clock& clock);

}  // namespace tf::objects
