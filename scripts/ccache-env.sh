# Sourced by the build scripts: when ccache is installed (CMakeLists.txt then compiles through
# it), build folders share its cache. Paths under the checkout are hashed relative to it and the
# build folder itself is left out of the hash, so build/, build-asan/ and a second checkout reuse
# each other's objects where their flags agree.
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(pwd)}"
  export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
fi
