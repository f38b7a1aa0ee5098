package io.pegaflow.push;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A push server in a child JVM ({@link PushNodeProcess} over UCX TCP), so that a test can SIGKILL it: no shutdown hook,
 * no goodbye, its sockets closed by the kernel. Closing it ends the child's stdin, which closes its node.
 */
final class PushServerProcess implements AutoCloseable {
    private final Process process;
    private final int port;

    /** Starts the child with {@code deadlines} as both its push and its receive timeout; returns once it listens. */
    PushServerProcess(Duration deadlines) throws IOException {
        process = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        PushNodeProcess.class.getName(),
                        "tcp",
                        Long.toString(deadlines.toSeconds()),
                        Long.toString(deadlines.toSeconds()))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        BufferedReader out =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String line;
        int p = -1;
        while ((line = out.readLine()) != null) { // the child ends the line or dies; the test timeout bounds it
            if (line.startsWith("PORT ")) {
                p = Integer.parseInt(line.substring(5).strip());
                break;
            }
        }
        if (p < 0) {
            process.destroyForcibly();
            throw new IllegalStateException("the push server process did not start");
        }
        port = p;
    }

    int port() {
        return port;
    }

    void sigkill() throws InterruptedException {
        process.destroyForcibly(); // SIGKILL on Linux
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }

    /** SIGSTOP: the process keeps its sockets open and answers nothing, as a host that vanished without a goodbye. */
    void sigstop() throws IOException, InterruptedException {
        signal("-STOP");
    }

    private void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", signal, Long.toString(process.pid()))
                .redirectErrorStream(true)
                .start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).as("kill %s %d", signal, process.pid()).isZero();
    }

    @Override
    public void close() throws IOException {
        if (process.isAlive()) {
            try {
                signal("-CONT"); // a stopped child cannot read the end of its stdin
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process.getOutputStream().close();
            try {
                if (!process.waitFor(20, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }
}
