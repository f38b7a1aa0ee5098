#!/usr/bin/env bash
# Cuts a release: sets the version in every pom, dates the CHANGELOG's "Unreleased" section, commits and tags
# vVERSION, builds the tag from a fresh clone (no untracked or ignored file can leak into it), and leaves in
# dist/VERSION/ the jars, a CycloneDX SBOM per jar and SHA256SUMS; then moves the poms on to NEXT-SNAPSHOT.
#
#   scripts/release.sh VERSION [NEXT]     e.g. scripts/release.sh 0.1.0 0.2.0 (NEXT defaults to the next minor)
#   scripts/release.sh --dry-run VERSION  the same in a throw-away clone of HEAD: dist/ is filled, this repository's
#                                         branch and tags are left alone
#
# Environment: SKIP_TESTS=1 builds with -DskipTests (the default runs `verify`, every test, as CI does);
# RELEASE_MAVEN_ARGS adds Maven options to the build (e.g. -o on a machine whose Maven cache already holds every
# plugin; the SBOM step always needs Maven Central).
# Nothing is pushed: the script prints the push command.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
cyclonedx="org.cyclonedx:cyclonedx-maven-plugin:2.9.3"
# The jars a release ships: module, its jar under target/.
shipped=("pega-server pega-server.jar" "pega-metaserver pega-metaserver.jar" "pega-benchmarks benchmarks.jar")

die() { echo "release: $*" >&2; exit 2; }

dry_run=0
if [[ "${1:-}" == "--dry-run" ]]; then
  dry_run=1
  shift
fi
version="${1:-}"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] \
  || die "VERSION must be MAJOR.MINOR.PATCH without a qualifier (got '${version}'); usage: scripts/release.sh [--dry-run] VERSION [NEXT]"
IFS=. read -r major minor _ <<<"$version"
next="${2:-$major.$((minor + 1)).0}"
[[ "$next" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "NEXT must be MAJOR.MINOR.PATCH (got '$next')"
[[ -z "$(git status --porcelain)" ]] || die "the working tree has changes; commit or stash them first"
git rev-parse -q --verify "refs/tags/v$version" >/dev/null && die "tag v$version exists already"
grep -q '^## \[Unreleased\]' CHANGELOG.md || die "CHANGELOG.md has no '## [Unreleased]' section to release"

if [[ $dry_run == 1 ]]; then
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  git clone -q "$root" "$scratch/repo"
  (cd "$scratch/repo" && git config user.name "release dry run" && git config user.email "dry-run@localhost" \
    && SKIP_TESTS="${SKIP_TESTS:-}" RELEASE_MAVEN_ARGS="${RELEASE_MAVEN_ARGS:-}" scripts/release.sh "$version" "$next")
  mkdir -p "$root/dist"
  rm -rf "$root/dist/$version"
  cp -r "$scratch/repo/dist/$version" "$root/dist/$version"
  echo "release: dry run of $version done; artifacts in dist/$version (nothing committed or tagged here)"
  exit 0
fi

current="$(sed -n '/<\/parent>/,$ s#^  <version>\(.*\)</version>#\1#p' pom.xml | head -1)"
[[ -n "$current" ]] || die "cannot read the project version from pom.xml"
poms=()
while IFS= read -r pom; do poms+=("$pom"); done < <(git ls-files '*pom.xml')

set_version() {  # from to: every pom's own version and its parent reference
  local pom
  for pom in "${poms[@]}"; do
    sed -i "s#<version>$1</version>#<version>$2</version>#" "$pom"
  done
}

# 1. The release commit and its tag.
set_version "$current" "$version"
today="$(date -u +%F)"
sed -i "0,/^## \[Unreleased\]/ s//## [Unreleased]\n\n## [$version] - $today/" CHANGELOG.md
git add -- "${poms[@]}" CHANGELOG.md
git commit -q -m "chore(release): $version"
git tag -a "v$version" -m "PegaFlow for the JVM $version"

# 2. Build the tag from a fresh clone: nothing untracked or ignored comes along, and the jars' /actuator/info still
#    names the tagged commit (git-commit-id reads the clone's .git).
scratch_build="$(mktemp -d)"
trap 'rm -rf "$scratch_build"' EXIT
work="$scratch_build/tree"
git clone -q --branch "v$version" "$root" "$work"
goal=(verify)
[[ -n "${SKIP_TESTS:-}" ]] && goal=(package -DskipTests)
modules="$(printf '%s\n' "${shipped[@]}" | cut -d' ' -f1 | paste -sd,)"
# The SBOM step runs online: the CycloneDX plugin refuses offline mode (and Maven itself reads MAVEN_ARGS, hence
# the script's own variable and the empty MAVEN_ARGS there).
# shellcheck disable=SC2086 # RELEASE_MAVEN_ARGS is a list of options
(cd "$work" && ./mvnw -B -ntp ${RELEASE_MAVEN_ARGS:-} "${goal[@]}" \
  && MAVEN_ARGS="" ./mvnw -B -ntp -pl "$modules" "$cyclonedx:makeBom" -DoutputFormat=json -DoutputName=bom \
     -Dcyclonedx.skipNotDeployed=false)

# 3. The artifacts, their SBOMs and checksums.
dist="$root/dist/$version"
rm -rf "$dist"
mkdir -p "$dist"
for entry in "${shipped[@]}"; do
  read -r module jar <<<"$entry"
  cp "$work/$module/target/$jar" "$dist/$module-$version.jar"
  cp "$work/$module/target/bom.json" "$dist/$module-$version.cdx.json"
done
(cd "$dist" && sha256sum -- *.jar *.cdx.json >SHA256SUMS && sha256sum -c --quiet SHA256SUMS)

# 4. Back to a snapshot for further work.
set_version "$version" "$next-SNAPSHOT"
git add -- "${poms[@]}"
git commit -q -m "chore: begin $next-SNAPSHOT"

echo "release: v$version tagged, artifacts in dist/$version:"
(cd "$dist" && ls -l)
echo "release: publish with: git push origin HEAD v$version"
