package io.pegaflow.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Python client (python/pegaflow_jvm_push) as a real worker process against two real push servers over UCX TCP:
 * python/tests/push_roundtrip.py registers, prepares, pushes three layers and checks every byte. Skipped, with a
 * message, where python3 with grpcio is not installed.
 */
@Timeout(120)
class PushPythonClientTest {
    private static final Path PYTHON = Path.of("..", "python").toAbsolutePath().normalize();

    @Test
    void shouldPushFromThePythonClientByteForByte() throws Exception {
        assumeTrue(python("-c", "import grpc, google.protobuf") == 0, "python3 with grpcio and protobuf is needed");
        PushConfig config = PushConfig.defaults().withTimeouts(Duration.ofSeconds(20), Duration.ofSeconds(20));
        try (PushNode prefill = PushNode.start("tcp", config);
                PushNode decode = PushNode.start("tcp", config)) {
            File log = File.createTempFile("push-python", ".log");
            try {
                ProcessBuilder pb = new ProcessBuilder(
                                "python3",
                                PYTHON.resolve("tests/push_roundtrip.py").toString(),
                                "127.0.0.1:" + prefill.port(),
                                "127.0.0.1:" + decode.port())
                        .redirectErrorStream(true)
                        .redirectOutput(log);
                pb.environment().put("PYTHONPATH", PYTHON.toString());
                Process p = pb.start();
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

    private static int python(String... args) throws Exception {
        String[] cmd = new String[args.length + 1];
        cmd[0] = "python3";
        System.arraycopy(args, 0, cmd, 1, args.length);
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
        } catch (java.io.IOException e) {
            return -1;
        }
    }
}
