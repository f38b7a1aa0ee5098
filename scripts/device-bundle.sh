#!/usr/bin/env bash
# Builds everything a GPU machine without Java needs to run pega-server and the CUDA tests, as one file:
#
#   gpu-bundle/pega-gpu-bundle.tar.xz
#     jre/                 a jlink'ed Java 17 runtime
#     server/              the Spring Boot jar unpacked, each nested jar unpacked into a directory (xz packs raw
#                          class files far better than jars); server/classpath.txt and server/main-class.txt
#     test/                pega-native and pega-core main and test classes, the test dependencies unpacked,
#                          GpuTestMain (gpu-tests/java) compiled; test/classpath.txt
#     bench/               pega-benchmarks' and pega-testkit's own jars (not the 24 MB benchmarks.jar: everything else
#                          the compiled Save/Load client io.pegaflow.bench.link.LinkBench needs is on the server's
#                          classpath); gpu-tests/link_bench.py runs it beside the Python client
#     ucx/                 Debian's libucx0 1.13.1 and what it links (libnuma1, libibverbs1, librdmacm1), unpacked
#                          from their .debs (`apt-get download`): the device has no Debian, and JUCX's libjucx.so
#                          needs libucp. Scripts that start a server with pega.pd or pega.rdma on set
#                          LD_LIBRARY_PATH=ucx/usr/lib/x86_64-linux-gnu and UCX_MODULE_DIR=that/ucx (ucx/env.sh).
#
# Usage: scripts/device-bundle.sh [--snapshot | --refresh-tests]
#   --snapshot       build from `git archive HEAD` plus this tree's CUDA files (pega-native .../sys/cuda, pega-core
#                    .../device/cuda, their tests and pickles, gpu-tests), for when other uncommitted work does not
#                    compile.
#   --refresh-tests  keep the bundle's JRE and server; recompile pega-native/pega-core (main and test classes) and
#                    GpuTestMain from this tree and swap them in (repacks the bundle: several minutes).
#   --ucx            keep the bundle; add (or replace) its ucx/ directory only.
#   --transfer-bench build gpu-bundle/pega-transfer-bench.tar.xz instead: a small JRE, the UCX libraries with
#                    ucx-utils (ucx_perftest), pega-benchmarks' jar and scripts/bench-transfer.sh, to run the
#                    transfer benchmark on a machine with more cores (docs/transfer.md):
#                    tar -xJf pega-transfer-bench.tar.xz && . ucx/env.sh && JAVA=jre/bin/java scripts/bench-transfer.sh
#   --overlay        leave the bundle alone; compile this tree's CUDA classes, their tests and GpuTestMain into
#                    gpu-bundle/test-overlay and gpu-bundle/server-overlay, which gpu-tests/run.sh puts first on the
#                    classpaths (seconds, for iterating on the CUDA code between full builds).
# Then, on the GPU machine: gpu-tests/run.sh (it unpacks the bundle) — see docs/gpu.md.
#
# Maven runs online, as the README's build does, so a machine whose Maven cache has never resolved a plugin the
# bundle needs (maven-dependency-plugin) still works; MAVEN_ARGS=-o keeps it offline once the cache holds them.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/gpu-bundle"
src="$root"

ucx_libs() {  # stage dir [more packages]: Debian's UCX and its link dependencies, unpacked (no root needed, nothing installed)
  local debs stage="$1"
  shift
  debs="$(mktemp -d /tmp/pega-bundle-debs.XXXXXX)"
  (cd "$debs" && apt-get download libucx0 libnuma1 libibverbs1 librdmacm1 "$@" >/dev/null) \
    || { echo "apt-get download failed (run apt-get update once)"; rm -rf "$debs"; return 1; }
  rm -rf "$stage/ucx" && mkdir -p "$stage/ucx"
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$stage/ucx"; done
  ls "$debs" > "$stage/ucx/packages.txt"
  rm -rf "$debs" "$stage/ucx/usr/share"
  cat > "$stage/ucx/env.sh" <<'ENV'
# source this: the bundle's UCX for a JVM on a machine without Debian's libucx0
_pega_ucx="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/usr/lib/x86_64-linux-gnu"
export LD_LIBRARY_PATH="$_pega_ucx${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export UCX_MODULE_DIR="$_pega_ucx/ucx"
export PATH="$(dirname "$(dirname "$_pega_ucx")")/bin:$PATH"
unset _pega_ucx
ENV
  [[ -f "$stage/ucx/usr/lib/x86_64-linux-gnu/libucp.so.0" ]] || { echo "libucp.so.0 missing from the unpacked .debs"; return 1; }
}

