package io.pegaflow.server.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pegaflow.server.ChildServer;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The vLLM connector (python/pegaflow_jvm_pd) driven in vLLM's call order by python/tests/pd_connector_driver.py,
 * against two pega-server processes with the push on (host backend, UCX TCP on loopback, a cluster token, so every
 * handshake is sealed): requests prefilled on one and decoded on the other byte for byte at TP 1 and 2, a receive past
 * its deadline, and each server SIGKILLed mid-forward (the driver kills it), each ending in vLLM's load-error path;
 * and (the decode server's GET /pd) a layer on the decode device before the prefill pass marked its last layer.
 * Runs with the first interpreter here that imports grpcio and protobuf; skipped, with a message, where there is none.
 */
@Timeout(600)
class PdConnectorPythonTest {
    private static final Path PYTHON = Path.of("..", "python").toAbsolutePath().normalize();
    private static final List<String> INTERPRETERS = List.of("python3", "/usr/bin/python3");
    private static final String TOKEN = HexFormat.of().formatHex(SecureRandom.getSeed(16));

    @TempDir
    Path dir;

    @Test
    void shouldPushThroughTheConnectorByteForByteAndRecomputeAReceivePastItsDeadline() throws Exception {
        String python = pythonWithGrpc();
        try (ChildServer prefill = server("prefill");
                ChildServer decode = server("decode")) {
            String view = "127.0.0.1:" + decode.httpPort();
            driver(python, prefill, decode, "roundtrip", "--tp", "1", "--decode-http", view, "--admin-token", TOKEN);
            driver(
                    python,
                    prefill,
                    decode,
                    "roundtrip",
                    "--tp",
                    "2",
                    "--old-load-order",
                    "--decode-http",
                    view,
                    "--admin-token",
                    TOKEN);
            driver(python, prefill, decode, "timeout", "--tp", "2");
            driver(python, prefill, decode, "timeout", "--tp", "1", "--old-load-order");
        }
    }

    @Test
    void shouldRecomputeOnTheDecodeSideWhenEitherServerIsKilledMidPush() throws Exception {
        String python = pythonWithGrpc();
        try (ChildServer decode = server("decode")) {
            String view = "127.0.0.1:" + decode.httpPort();
            try (ChildServer prefill = server("prefill-killed")) {
                driver(
                        python,
                        prefill,
                        decode,
                        "kill-prefill",
                        "--prefill-pid",
                        pid(prefill),
                        "--decode-http",
                        view,
                        "--admin-token",
                        TOKEN);
                assertThat(prefill.process().isAlive()).isFalse();
            }
            try (ChildServer prefill = server("prefill")) {
                driver(
                        python,
                        prefill,
                        decode,
                        "kill-decode",
                        "--tp",
                        "2",
                        "--decode-pid",
                        pid(decode),
                        "--decode-http",
                        view,
                        "--admin-token",
                        TOKEN);
                assertThat(decode.process().isAlive()).isFalse();
            }
        }
    }

    private ChildServer server(String name) throws IOException {
        return ChildServer.start(
                name,
                dir,
                "--spring.grpc.server.host=127.0.0.1",
                "--server.address=127.0.0.1",
                "--pega.pd.enabled=true",
                "--pega.pd.nics=lo",
                "--pega.pd.transports=tcp",
                "--pega.cluster.token=" + TOKEN,
                "--pega.admin.token=" + TOKEN,
                // far past this test's timeout: only the links between the servers can end the killed cases
                "--pega.pd.receive-timeout=10m",
                "--pega.pd.push-timeout=10m",
                "--logging.level.io.pegaflow.push=INFO");
    }

    private static String pid(ChildServer server) {
        return Long.toString(server.process().pid());
    }

    private static void driver(String python, ChildServer prefill, ChildServer decode, String scenario, String... more)
            throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                python,
                PYTHON.resolve("tests").resolve("pd_connector_driver.py").toString(),
                "--prefill",
                "127.0.0.1:" + prefill.grpcPort(),
                "--decode",
                "127.0.0.1:" + decode.grpcPort(),
                "--scenario",
                scenario));
        cmd.addAll(List.of(more));
        File log = File.createTempFile("pd-connector", ".log");
        try {
            ProcessBuilder pb =
                    new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log);
            pb.environment().put("PYTHONPATH", PYTHON.toString());
            Process p = pb.start();
            boolean exited = p.waitFor(180, TimeUnit.SECONDS);
            if (!exited) {
                p.destroyForcibly();
            }
            String out = Files.readString(log.toPath(), StandardCharsets.UTF_8);
            System.out.print(out); // the driver's summary lines (what ended each failure case) in the test's output
            if (!exited || p.exitValue() != 0 || !out.contains("OK " + scenario)) {
                throw new AssertionError("%s %s (exited: %s):%n%s%n--- prefill server:%n%s%n--- decode server:%n%s"
                        .formatted(
                                scenario,
                                String.join(" ", more),
                                exited,
                                out,
                                tail(prefill.logText()),
                                tail(decode.logText())));
            }
        } finally {
            Files.deleteIfExists(log.toPath());
        }
    }

    private static String tail(String log) {
        String[] lines = log.split("\n");
        return String.join("\n", List.of(lines).subList(Math.max(0, lines.length - 40), lines.length));
    }

    private static String pythonWithGrpc() throws InterruptedException {
        Optional<String> found = Optional.empty();
        for (String candidate : INTERPRETERS) {
            if (exitCode(candidate, "-c", "import grpc, google.protobuf") == 0) {
                found = Optional.of(candidate);
                break;
            }
        }
        assumeTrue(found.isPresent(), "python3 with grpcio and protobuf is needed (Debian: python3-grpcio)");
        return found.orElseThrow();
    }

    private static int exitCode(String... cmd) throws InterruptedException {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
        } catch (IOException e) {
            return -1;
        }
    }
}
