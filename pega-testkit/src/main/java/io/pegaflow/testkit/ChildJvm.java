package io.pegaflow.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * A Java process of a test's own, for what an in-process server cannot survive or show: SIGKILL, {@code System.exit},
 * a restart on the same files, the shipped jar. Its stdout and stderr go to {@link #log()}, which failure messages
 * quote because the child's output is otherwise lost. It runs in the directory given at start, so a
 * {@code ./config/application.yml} of whatever directory the tests run in is never picked up.
 */
public final class ChildJvm implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final String name;
    private final Process process;
    private final Path log;

    private ChildJvm(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /**
     * Starts {@code java <small-heap flags> <args>} in {@code dir} and waits until {@code ready} holds (polled every
     * 100 ms, at most 90 s). The child is killed if it never gets ready.
     */
    public static ChildJvm start(String name, Path dir, List<String> args, BooleanSupplier ready) throws IOException {
        return start(name, dir, List.of(), Map.of(), args, ready);
    }

    /**
     * As {@link #start(String, Path, List, BooleanSupplier)}, with {@code java} run through {@code wrapper} (a command
     * that ends by exec'ing its arguments, such as {@code ip netns exec NAME}, so the child's pid is the JVM's and a
     * kill reaches it) and {@code environment} added to this process's.
     */
    public static ChildJvm start(
            String name,
            Path dir,
            List<String> wrapper,
            Map<String, String> environment,
            List<String> args,
            BooleanSupplier ready)
            throws IOException {
        ChildJvm child = launch(name, dir, wrapper, environment, args);
        try {
            child.awaitReady(ready);
            return child;
        } catch (RuntimeException | Error e) {
            child.close();
            throw e;
        }
    }

    /**
     * Starts {@code java <small-heap flags> <args>} in {@code dir} for a start that is meant to fail, and waits at most
     * {@code timeout} for it to end; its output stays readable through {@link #logText()}.
     *
     * @return the ended child, whose {@link #process()} has an exit value
     * @throws AssertionError when it is still running after {@code timeout} (it is killed)
     */
    public static ChildJvm runToExit(String name, Path dir, List<String> args, Duration timeout)
            throws IOException, InterruptedException {
        ChildJvm child = launch(name, dir, List.of(), Map.of(), args);
        try {
            child.awaitExit(timeout);
            return child;
        } finally {
            child.close();
        }
    }

    private static ChildJvm launch(
            String name, Path dir, List<String> wrapper, Map<String, String> environment, List<String> args)
            throws IOException {
        List<String> cmd = new ArrayList<>(wrapper);
        cmd.addAll(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx384m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1"));
        cmd.addAll(args);
        Path log = dir.resolve(name.replaceAll("[^A-Za-z0-9._-]", "-") + ".log");
        ProcessBuilder builder = new ProcessBuilder(cmd);
        builder.environment().putAll(environment);
        Process p = builder.directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        return new ChildJvm(name, p, log);
    }

    /** {@code n} distinct free ports (all held open while choosing, so none can coincide). */
    public static int[] freePorts(int n) throws IOException {
        List<ServerSocket> held = new ArrayList<>(n);
        try {
            int[] ports = new int[n];
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0);
                held.add(s);
                ports[i] = s.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
    }

    /** The body of a GET to {@code 127.0.0.1:port}, or null when nothing answers (yet). */
    public static @Nullable String httpGet(int port, String path) {
        try {
            return HTTP.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                                    .timeout(Duration.ofSeconds(5))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /**
     * Readiness of a pega-server: its readiness group includes the {@code grpc} indicator, which is UP only once the
     * gRPC listener is bound (the HTTP port opens first).
     */
    public static BooleanSupplier pegaServerReady(int httpPort) {
        return () -> {
            String body = httpGet(httpPort, "/actuator/health/readiness");
            return body != null && body.contains("\"grpc\":{\"status\":\"UP\"");
        };
    }

    private void awaitReady(BooleanSupplier ready) {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (!ready.getAsBoolean()) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError(name + " did not start:\n" + logText());
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while " + name + " started", e);
            }
        }
    }

    public Process process() {
        return process;
    }

    public Path log() {
        return log;
    }

    /** What the child has written so far. */
    public String logText() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code cause} with the child's log attached, which is usually where the reason is. */
    public AssertionError failure(String what, Throwable cause) {
        return new AssertionError(what + "; " + name + " logged:\n" + logText(), cause);
    }

    /** SIGKILL, then waits: the exit status is 137 afterwards. */
    public int kill() throws InterruptedException {
        process.destroyForcibly();
        return awaitExit(Duration.ofSeconds(20));
    }

    /** SIGTERM (Spring's graceful shutdown), then waits. */
    public int stop(Duration timeout) throws InterruptedException {
        process.destroy();
        return awaitExit(timeout);
    }

    /** Waits for the process to end by itself and returns its exit status. */
    public int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError(name + " still running after " + timeout + ":\n" + logText());
        }
        return process.exitValue();
    }

    /** Kills the child if it is still running, and waits for it, so no child outlives its test. */
    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