if [[ "${1:-}" == "--transfer-bench" ]]; then
  jar="$root/pega-benchmarks/target/benchmarks.jar"
  [[ -f "$jar" ]] || { echo "build first: ./mvnw -B -ntp -pl pega-benchmarks -am package -DskipTests"; exit 1; }
  stage="$(mktemp -d /tmp/pega-bundle-stage.XXXXXX)"
  trap 'rm -rf "$stage"' EXIT
  jlink --add-modules java.base,java.logging,java.management,java.naming,java.xml,jdk.unsupported \
    --strip-debug --no-header-files --no-man-pages --compress=2 --output "$stage/jre"
  ucx_libs "$stage" ucx-utils libgomp1
  mkdir -p "$stage/scripts" "$stage/pega-benchmarks/target"
  cp "$jar" "$stage/pega-benchmarks/target/"
  cp "$root/scripts/bench-transfer.sh" "$stage/scripts/"
  mkdir -p "$out"
  XZ_OPT="-6 -T0" tar -cJf "$out/pega-transfer-bench.tar.xz" -C "$stage" .
  du -sh "$out/pega-transfer-bench.tar.xz"
  exit 0
fi

if [[ "${1:-}" == "--ucx" ]]; then
  [[ -f "$out/pega-gpu-bundle.tar.xz" ]] || { echo "no bundle; run without options first"; exit 1; }
  stage="$(mktemp -d /tmp/pega-bundle-stage.XXXXXX)"
  trap 'rm -rf "$stage"' EXIT
  tar -xJf "$out/pega-gpu-bundle.tar.xz" -C "$stage"
  ucx_libs "$stage"
  XZ_OPT="-6 -T0" tar -cJf "$out/pega-gpu-bundle.tar.xz" -C "$stage" .
  du -sh "$stage/ucx" "$out/pega-gpu-bundle.tar.xz"
  exit 0
fi
if [[ "${1:-}" == "--overlay" ]]; then
  [[ -f "$out/pega-gpu-bundle.tar.xz" ]] || { echo "no bundle; run without options first"; exit 1; }
  (cd "$root" && ./mvnw -q -B -ntp ${MAVEN_ARGS:-} -pl pega-kernel,pega-native,pega-core test-compile -Dspotless.check.skip=true)
  rm -rf "$out/test-overlay" "$out/server-overlay"
  for dir in test-overlay server-overlay; do
    for p in io/pegaflow/sys/cuda io/pegaflow/core/device/cuda; do
      mkdir -p "$out/$dir/$p"
    done
    cp -r "$root"/pega-native/target/classes/io/pegaflow/sys/cuda/. "$out/$dir/io/pegaflow/sys/cuda/"
    cp -r "$root"/pega-core/target/classes/io/pegaflow/core/device/cuda/. "$out/$dir/io/pegaflow/core/device/cuda/"
  done
  cp -r "$root"/pega-native/target/test-classes/io/pegaflow/sys/cuda/. "$out/test-overlay/io/pegaflow/sys/cuda/"
  cp -r "$root"/pega-core/target/test-classes/io/pegaflow/core/device/cuda/. "$out/test-overlay/io/pegaflow/core/device/cuda/"
  cp -r "$root"/pega-core/target/test-classes/pickles "$out/test-overlay/pickles"
  jars="$(ls ~/.m2/repository/org/junit/platform/junit-platform-launcher/6.*/junit-platform-launcher-*.jar \
          ~/.m2/repository/org/junit/platform/junit-platform-engine/6.*/junit-platform-engine-*.jar \
          ~/.m2/repository/org/junit/platform/junit-platform-commons/6.*/junit-platform-commons-*.jar \
          ~/.m2/repository/org/apiguardian/apiguardian-api/*/apiguardian-api-*.jar 2>/dev/null | paste -sd:)"
  javac -d "$out/test-overlay" -cp "$jars" "$root/gpu-tests/java/GpuTestMain.java"
  du -sh "$out/test-overlay" "$out/server-overlay"
  exit 0
