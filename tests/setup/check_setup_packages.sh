#!/usr/bin/env bash
# scripts/setup-debian.sh's packages against what CMake links: every system library a target of
# the build links (the paths on its link lines) must be owned by a package the script installs
# or by one of their dependencies. Exit 77 (ctest: skipped) where dpkg and apt-cache are missing.
#   tests/setup/check_setup_packages.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
if ! command -v dpkg-query >/dev/null || ! command -v apt-cache >/dev/null; then
  echo "skipped: dpkg-query and apt-cache are needed (a Debian system)"
  exit 77
fi
mapfile -t packages < <(bash "$source/scripts/setup-debian.sh" --list)
# The packages apt installs for the list (no recommends: the script passes --no-install-recommends).
closure=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
            --no-replaces --no-enhances "${packages[@]}" | grep -v '^ ' | sed 's/:.*//' | sort -u)
# Link lines are in build.ninja (Ninja) or in each target's link.txt (Makefiles).
mapfile -t linked < <({ find "$build" -name link.txt; ls "$build/build.ninja" 2>/dev/null; } |
                        xargs grep -ohE '(^| )/(usr/)?lib/[^ ]+\.so[.0-9]*' | tr -d ' ' | sort -u)
if ((${#linked[@]} == 0)); then
  echo "no link lines under $build: configure it first"
  exit 1
fi
missing=0
for library in "${linked[@]}"; do
  owner=$(dpkg-query -S "$library" 2>/dev/null | head -1 | cut -d: -f1) || true
  if [[ -z "$owner" ]]; then
    owner=$(dpkg-query -S "$(readlink -f "$library")" 2>/dev/null | head -1 | cut -d: -f1) || true
  fi
  if [[ -z "$owner" ]]; then
    echo "MISSING: $library is linked but belongs to no Debian package"
    missing=1
  elif ! grep -qx "$owner" <<<"$closure"; then
    echo "MISSING: $library is linked; its package $owner is not installed by scripts/setup-debian.sh"
    missing=1
  else
    echo "ok: $library ($owner)"
  fi
done
exit $missing
