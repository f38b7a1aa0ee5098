package io.pegaflow.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import java.io.IOException;
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

    @Test
    void shouldPairVllmWithANativeSidecarSharingShmProbesAndEnoughMemory() throws IOException {
        Map<String, Object> pod = new Yaml().load(Files.readString(DEPLOY.resolve("kubernetes/vllm-pegaflow.yaml")));
        assertThat(string(pod, "kind")).isEqualTo("Pod");
        Map<String, Object> spec = map(pod, "spec");
        assertThat((Integer) at(spec, "terminationGracePeriodSeconds")).isGreaterThan(GRPC_GRACE_SECONDS + 30);
        List<Map<String, Object>> volumes = maps(spec, "volumes");
        assertThat(volumes).anySatisfy(v -> {
            assertThat(v.get("name")).isEqualTo("dshm");
            assertThat(string(v, "emptyDir", "medium")).isEqualTo("Memory");
        });

        List<Map<String, Object>> init = maps(spec, "initContainers");
        Map<String, Object> sidecar = init.get(0);
        assertThat(sidecar.get("restartPolicy")).as("a native sidecar").isEqualTo("Always");
        List<Map<String, Object>> containers = maps(spec, "containers");
        Map<String, Object> vllm = containers.get(0);
        for (Map<String, Object> c : List.of(sidecar, vllm)) {
            List<Map<String, Object>> mounts = maps(c, "volumeMounts");
            assertThat(mounts)
                    .as("%s mounts the shared /dev/shm", c.get("name"))
                    .anySatisfy(m -> {
                        assertThat(m.get("name")).isEqualTo("dshm");
                        assertThat(m.get("mountPath")).isEqualTo("/dev/shm");
                    });
        }

        List<Map<String, Object>> ports = maps(sidecar, "ports");
        assertThat(ports).anySatisfy(p -> {
            assertThat(p.get("name")).isEqualTo("http");
            assertThat(p.get("containerPort")).isEqualTo(9091);
        });
        assertThat(string(sidecar, "readinessProbe", "httpGet", "path")).isEqualTo("/actuator/health/readiness");
        assertThat(string(sidecar, "startupProbe", "httpGet", "path")).isEqualTo("/actuator/health/readiness");
        assertThat(string(sidecar, "livenessProbe", "httpGet", "path")).isEqualTo("/actuator/health/liveness");
        assertThat(string(sidecar, "readinessProbe", "httpGet", "port")).isEqualTo("http");

        List<String> args = strings(sidecar, "args");
        String joined = String.join(" ", args);
        assertKnownPegaArguments(joined, "sidecar args");
        Matcher pool = Pattern.compile("--pega\\.pool\\.size=(\\S+)").matcher(joined);
        assertThat(pool.find()).isTrue();
        List<Map<String, Object>> env = maps(sidecar, "env");
        String javaOptions = env.stream()
                .filter(e -> "JAVA_TOOL_OPTIONS".equals(e.get("name")))
                .map(e -> (String) e.get("value"))
                .findFirst()
                .orElseThrow();
        Matcher xmx = Pattern.compile("-Xmx(\\d+)([gm])").matcher(javaOptions);
        assertThat(xmx.find()).isTrue();
        long heap = Long.parseLong(xmx.group(1)) << (xmx.group(2).equals("g") ? 30 : 20);
        long limit = bytes(string(sidecar, "resources", "limits", "memory"));
        assertThat(limit)
                .as("memory limit against pool + heap + 1 GiB")
                .isGreaterThanOrEqualTo(bytes(pool.group(1)) + heap + (1L << 30));

        List<String> vllmArgs = strings(vllm, "args");
        String kvConfig = vllmArgs.get(vllmArgs.indexOf("--kv-transfer-config") + 1);
        assertThat((String) JsonPath.read(kvConfig, "$.kv_connector")).isEqualTo("PegaKVConnector");
        assertThat((String) JsonPath.read(kvConfig, "$.kv_connector_module_path"))
                .isEqualTo("pegaflow.connector");
        assertThat(Files.readString(DEPLOY.resolve("README.md"))).contains("pegaflow-llm==0.22.4");
    }
}
