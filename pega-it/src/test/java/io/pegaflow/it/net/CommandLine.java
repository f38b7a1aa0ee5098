package io.pegaflow.it.net;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a short administrative command ({@code ip ...}) to its end, with a deadline. */
final class CommandLine {
    private static final long TIMEOUT_SECONDS = 20;

    private CommandLine() {}

    record Result(int exitCode, String output) {
        Result orThrow(List<String> command) {
            if (exitCode != 0) {
                throw new IllegalStateException(
                        String.join(" ", command) + " exited with " + exitCode + ": " + output.strip());
            }
            return this;
        }
    }

    static Result run(List<String> command) {
        Path out = null;
        try {
            // Into a file rather than a pipe, so that the deadline holds even when the command never closes its output.
            out = Files.createTempFile("pega-it-cmd", ".out");
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(out.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Result(-1, String.join(" ", command) + " still running after " + TIMEOUT_SECONDS + " s");
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            // No `ip` binary, for example: a result, so that the caller can turn it into a skip with the reason.
            return new Result(-1, String.join(" ", command) + " could not run: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UncheckedIOException(new IOException("interrupted while running " + command, e));
        } finally {
            if (out != null) {
                try {
                    Files.deleteIfExists(out);
                } catch (IOException ignored) {
                    // a temporary file; the OS's tmp cleaner gets it
                }
            }
        }
    }

    static Result runOrThrow(String... command) {
        return run(List.of(command)).orThrow(List.of(command));
    }
}
