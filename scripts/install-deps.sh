#!/usr/bin/env bash
# Installs the Debian packages tensorfleet needs to build, run and test.
# Idempotent: packages already present are skipped, so a second run takes a second.
set -euo pipefail

packages=(
  # build
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  # libraries
  libsqlite3-dev libpq-dev libboost-dev libboost-system-dev libssl-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev zlib1g-dev
  # optional: gzip bills inflate with ISA-L's igzip, faster than zlib, when present
  libisal-dev
  # optional: the server allocates with jemalloc when present (docs/architecture.md)
  libjemalloc-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev postgresql redis-server libhiredis-dev
  curl sqlite3 python3
  # the ssh pool provider is tested against a real OpenSSH server on loopback
  openssh-server openssh-client
  # a job's python: {venv: true, requirements: ...} (the setup step's test)
  python3-venv python3-pip
  # the chat-template test data generator (tests/data/engine/chat/generate_expected.py)
  python3-jinja2
  # real clients and the example training job: PyTorch, boto3, the AWS CLI, a text corpus
  python3-torch python3-numpy libopenblas0-pthread python3-boto3 awscli fortunes pybind11-dev python3-dev
  # more S3 tools the object service is tested with
  rclone s3cmd
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# Node.js and npm, for s3rver below: Debian's, unless a Node.js with npm is already installed
# (NodeSource's nodejs package carries its own npm, and Debian's npm would conflict with it).
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "install-deps: done"
fi

# Node packages that only tests use, from the npm registry at the versions their
# package-lock.json pins, installed into their folder's node_modules (once: a second run finds
# the same lock installed and does nothing). The platform and the demo run without them.
#   tests/s3rver: s3rver, an S3 implementation of its own, the second external bucket that the
#     object service's tests keep blobs in, beside a tensorfleet server.
#   tests/openai-client: OpenAI's official Node.js client, a real client of the gateway.
#   tests/aws-sdk-js: the AWS SDK for JavaScript v3 (SQS), a real client of the SQS API.
install_test_package() {
  local dir="$1" what="$2" marker="$3"
  if [ -e "$dir/node_modules/$marker" ] &&
     cmp -s "$dir/package-lock.json" "$dir/node_modules/.installed-lock.json"; then
    echo "install-deps: $what present"
  else
    echo "install-deps: installing $what into ${dir#"$repo_dir/"}/node_modules"
    if npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >/dev/null; then
      cp "$dir/package-lock.json" "$dir/node_modules/.installed-lock.json"
    else
      echo "install-deps: WARNING: npm could not install $what; the tests that use it will be skipped" >&2
    fi
  fi
}
repo_dir="$(cd "$(dirname "$0")/.." && pwd)"
install_test_package "$repo_dir/tests/s3rver" s3rver .bin/s3rver
install_test_package "$repo_dir/tests/openai-client" "the OpenAI Node.js client" openai/package.json
install_test_package "$repo_dir/tests/aws-sdk-js" "the AWS SDK for JavaScript" \
  @aws-sdk/client-sqs/package.json