fi
if [[ "${1:-}" == "--refresh-tests" ]]; then
  [[ -f "$out/pega-gpu-bundle.tar.xz" ]] || { echo "no bundle to refresh; run without options first"; exit 1; }
  (cd "$root" && ./mvnw -q -B -ntp ${MAVEN_ARGS:-} -pl pega-kernel,pega-native,pega-core test-compile -Dspotless.check.skip=true)
  stage="$(mktemp -d /tmp/pega-bundle-stage.XXXXXX)"
  trap 'rm -rf "$stage"' EXIT
  tar -xJf "$out/pega-gpu-bundle.tar.xz" -C "$stage"
  for pair in kernel-classes:pega-kernel/target/classes \
              native-classes:pega-native/target/classes native-test-classes:pega-native/target/test-classes \
              core-classes:pega-core/target/classes core-test-classes:pega-core/target/test-classes; do
    rm -rf "$stage/test/${pair%%:*}"
    cp -r "$root/${pair#*:}" "$stage/test/${pair%%:*}"
  done
  rm -rf "$stage/test/launcher" && mkdir -p "$stage/test/launcher"
  javac -d "$stage/test/launcher" -cp "$(tr ':' '\n' < "$stage/test/classpath.txt" | sed "s|^|$stage/test/|" | paste -sd:)" \
    "$root/gpu-tests/java/GpuTestMain.java"
  [[ -d "$stage/ucx" ]] || ucx_libs "$stage"
  XZ_OPT="-6 -T0" tar -cJf "$out/pega-gpu-bundle.tar.xz" -C "$stage" .
  du -sh "$out/pega-gpu-bundle.tar.xz"
  exit 0
fi
if [[ "${1:-}" == "--snapshot" ]]; then
  src="$(mktemp -d /tmp/pega-bundle-src.XXXXXX)"
  git -C "$root" archive HEAD | tar -x -C "$src"
  for p in pega-native/src/main/java/io/pegaflow/sys/cuda pega-native/src/test/java/io/pegaflow/sys/cuda \
           pega-core/src/main/java/io/pegaflow/core/device/cuda pega-core/src/test/java/io/pegaflow/core/device/cuda \
           pega-core/src/test/resources/pickles gpu-tests; do
    mkdir -p "$src/$(dirname "$p")"
    rm -rf "${src:?}/$p"
    cp -r "$root/$p" "$src/$p"
  done
fi

echo "== build ($src)"
# One reactor invocation packages the modules and writes each module's test classpath, so pega-core's sibling
# pega-native resolves to this build's output: a separate `-pl pega-core dependency:build-classpath` would look for
# io.pegaflow:pega-native in ~/.m2, which fails on a fresh clone (nothing ran `install`) and picks up a stale jar
# wherever something did.
(cd "$src" && ./mvnw -q -B -ntp ${MAVEN_ARGS:-} -pl pega-server,pega-benchmarks -am package dependency:build-classpath -DskipTests \
   -Dspotless.check.skip=true -Dmdep.includeScope=test -Dmdep.outputFile=target/test-classpath.txt)
grep -q "repository/io/pegaflow" "$src/pega-core/target/test-classpath.txt" \
  && { echo "pega-core's test classpath resolved a pega module from ~/.m2"; exit 1; }

stage="$(mktemp -d /tmp/pega-bundle-stage.XXXXXX)"
trap 'rm -rf "$stage"' EXIT

echo "== jre"
jlink --add-modules java.base,java.logging,java.management,java.naming,java.net.http,java.sql,java.xml,java.desktop,java.instrument,java.security.jgss,java.security.sasl,jdk.unsupported,jdk.crypto.ec,java.compiler,java.scripting,jdk.management,jdk.zipfs \
  --strip-debug --no-header-files --no-man-pages --compress=2 --output "$stage/jre"

