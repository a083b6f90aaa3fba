#include "api/project_scope.h"

namespace tf::api {

Result<store::Project> TargetProject(auth::AuthService& auth, const auth::Principal& who,
                                     const std::string& name) {
  if (name.empty() || name == who.project_name) {
    return store::Project{who.project_id, who.project_name, 0};
  }
  if (!who.admin) return PermissionDenied("only an admin token may act on another project");
  auto project = auth.GetProjectByName(name);
  if (!project.ok() && project.status().code() == StatusCode::kNotFound) {
    return NotFound("project '" + name + "' does not exist");
  }
  return project;
}

Result<ListingScope> ListingScopeOf(auth::AuthService& auth, const auth::Principal& who,
                                    const std::map<std::string, std::string>& query,
                                    std::string_view what) {
  auto all_it = query.find("all");
  const bool all = all_it != query.end() && all_it->second != "false" && all_it->second != "0";
  if (all && !who.admin) {
    return PermissionDenied("only an admin token may list every project's " + std::string(what));
  }
  ListingScope scope;
  TF_ASSIGN_OR_RETURN(auto projects, auth.ListProjects());
  for (const auto& p : projects) scope.names[p.id] = p.name;
  if (!all) {
    auto project_it = query.find("project");
    TF_ASSIGN_OR_RETURN(
        auto target, TargetProject(auth, who, project_it == query.end() ? "" : project_it->second));
    scope.project_id = target.id;
  }
  return scope;
}

}  // namespace tf::api
