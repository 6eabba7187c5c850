# What the scripts that install the packed package into other roots
# (check-bullseye.sh, check-platforms.sh) ask of this host. Sourced.

# debian_mirror: the Debian mirror apt already uses (the first deb822 URIs:
# line or sources.list line of a Debian archive; grep -m1 stops in each
# file, not across them), without a trailing slash; fails where there is
# none.
debian_mirror() {
  local mirror
  mirror=$(grep -h -m1 -oE '^URIs: *[^ ]+/debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n '1s/^URIs: *//p' || true)
  [ -n "$mirror" ] || mirror=$(grep -h -m1 -oE '^deb +[^ ]+/debian/? ' /etc/apt/sources.list 2>/dev/null | awk 'NR == 1 {print $2}' || true)
  [ -n "$mirror" ] || { echo "no Debian mirror found in apt's sources" >&2; return 1; }
  echo "${mirror%/}"
}

# need COMMAND PACKAGE: installs Debian's PACKAGE where COMMAND is missing.
need() { command -v "$1" >/dev/null || { apt-get update -qq && apt-get install -y -qq "$2" >/dev/null; }; }

# without_rust: PATH less every directory holding cargo or rustc, for a
# consumer's install that must not build from source.
without_rust() {
  printf '%s' "$PATH" | tr ':' '\n' | while read -r d; do [ -x "$d/cargo" ] || [ -x "$d/rustc" ] || printf '%s:' "$d"; done
}
