package io.pegaflow.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Python client (python/pegaflow_jvm_push) as a real worker process against real push servers over UCX TCP:
 * python/tests/push_roundtrip.py registers, prepares, pushes three layers and checks every byte; and
 * python/tests/push_server_gone.py waits on a verdict while its server process is SIGKILLed. They run with the first
 * interpreter here that imports grpcio and protobuf ({@code python3} on the PATH, then Debian's {@code /usr/bin/python3}
 * with python3-grpcio, which .ci/run installs); skipped, with a message, where there is none.
 */
@Timeout(150)
class PushPythonClientTest {
    private static final Path PYTHON = Path.of("..", "python").toAbsolutePath().normalize();
    private static final List<String> INTERPRETERS = List.of("python3", "/usr/bin/python3");

    @Test
    void shouldPushFromThePythonClientByteForByte() throws Exception {
        String python = pythonWithGrpc();
        PushConfig config = PushConfig.defaults().withTimeouts(Duration.ofSeconds(20), Duration.ofSeconds(20));
        try (PushNode prefill = PushNode.start("tcp", config);
                PushNode decode = PushNode.start("tcp", config)) {
            File log = File.createTempFile("push-python", ".log");
            try {
                Process p = script(
                                python,
                                "push_roundtrip.py",
                                "127.0.0.1:" + prefill.port(),
                                "127.0.0.1:" + decode.port())
                        .redirectOutput(log)
                        .start();
                boolean exited = p.waitFor(90, TimeUnit.SECONDS);
                if (!exited) {
                    p.destroyForcibly();
                }
                String out = Files.readString(log.toPath(), StandardCharsets.UTF_8);
                assertThat(exited).as(out).isTrue();
                assertThat(p.exitValue()).as(out).isZero();
                assertThat(out).contains("OK");
            } finally {
                Files.deleteIfExists(log.toPath());
            }
            assertThat(prefill.engine.view().pushesCompleted()).isEqualTo(1);
        }
    }

    /** The decode worker's wait must learn that its server died, long before the verdict's deadline. */
    @Test
    void shouldRaisePushServerGoneWhenTheWorkersServerProcessIsKilled() throws Exception {
        String python = pythonWithGrpc();
        try (PushServerProcess server = new PushServerProcess(Duration.ofMinutes(10))) {
            Process p = script(python, "push_server_gone.py", "127.0.0.1:" + server.port())
                    .start();
            List<String> lines = new ArrayList<>();
            try (BufferedReader out =
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = out.readLine()) != null && !line.equals("WAITING")) { // the test timeout bounds it
                    lines.add(line);
                }
                assertThat(line).as("the script's output: %s", lines).isEqualTo("WAITING");

                server.sigkill();

                while ((line = out.readLine()) != null) {
                    lines.add(line);
                }
            }
            boolean exited = p.waitFor(60, TimeUnit.SECONDS);
            if (!exited) {
                p.destroyForcibly();
            }
            assertThat(exited).as("%s", lines).isTrue();
            assertThat(p.exitValue()).as("%s", lines).isZero();
            assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("GONE "));
        }
    }

    private static String pythonWithGrpc() throws Exception {
        Optional<String> found = Optional.empty();
        for (String candidate : INTERPRETERS) {
            if (run(candidate, "-c", "import grpc, google.protobuf") == 0) {
                found = Optional.of(candidate);
                break;
            }
        }
        assumeTrue(found.isPresent(), "python3 with grpcio and protobuf is needed (Debian: python3-grpcio)");
        return found.orElseThrow();
    }

    private static ProcessBuilder script(String python, String name, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(python);
        cmd.add(PYTHON.resolve("tests").resolve(name).toString());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("PYTHONPATH", PYTHON.toString());
        return pb;
    }

    private static int run(String... cmd) throws InterruptedException {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
        } catch (IOException e) {
            return -1;
        }
    }
}
