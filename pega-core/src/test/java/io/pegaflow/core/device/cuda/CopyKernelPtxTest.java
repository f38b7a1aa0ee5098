package io.pegaflow.core.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The PTX that ships is the one the CUDA source builds to: where {@code nvcc} is installed, this runs
 * {@code scripts/build-ptx.sh} into a temporary file and compares byte for byte. A different nvcc release than the one
 * recorded in the shipped PTX's header is skipped (its code generation may differ); rebuild with the script.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CopyKernelPtxTest {
    private static final Pattern RELEASE = Pattern.compile("release (\\d+\\.\\d+), V([0-9.]+)");

    @Test
    void shouldShipThePtxOfTheKernelEntryPoint() {
        String ptx = new String(CopyKernel.ptx(), StandardCharsets.US_ASCII);
        assertThat(ptx).contains(".visible .entry " + CopyKernel.ENTRY + "(").contains(".target sm_80");
        assertThat(ptx).contains("ld.global.cs.v4").contains("st.global.cs.v4");
    }

    @Test
    void shouldMatchWhatNvccBuildsFromTheSource(@TempDir Path tmp) throws Exception {
        Path root = repositoryRoot();
        String nvcc = run(root, "nvcc", "--version");
        assumeThat(nvcc).as("nvcc on PATH").isNotNull();
        String shipped = Files.readString(
                root.resolve("pega-core/src/main/resources/io/pegaflow/core/device/cuda/" + CopyKernel.RESOURCE),
                StandardCharsets.US_ASCII);
        assumeThat(version(nvcc))
                .as("nvcc release equal to the one that built the shipped PTX")
                .isEqualTo(version(shipped));
        Path out = tmp.resolve("copy_kernel.ptx");
        assertThat(run(root, root.resolve("scripts/build-ptx.sh").toString(), out.toString()))
                .as("scripts/build-ptx.sh")
                .isNotNull();
        assertThat(Files.readString(out, StandardCharsets.US_ASCII))
                .as("the shipped PTX is stale: run scripts/build-ptx.sh and commit the result")
                .isEqualTo(shipped);
    }

    private static String version(String text) {
        Matcher m = RELEASE.matcher(text);
        return m.find() ? m.group(2) : "unknown";
    }

    /** The checkout this runs in; a bundle on a GPU machine has none, and the comparison is skipped there. */
    private static Path repositoryRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("scripts/build-ptx.sh"))) {
            p = p.getParent();
        }
        assumeThat(p).as("a checkout with scripts/build-ptx.sh").isNotNull();
        return p;
    }

    /** Output of a command that exited 0 within a minute, or null when it is missing or failed. */
    private static String run(Path dir, String... command) throws InterruptedException {
        try {
            Process p = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            return p.exitValue() == 0 ? new String(out, StandardCharsets.UTF_8) : null;
        } catch (IOException e) {
            return null;
        }
    }
}
