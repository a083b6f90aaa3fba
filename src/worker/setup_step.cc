#include "worker/setup_step.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/crypto.h"
#include "base/shell_quote.h"

namespace tf::worker {

namespace fs = std::filesystem;

namespace {

constexpr const char* kDoneFile = ".tensorfleet-setup-done";

fs::path VenvDir(const fs::path& setup_dir) { return setup_dir / "venv"; }

}  // namespace

std::vector<std::string> SetupCommands(const jobs::JobSpec& spec) {
  std::vector<std::string> out;
  const jobs::PythonSettings& python = spec.python;
  if (python.venv) {
    // The system's packages stay visible (torch, numpy from the OS), and pip is the system's:
    // the venv needs neither ensurepip nor a network.
    out.push_back(
        "python3 -m venv --system-site-packages --without-pip \"$TENSORFLEET_SETUP_DIR/venv\"");
    if (!python.requirements.empty()) {
      std::string install =
          "python -m pip install --no-index --no-cache-dir --disable-pip-version-check "
          "--no-input";
      if (!python.wheels.empty()) install += " --find-links " + ShellQuote(python.wheels);
      out.push_back(install + " -r " + ShellQuote(python.requirements));
    }
  }
  out.insert(out.end(), spec.setup.begin(), spec.setup.end());
  return out;
}

std::string SetupKey(const std::string& code_key, const std::vector<std::string>& commands) {
  std::string text = code_key;
  for (const std::string& c : commands) text += '\0' + c;
  return Sha256Hex(text);
}

fs::path SetupDir(const fs::path& attempts_dir, const std::string& job_id) {
  return attempts_dir / (job_id + "-setup");
}

void AddSetupEnvironment(const jobs::JobSpec& spec, const fs::path& dir,
                         std::map<std::string, std::string>& env) {
  env["TENSORFLEET_SETUP_DIR"] = dir.string();
  if (!spec.python.venv) return;
  const fs::path venv = VenvDir(dir);
  env["VIRTUAL_ENV"] = venv.string();
  auto path = env.find("PATH");
  env["PATH"] = (venv / "bin").string() +
                (path == env.end() || path->second.empty() ? "" : ":" + path->second);
}

bool SetupDone(const fs::path& dir, const std::string& key) {
  std::ifstream in(dir / kDoneFile);
  std::string kept;
  return in && std::getline(in, kept) && kept == key;
}

Status MarkSetupDone(const fs::path& dir, const std::string& key) {
  std::ofstream out(dir / kDoneFile, std::ios::trunc);
  out << key << "\n";
  out.close();
  if (!out) return Unavailable("cannot write " + (dir / kDoneFile).string());
  return OkStatus();
}

Result<SetupLock> SetupLock::Take(const fs::path& dir) {
  const fs::path path = dir.string() + ".lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable("cannot open " + path.string() + ": " + std::strerror(errno));
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    Status s = Unavailable("cannot lock " + path.string() + ": " + std::strerror(errno));
    ::close(fd);
    return s;
  }
  return SetupLock(fd);
}

SetupLock::~SetupLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace tf::worker