unpack_jar() {  # jar dir
  mkdir -p "$2"
  (cd "$2" && unzip -q -o "$1")
}

echo "== server"
mkdir -p "$stage/server"
unpack_jar "$src/pega-server/target/pega-server.jar" "$stage/server"
main_class="$(grep -i '^Start-Class:' "$stage/server/META-INF/MANIFEST.MF" | cut -d' ' -f2 | tr -d '\r')"
echo "$main_class" > "$stage/server/main-class.txt"
cp_entries=("BOOT-INF/classes")
for jar in "$stage"/server/BOOT-INF/lib/*.jar; do
  d="${jar%.jar}"
  unpack_jar "$jar" "$d"
  rm "$jar"
  cp_entries+=("BOOT-INF/lib/$(basename "$d")")
done
rm -rf "$stage/server/org/springframework/boot/loader"
(IFS=:; echo "${cp_entries[*]}") > "$stage/server/classpath.txt"

echo "== tests"
mkdir -p "$stage/test/lib"
cp -r "$src/pega-kernel/target/classes" "$stage/test/kernel-classes"
cp -r "$src/pega-native/target/classes" "$stage/test/native-classes"
cp -r "$src/pega-native/target/test-classes" "$stage/test/native-test-classes"
cp -r "$src/pega-core/target/classes" "$stage/test/core-classes"
cp -r "$src/pega-core/target/test-classes" "$stage/test/core-test-classes"
test_cp=("kernel-classes" "native-classes" "native-test-classes" "core-classes" "core-test-classes")
engine_ver=""
for jar in $(tr ':' '\n' < "$src/pega-core/target/test-classpath.txt"); do
  [[ -d "$jar" ]] && continue  # a reactor module's classes; its classes are copied above
  name="$(basename "$jar" .jar)"
  case "$name" in
    pega-*|spring-*|archunit-*|mockito-*|xmlunit-*|jsonassert-*|android-json-*|log4j-*|micrometer-*|jakarta.*|snakeyaml-*|awaitility-*|hamcrest-*|objenesis-*|byte-buddy-agent-*) continue ;;
    junit-platform-engine-*) engine_ver="${name#junit-platform-engine-}" ;;
  esac
  unpack_jar "$jar" "$stage/test/lib/$name"
  test_cp+=("lib/$name")
done
launcher="$HOME/.m2/repository/org/junit/platform/junit-platform-launcher/$engine_ver/junit-platform-launcher-$engine_ver.jar"
[[ -f "$launcher" ]] || (cd "$src" && ./mvnw -q -B -ntp ${MAVEN_ARGS:-} dependency:get -Dartifact="org.junit.platform:junit-platform-launcher:$engine_ver")
unpack_jar "$launcher" "$stage/test/lib/junit-platform-launcher-$engine_ver"
test_cp+=("lib/junit-platform-launcher-$engine_ver")
mkdir -p "$stage/test/launcher"
javac_cp="$(for e in "${test_cp[@]}"; do printf '%s:' "$stage/test/$e"; done)"
javac -d "$stage/test/launcher" -cp "$javac_cp" "$root/gpu-tests/java/GpuTestMain.java"
test_cp+=("launcher")
(IFS=:; echo "${test_cp[*]}") > "$stage/test/classpath.txt"

echo "== bench"
mkdir -p "$stage/bench"
cp "$src"/pega-benchmarks/target/pega-benchmarks-*.jar "$src"/pega-testkit/target/pega-testkit-*.jar "$stage/bench/"

echo "== ucx"
ucx_libs "$stage"

echo "== pack"
mkdir -p "$out"
XZ_OPT="-6 -T0" tar -cJf "$out/pega-gpu-bundle.tar.xz" -C "$stage" .
du -sh "$stage"/jre "$stage"/server "$stage"/test "$stage"/bench "$stage"/ucx "$out/pega-gpu-bundle.tar.xz"
if [[ "$src" != "$root" ]]; then rm -rf "$src"; fi
