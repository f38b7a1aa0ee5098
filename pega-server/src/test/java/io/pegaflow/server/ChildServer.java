package io.pegaflow.server;

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
import java.util.concurrent.TimeUnit;

/**
 * A pega-server in a JVM of its own, for tests that need what an in-process server cannot survive: SIGKILL, or the
 * {@code System.exit} of the Shutdown RPC. It runs on the test classpath with a 32 MB host pool; its stdout and
 * stderr go to {@link #log}, which failure messages quote because the child's output is otherwise lost.
 *
 * @param process the child JVM
 * @param grpcPort its gRPC port
 * @param httpPort its HTTP (operations and actuator) port
 * @param log its combined stdout and stderr
 */
public record ChildServer(Process process, int grpcPort, int httpPort, Path log) implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    /**
     * Starts a server and waits until it is ready. {@code extraArgs} are Spring arguments ({@code --name=value}) added
     * to the ports, pool and {@code logging.level.root=WARN} set here; they must not repeat those, since Spring joins a
     * repeated command-line argument's values with commas. Bind addresses are the caller's choice.
     */
    public static ChildServer start(String name, Path dir, String... extraArgs) throws IOException {
        int[] ports = freePorts();
        Path log = dir.resolve(name + ".log");
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx384m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                "io.pegaflow.server.PegaServerApplication",
                "--spring.grpc.server.port=" + ports[0],
                "--server.port=" + ports[1],
                "--pega.pool.size=32MB",
                "--pega.device.backend=host",
                "--logging.level.root=WARN"));
        cmd.addAll(List.of(extraArgs));
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        ChildServer server = new ChildServer(p, ports[0], ports[1], log);
        try {
            server.awaitReady(name);
            return server;
        } catch (RuntimeException | Error e) {
            server.close();
            throw e;
        }
    }

    /** Two distinct free ports (both held open while choosing, so they cannot coincide). */
    private static int[] freePorts() throws IOException {
        try (ServerSocket a = new ServerSocket(0);
                ServerSocket b = new ServerSocket(0)) {
            return new int[] {a.getLocalPort(), b.getLocalPort()};
        }
    }

    private void awaitReady(String name) {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (true) {
            // Readiness includes the "grpc" indicator: UP only once the gRPC listener is bound.
            String health = get("/actuator/health/readiness");
            if (health != null && health.contains("\"grpc\":{\"status\":\"UP\"")) {
                return;
            }
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError("server " + name + " did not start:\n" + logText());
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while server " + name + " started", e);
            }
        }
    }

    /** The body of a GET on loopback, or null when the server does not answer (yet). */
    private String get(String path) {
        try {
            return HTTP.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path))
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
        return new AssertionError(what + "; its log:\n" + logText(), cause);
    }

    /** Kills the child if it is still running, and waits for it so no server outlives its test. */
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
