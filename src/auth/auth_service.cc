#include "auth/auth_service.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/crypto.h"
#include "base/log.h"

namespace tf::auth {
namespace {

constexpr std::string_view kTokenPrefix = "tfk_";

Status ValidateProjectName(const std::string& name) {
  if (name.empty() || name.size() > 63) {
    return InvalidArgument("project name must be 1 to 63 characters, got " +
                           std::to_string(name.size()));
  }
  if (name[0] < 'a' || name[0] > 'z') {
    return InvalidArgument("project name '" + name + "' must start with a lowercase letter");
  }
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
      return InvalidArgument("project name '" + name + "' may hold only a-z, 0-9 and '-'");
    }
  }
  return OkStatus();
}

}  // namespace

Result<Principal> AuthService::Authenticate(std::string_view secret) {
  if (secret.empty()) {
    return Unauthenticated("no API token: send 'Authorization: Bearer <token>'");
  }
  if (secret.substr(0, kTokenPrefix.size()) != kTokenPrefix || secret.size() != 44) {
    return Unauthenticated("the API token is malformed: tensorfleet tokens start with 'tfk_'");
  }
  std::string hash = Sha256Hex(secret);
  TimeMs now = clock_.Now();
  if (auto cached = FromCache(hash, now)) return std::move(*cached);
  auto token = store_.FindTokenByHash(hash);
  if (!token.ok()) {
    if (token.status().code() == StatusCode::kNotFound) {
      return Unauthenticated("the API token is not valid");
    }
    return token.status();
  }
  if (token->revoked_at) return Unauthenticated("the API token " + token->id + " was revoked");
  TF_ASSIGN_OR_RETURN(store::Project project, store_.GetProject(token->project_id));
  Principal principal{project.id, project.name, token->id, token->admin};
  MutexLock lock(mu_);
  if (cache_.size() > 10'000) cache_.clear();  // bounded: a flood of tokens cannot grow it
  cache_[hash] = Cached{principal, now};
  return principal;
}

std::optional<Principal> AuthService::CachedPrincipal(std::string_view secret) {
  if (secret.size() != 44 || secret.substr(0, kTokenPrefix.size()) != kTokenPrefix) {
    return std::nullopt;
  }
  return FromCache(Sha256Hex(secret), clock_.Now());
}

std::optional<Principal> AuthService::FromCache(const std::string& hash, TimeMs now) {
  MutexLock lock(mu_);
  auto it = cache_.find(hash);
  if (it == cache_.end() || now - it->second.checked_at >= kPrincipalCacheMs) return std::nullopt;
  return it->second.principal;
}

Result<store::Project> AuthService::CreateProject(const std::string& name) {
  TF_RETURN_IF_ERROR(ValidateProjectName(name));
  store::Project p{"prj_" + RandomHex(8), name, clock_.Now()};
  TF_RETURN_IF_ERROR(store_.CreateProject(p));
  return p;
}

Result<store::Project> AuthService::GetProjectByName(const std::string& name) {
  return store_.GetProjectByName(name);
}

Result<std::vector<store::Project>> AuthService::ListProjects() { return store_.ListProjects(); }

Result<IssuedToken> AuthService::CreateToken(const std::string& project_id, const std::string& name,
                                             bool admin) {
  if (name.empty() || name.size() > 128) {
    return InvalidArgument("token name must be 1 to 128 characters");
  }
  IssuedToken out;
  out.secret = std::string(kTokenPrefix) + RandomHex(20);
  out.token.id = "tok_" + RandomHex(8);
  out.token.project_id = project_id;
  out.token.name = name;
  out.token.hash = Sha256Hex(out.secret);
  out.token.admin = admin;
  out.token.created_at = clock_.Now();
  TF_RETURN_IF_ERROR(store_.CreateToken(out.token));
  return out;
}

Result<std::vector<store::Token>> AuthService::ListTokens(const std::string& project_id) {
  return store_.ListTokens(project_id);
}

Status AuthService::RevokeToken(const std::string& token_id) {
  Status s = store_.RevokeToken(token_id, clock_.Now());
  MutexLock lock(mu_);
  std::erase_if(cache_,
                [&](const auto& entry) { return entry.second.principal.token_id == token_id; });
  return s;
}

Status AuthService::Bootstrap(const std::filesystem::path& token_file) {
  TF_ASSIGN_OR_RETURN(auto tokens, store_.ListTokens(""));
  bool have_admin = false;
  for (const auto& t : tokens) have_admin = have_admin || (t.admin && !t.revoked_at);
  std::error_code ec;
  if (have_admin && std::filesystem::exists(token_file, ec)) return OkStatus();

  auto project = store_.GetProjectByName("default");
  if (!project.ok()) {
    if (project.status().code() != StatusCode::kNotFound) return project.status();
    TF_ASSIGN_OR_RETURN(store::Project created, CreateProject("default"));
    project = created;
  }
  TF_ASSIGN_OR_RETURN(IssuedToken issued, CreateToken(project->id, "admin", /*admin=*/true));
  TF_RETURN_IF_ERROR(WriteSecretFile(token_file, issued.secret + "\n"));
  spdlog::info("created admin token {} for project 'default'; secret saved to {}", issued.token.id,
               token_file.string());
  return OkStatus();
}

Status WriteSecretFile(const std::filesystem::path& path, const std::string& contents) {
  std::string tmp = path.string() + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Unavailable("cannot write " + tmp + ": " + std::strerror(errno));
  }
  ::fchmod(fd, 0600);
  bool ok =
      ::write(fd, contents.data(), contents.size()) == static_cast<ssize_t>(contents.size()) &&
      ::fsync(fd) == 0;
  int err = errno;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    if (ok) err = errno;
    ::unlink(tmp.c_str());
    return Unavailable("cannot write " + path.string() + ": " + std::strerror(err));
  }
  return OkStatus();
}

}  // namespace tf::auth
