// Which project a request about a project's own credentials (API tokens, S3 access keys) acts
// on: the token's own, or for an admin one named in the request, or every project.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "auth/auth_service.h"
#include "base/status.h"
#include "store/records.h"

namespace tf::api {

// The token's own project when `name` is empty or its own; for an admin, the project `name`.
// kPermissionDenied when a project token names another project; kNotFound naming the project
// when there is none of that name.
Result<store::Project> TargetProject(auth::AuthService& auth, const auth::Principal& who,
                                     const std::string& name);

// What a listing covers, read from its query: ?all=true (every project, admins only) or
// ?project=NAME (TargetProject), and the name of every project by id, for the answer.
struct ListingScope {
  std::string project_id;                    // "" = every project
  std::map<std::string, std::string> names;  // project id -> name
};
// kPermissionDenied for ?all from a project token, saying it may not list every project's
// `what` ("tokens", "access keys"); TargetProject's errors otherwise.
Result<ListingScope> ListingScopeOf(auth::AuthService& auth, const auth::Principal& who,
                                    const std::map<std::string, std::string>& query,
                                    std::string_view what);

}  // namespace tf::api
