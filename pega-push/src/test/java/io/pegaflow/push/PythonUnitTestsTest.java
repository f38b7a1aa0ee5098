package io.pegaflow.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Python client's pure unit tests (python/tests/test_*.py: the overlap arithmetic of gpu-tests/pd_push.py), so the
 * build runs them wherever python3 is installed; skipped, with a message, where it is not.
 */
@Timeout(120)
class PythonUnitTestsTest {
    private static final Path PYTHON = Path.of("..", "python").toAbsolutePath().normalize();

    @Test
    void shouldPassThePythonUnitTests() throws Exception {
        File log = File.createTempFile("python-unit", ".log");
        try {
            Process p;
            try {
                p = new ProcessBuilder(
                                "python3",
                                "-m",
                                "unittest",
                                "discover",
                                "-s",
                                PYTHON.resolve("tests").toString(),
                                "-p",
                                "test_*.py")
                        .redirectErrorStream(true)
                        .redirectOutput(log)
                        .start();
            } catch (java.io.IOException e) {
                assumeTrue(false, "python3 is needed: " + e.getMessage());
                return;
            }
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
    }
}
