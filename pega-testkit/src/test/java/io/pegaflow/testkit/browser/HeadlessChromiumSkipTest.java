package io.pegaflow.testkit.browser;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A machine without chromium-driver says so in one printed line, not only in a skip count. */
@Timeout(10)
class HeadlessChromiumSkipTest {

    @Test
    void shouldPrintOneLineNamingTheMissingDriverOncePerJvm(@TempDir Path dir) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        List<Path> missing = List.of(dir.resolve("chromedriver"));

        Optional<String> first = HeadlessChromium.unavailable(missing, out);
        Optional<String> second = HeadlessChromium.unavailable(missing, out);

        assertThat(first)
                .hasValueSatisfying(why -> assertThat(why)
                        .startsWith("Browser tests skipped: ")
                        .contains("chromedriver is not installed")
                        .contains("apt-get install chromium chromium-driver"));
        assertThat(second).isEqualTo(first);
        assertThat(bytes.toString(StandardCharsets.UTF_8).lines().toList())
                .as("printed once")
                .containsExactly(first.orElseThrow());
        assertThat(HeadlessChromium.unavailable(List.of(), out)).isEmpty();
    }
}
