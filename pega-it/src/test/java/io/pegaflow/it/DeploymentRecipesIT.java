package io.pegaflow.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.yaml.snakeyaml.Yaml;

/**
 * The recipes in docs/deploy cannot be run here (no Docker engine, no cluster, no systemd as PID 1): each is parsed,
 * and what it promises in docs/deploy/README.md is checked against the packaged jar it runs.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DeploymentRecipesIT {
    private static final Path REPO = Path.of(System.getProperty("pega.it.repo", ".."));
    private static final Path DEPLOY = REPO.resolve("docs/deploy");
    private static final Set<String> INSTRUCTIONS = Set.of(
            "FROM",
            "RUN",
            "CMD",
            "LABEL",
            "EXPOSE",
            "ENV",
            "ADD",
            "COPY",
            "ENTRYPOINT",
            "VOLUME",
            "USER",
            "WORKDIR",
            "ARG",
            "ONBUILD",
            "STOPSIGNAL",
            "HEALTHCHECK",
            "SHELL");
    private static final Pattern PEGA_ARG = Pattern.compile("--(pega\\.[a-z0-9.\\-\\[\\]]+)=");
    /** The server's gRPC drain on SIGTERM (spring.grpc.server.shutdown-grace-period in the jar). */
    private static final int GRPC_GRACE_SECONDS = 5;

    private static Set<String> serverKeys;

    @BeforeAll
    static void readServerKeys() throws IOException {
        serverKeys = JarMetadata.uniformPegaKeys("pega.it.serverJar");
    }

    private static void assertKnownPegaArguments(String text, String where) {
        Matcher m = PEGA_ARG.matcher(text);
        while (m.find()) {
            assertThat(serverKeys)
                    .as("%s: --%s is a key of pega-server.jar", where, m.group(1))
                    .contains(JarMetadata.uniform(m.group(1)));
        }
    }

    /** Instructions with their argument text, comments dropped and continuation lines joined. */
    static List<String[]> dockerInstructions(String dockerfile) {
        List<String[]> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : dockerfile.split("\n", -1)) {
            String t = line.strip();
            if (current.isEmpty() && (t.isEmpty() || t.startsWith("#"))) {
                continue;
            }
            if (t.endsWith("\\")) {
                current.append(t, 0, t.length() - 1).append(' ');
                continue;
            }
            current.append(t);
            String text = current.toString().strip();
            current.setLength(0);
            int space = text.indexOf(' ');
            out.add(new String[] {
                text.substring(0, space), text.substring(space + 1).strip()
            });
        }
        assertThat(current).as("a continuation line at the end").isEmpty();
        return out;
    }

    @Test
    void shouldBuildTheImageFromAJreAsAnUnprivilegedUserWithExecFormCommands() throws IOException {
        List<String[]> instructions = dockerInstructions(Files.readString(DEPLOY.resolve("Dockerfile")));
        assertThat(instructions.get(0)[0]).isEqualTo("FROM");
        assertThat(instructions.get(0)[1]).matches("eclipse-temurin:17-jre\\S*");
        Map<String, List<String>> byName = new LinkedHashMap<>();
        for (String[] i : instructions) {
            assertThat(INSTRUCTIONS).as("instruction %s", i[0]).contains(i[0]);
            byName.computeIfAbsent(i[0], k -> new ArrayList<>()).add(i[1]);
        }
        assertThat(byName.get("USER"))
                .singleElement()
                .satisfies(u -> assertThat(u).doesNotStartWith("root").doesNotStartWith("0"));
        assertThat(byName.get("EXPOSE"))
                .singleElement()
                .satisfies(e -> assertThat(e.split("\\s+")).containsExactlyInAnyOrder("50055", "9091"));
        String copy = byName.get("COPY").get(0);
        String source = copy.replaceAll("--\\S+\\s+", "").split("\\s+", 2)[0];
        assertThat(REPO.resolve(source)).as("the jar the README's build makes").isRegularFile();
        List<String> entrypoint = JsonPath.read(byName.get("ENTRYPOINT").get(0), "$");
        List<String> cmd = JsonPath.read(byName.get("CMD").get(0), "$");
        assertThat(entrypoint).containsExactly("java", "-jar", "/opt/pega/pega-server.jar");
        assertThat(cmd).contains("--spring.profiles.active=production");
        assertThat(JarMetadata.containsClassPathEntry("pega.it.serverJar", "application-production.yml"))
                .as("the production profile inside the jar")
                .isTrue();
        String env = String.join(" ", byName.get("ENV"));
        assertThat(env).contains("JAVA_TOOL_OPTIONS=").contains("-Xmx");
        assertKnownPegaArguments(String.join(" ", cmd), "Dockerfile");
    }

    /** {@code section.key} to value, continuation lines joined (the systemd.syntax rules this unit uses). */
    static Map<String, String> systemdUnit(String text) {
        Map<String, String> keys = new LinkedHashMap<>();
        String section = null;
        String pending = "";
        for (String line : text.split("\n", -1)) {
            String t = line.strip();
            if (pending.isEmpty() && (t.isEmpty() || t.startsWith("#") || t.startsWith(";"))) {
                continue;
            }
            if (pending.isEmpty() && t.startsWith("[")) {
                assertThat(t).endsWith("]");
                section = t.substring(1, t.length() - 1);
                continue;
            }
            if (t.endsWith("\\")) {
                pending += t.substring(0, t.length() - 1) + " ";
                continue;
            }
            String entry = pending + t;
            pending = "";
            int eq = entry.indexOf('=');
            assertThat(section).as("key outside a section: %s", entry).isNotNull();
            assertThat(eq).as("not key=value: %s", entry).isPositive();
            keys.put(
                    section + "." + entry.substring(0, eq).strip(),
                    entry.substring(eq + 1).strip());
        }
        return keys;
    }

    @Test
    void shouldRunTheJarUnderSystemdWithTimeForAGracefulStop() throws IOException {
        Map<String, String> unit = systemdUnit(Files.readString(DEPLOY.resolve("pega-server.service")));
        assertThat(unit.keySet()).contains("Unit.Description", "Service.ExecStart", "Install.WantedBy");
        assertThat(unit.get("Service.ExecStart"))
                .startsWith("/usr/bin/java ")
                .contains("-Xmx")
                .contains("-jar /opt/pega/pega-server.jar")
                .contains("--spring.profiles.active=production");
        assertThat(unit.get("Service.Type")).isIn("exec", "simple");
        assertThat(unit.get("Service.KillSignal")).isEqualTo("SIGTERM");
        assertThat(Integer.parseInt(unit.get("Service.TimeoutStopSec"))).isGreaterThan(GRPC_GRACE_SECONDS);
        assertThat(unit.get("Service.User")).isNotEqualTo("root");
        assertKnownPegaArguments(unit.get("Service.ExecStart"), "pega-server.service");
    }

    @SuppressWarnings("unchecked")
    private static Object at(Object node, String... path) {
        Object o = node;
        for (String p : path) {
            assertThat(o).as("%s in the pod", p).isInstanceOf(Map.class);
            o = ((Map<String, Object>) o).get(p);
        }
        return o;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object node, String... path) {
        return (Map<String, Object>) at(node, path);
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> maps(Object node, String... path) {
        return (List<Map<String, Object>>) at(node, path);
    }

    @SuppressWarnings("unchecked")
    private static List<String> strings(Object node, String... path) {
        return (List<String>) at(node, path);
    }

    private static String string(Object node, String... path) {
        return (String) at(node, path);
    }

    /** A Kubernetes quantity or a Spring size ({@code 70Gi}, {@code 64GB}): binary multiples either way. */
    private static long bytes(String quantity) {
        Matcher m = Pattern.compile("(\\d+)(?:([KMGT])(?:i|B))?").matcher(quantity);
        assertThat(m.matches()).as("quantity %s", quantity).isTrue();
        int shift = m.group(2) == null ? 0 : 10 * ("KMGT".indexOf(m.group(2)) + 1);
        return Long.parseLong(m.group(1)) << shift;
    }

    private static final Path KUBERNETES = DEPLOY.resolve("kubernetes");
    private static final List<String> OVERLAYS = List.of("one-gpu", "tp2");

    /** {@code kubectl} on the PATH (CI installs Debian's {@code kubernetes-client}), or null. */
    private static @Nullable Path kubectl() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":", -1)) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, "kubectl");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /**
     * The documents of an overlay as {@code kubectl kustomize} renders them. Without kubectl (a developer machine),
     * the same from the files: the base's resources with the overlay's strategic-merge patches (maps merged, lists of
     * named maps merged by name, other lists replaced) and the base's image names applied, which is all our overlays
     * use; the line printed says so.
     */
    private static List<Map<String, Object>> render(String overlay) throws Exception {
        Path dir = KUBERNETES.resolve("overlays").resolve(overlay);
        Path kubectl = kubectl();
        List<Map<String, Object>> docs = new ArrayList<>();
        if (kubectl != null) {
            Process p = new ProcessBuilder(kubectl.toString(), "kustomize", dir.toString())
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as("kubectl kustomize %s", dir).isZero();
            for (Object doc : new Yaml().loadAll(out)) {
                docs.add(map(doc));
            }
            return docs;
        }
        System.out.println("kubectl is not installed (apt-get install kubernetes-client): " + overlay
                + " is checked from its files, not rendered by kubectl kustomize");
        Path base = dir.resolve(
                strings(yaml(dir.resolve("kustomization.yaml")), "bases").get(0));
        Map<String, Object> baseKustomization = yaml(base.resolve("kustomization.yaml"));
        for (String resource : strings(baseKustomization, "resources")) {
            for (Object doc : new Yaml().loadAll(Files.readString(base.resolve(resource)))) {
                docs.add(map(doc));
            }
        }
        for (String patch : strings(yaml(dir.resolve("kustomization.yaml")), "patchesStrategicMerge")) {
            Map<String, Object> p = yaml(dir.resolve(patch));
            Map<String, Object> target = docs.stream()
                    .filter(d -> d.get("kind").equals(p.get("kind"))
                            && string(d, "metadata", "name").equals(string(p, "metadata", "name")))
                    .findFirst()
                    .orElseThrow();
            merge(target, p);
        }
        for (Map<String, Object> image : maps(baseKustomization, "images")) {
            for (Map<String, Object> doc : docs) {
                renameImages(doc, image);
            }
        }
        return docs;
    }

    private static Map<String, Object> yaml(Path file) throws IOException {
        return map(new Yaml().load(Files.readString(file)));
    }

    @SuppressWarnings("unchecked")
    private static void merge(Map<String, Object> target, Map<String, Object> patch) {
        for (Map.Entry<String, Object> e : patch.entrySet()) {
            Object old = target.get(e.getKey());
            if (old instanceof Map<?, ?> o && e.getValue() instanceof Map<?, ?> n) {
                merge((Map<String, Object>) o, (Map<String, Object>) n);
            } else if (old instanceof List<?> o
                    && e.getValue() instanceof List<?> n
                    && !n.isEmpty()
                    && n.get(0) instanceof Map<?, ?> first
                    && first.containsKey("name")) {
                for (Object item : n) {
                    Map<String, Object> named = (Map<String, Object>) item;
                    ((List<Map<String, Object>>) o)
                            .stream()
                                    .filter(m -> named.get("name").equals(m.get("name")))
                                    .findFirst()
                                    .ifPresentOrElse(m -> merge(m, named), () -> ((List<Object>) o).add(named));
                }
            } else {
                target.put(e.getKey(), e.getValue());
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static void renameImages(Object node, Map<String, Object> image) {
        if (node instanceof Map<?, ?> m) {
            Map<String, Object> map = (Map<String, Object>) m;
            if (image.get("name").equals(map.get("image"))) {
                Object name = image.getOrDefault("newName", image.get("name"));
                map.put("image", name + ":" + image.get("newTag"));
            }
            map.values().forEach(v -> renameImages(v, image));
        } else if (node instanceof List<?> l) {
            l.forEach(v -> renameImages(v, image));
        }
    }

    private static Map<String, Object> doc(List<Map<String, Object>> docs, String kind, String name) {
        return docs.stream()
                .filter(d -> kind.equals(d.get("kind")) && name.equals(string(d, "metadata", "name")))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " " + name));
    }

    private static Map<String, Object> named(List<Map<String, Object>> items, String name) {
        return items.stream()
                .filter(i -> name.equals(i.get("name")))
                .findFirst()
                .orElseThrow(() -> new AssertionError("nothing named " + name + " in " + items));
    }

    private static void assertProbes(Map<String, Object> container, String port) {
        assertThat(string(container, "startupProbe", "httpGet", "path")).isEqualTo("/actuator/health/readiness");
        assertThat(string(container, "readinessProbe", "httpGet", "path")).isEqualTo("/actuator/health/readiness");
        assertThat(string(container, "livenessProbe", "httpGet", "path")).isEqualTo("/actuator/health/liveness");
        for (String probe : List.of("startupProbe", "readinessProbe", "livenessProbe")) {
            assertThat(at(container, probe, "httpGet", "port")).as(probe).isEqualTo(port);
        }
    }

    @Test
    void shouldRenderEachOverlayIntoAVllmPodWithItsSidecarSharingShmProbesAndEnoughMemory() throws Exception {
        String dockerfile = Files.readString(KUBERNETES.resolve("vllm-image/Dockerfile"));
        Matcher vllmVersion = Pattern.compile("(?m)^FROM vllm/vllm-openai:v(\\d+\\.\\d+\\.\\d+)$")
                .matcher(dockerfile);
        Matcher connector = Pattern.compile("pip install --no-cache-dir pegaflow-llm==(\\d+\\.\\d+\\.\\d+)")
                .matcher(dockerfile);
        assertThat(vllmVersion.find()).as("the vLLM image's version").isTrue();
        assertThat(connector.find()).as("the connector's version").isTrue();
        for (String overlay : OVERLAYS) {
            List<Map<String, Object>> docs = render(overlay);
            Map<String, Object> pod = map(doc(docs, "Deployment", "vllm-pegaflow"), "spec", "template", "spec");
            assertThat(at(pod, "hostIPC"))
                    .as("%s: containers of a pod share IPC already", overlay)
                    .isNotEqualTo(true);
            assertThat((Integer) at(pod, "terminationGracePeriodSeconds")).isGreaterThan(GRPC_GRACE_SECONDS + 30);
            assertThat(string(named(maps(pod, "volumes"), "dshm"), "emptyDir", "medium"))
                    .isEqualTo("Memory");

            Map<String, Object> sidecar = named(maps(pod, "initContainers"), "pega-server");
            Map<String, Object> vllm = named(maps(pod, "containers"), "vllm");
            assertThat(sidecar.get("restartPolicy")).as("a native sidecar").isEqualTo("Always");
            for (Map<String, Object> c : List.of(sidecar, vllm)) {
                assertThat(string(named(maps(c, "volumeMounts"), "dshm"), "mountPath"))
                        .as("%s: %s mounts the shared /dev/shm", overlay, c.get("name"))
                        .isEqualTo("/dev/shm");
            }
            assertThat(named(maps(sidecar, "ports"), "grpc").get("containerPort"))
                    .isEqualTo(50055);
            assertThat(named(maps(sidecar, "ports"), "http").get("containerPort"))
                    .isEqualTo(9091);
            assertProbes(sidecar, "http");

            String args = String.join(" ", strings(sidecar, "args"));
            assertKnownPegaArguments(args, overlay + " sidecar args");
            assertThat(args).contains("--spring.profiles.active=production");
            Matcher pool = Pattern.compile("--pega\\.pool\\.size=(\\S+)").matcher(args);
            assertThat(pool.find()).isTrue();
            String javaOptions = string(named(maps(sidecar, "env"), "JAVA_TOOL_OPTIONS"), "value");
            Matcher xmx = Pattern.compile("-Xmx(\\d+)([gm])").matcher(javaOptions);
            assertThat(xmx.find()).isTrue();
            long heap = Long.parseLong(xmx.group(1)) << (xmx.group(2).equals("g") ? 30 : 20);
            long limit = bytes(string(sidecar, "resources", "limits", "memory"));
            assertThat(limit)
                    .as("%s: memory limit against pool + heap + 1 GiB (docs/sizing.md)", overlay)
                    .isGreaterThanOrEqualTo(bytes(pool.group(1)) + heap + (1L << 30));
            assertThat(string(sidecar, "resources", "requests", "memory"))
                    .as("requests = limits: the pool is pinned, nothing of it can be reclaimed")
                    .isEqualTo(string(sidecar, "resources", "limits", "memory"));

            List<String> vllmArgs = strings(vllm, "args");
            String kvConfig = vllmArgs.get(vllmArgs.indexOf("--kv-transfer-config") + 1);
            assertThat((String) JsonPath.read(kvConfig, "$.kv_connector")).isEqualTo("PegaKVConnector");
            assertThat((String) JsonPath.read(kvConfig, "$.kv_connector_module_path"))
                    .isEqualTo("pegaflow.connector");
            Object gpus = at(vllm, "resources", "limits", "nvidia.com/gpu");
            assertThat(vllmArgs).as("%s: one worker per GPU", overlay).contains("--tensor-parallel-size=" + gpus);
            assertThat(string(pod, "nodeSelector", "nvidia.com/gpu.count"))
                    .as("%s: a whole node, so the sidecar's GPUs are vLLM's", overlay)
                    .isEqualTo(String.valueOf(gpus));
            assertThat(string(vllm, "image"))
                    .as("%s: the vLLM image names vLLM's and the connector's versions", overlay)
                    .isEqualTo("vllm-openai-pegaflow:vllm-" + vllmVersion.group(1) + "-pegaflow-" + connector.group(1));
            assertThat(string(named(maps(vllm, "env"), "PEGAFLOW_PORT"), "value"))
                    .isEqualTo("50055");

            Map<String, Object> meta = named(
                    maps(doc(docs, "Deployment", "pega-metaserver"), "spec", "template", "spec", "containers"),
                    "pega-metaserver");
            assertThat(strings(meta, "args"))
                    .contains("--spring.profiles.active=postgres", "--pega.metaserver.addr=0.0.0.0:50056");
            assertProbes(meta, "http");
            assertThat(string(named(maps(meta, "env"), "PEGA_METASERVER_DB_URL"), "value"))
                    .startsWith("jdbc:postgresql://pega-postgres:5432/");
            assertThat(args).contains("--pega.metaserver.addr=pega-metaserver:50056");
            Map<String, Object> service = doc(docs, "Service", "pega-metaserver");
            assertThat(maps(service, "spec", "ports"))
                    .anySatisfy(p -> assertThat(p.get("port")).isEqualTo(50056));
            doc(docs, "Service", "pega-postgres");
            doc(docs, "StatefulSet", "pega-postgres");
            Map<String, Object> monitor = doc(docs, "ServiceMonitor", "pegaflow");
            assertThat(maps(monitor, "spec", "endpoints"))
                    .anySatisfy(e ->
                            assertThat(e).containsEntry("port", "http").containsEntry("path", "/actuator/prometheus"));
            for (Map<String, Object> d : docs) {
                assertThat(new Yaml().dump(d))
                        .as("%s: no placeholder registry", overlay)
                        .doesNotContain("example");
            }
        }
    }
}
