package io.pegaflow.metaserver.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Assumptions;

/**
 * A real {@code redis-server} child process on an ephemeral loopback port, without persistence, for the Redis index
 * tests. Tests that need one skip, saying why once, when Debian's {@code redis-server} is not installed.
 * {@link #close()} kills the process (SIGKILL, as a crash would) and waits for it.
 */
public final class RedisServer implements AutoCloseable {

    public static final String SKIPPED = "Redis tests skipped: redis-server is not on the PATH. Install Debian's"
            + " redis-server (.ci/run does) to run the Redis index and Redis Cluster tests";
    private static final AtomicBoolean SKIP_REPORTED = new AtomicBoolean();

    private final Process process;
    private final int port;

    private RedisServer(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** Whether {@code redis-server} can be run here. */
    public static boolean available() {
        return executable("redis-server");
    }

    static boolean executable(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(":", -1)) {
            if (Files.isExecutable(Path.of(dir, name))) {
                return true;
            }
        }
        return false;
    }

    /** Skips the calling test unless redis-server is installed, printing why the first time. */
    public static void assumeAvailable() {
        boolean available = available();
        if (!available && SKIP_REPORTED.compareAndSet(false, true)) {
            System.out.println(SKIPPED);
        }
        Assumptions.assumeTrue(available, SKIPPED);
    }

    /** Starts a standalone server with no persistence; {@code extra} are further {@code --option value} pairs. */
    public static RedisServer start(Path dir, String... extra) throws IOException {
        assumeAvailable();
        return startOnPort(dir, freePort(), extra);
    }

    static RedisServer startOnPort(Path dir, int port, String... extra) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                "redis-server",
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                dir.toAbsolutePath().toString(),
                "--logfile",
                dir.resolve("redis-" + port + ".log").toAbsolutePath().toString()));
        command.addAll(List.of(extra));
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis-" + port + ".out").toFile())
                .start();
        RedisServer server = new RedisServer(process, port);
        server.awaitPing(10_000);
        return server;
    }

    public int port() {
        return port;
    }

    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** Sends one inline command and returns the first reply line ({@code +OK}, {@code :3}, {@code $5}, ...). */
    public String command(String inline) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            out.write((inline + "\r\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = socket.getInputStream();
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = in.read()) >= 0 && c != '\n') {
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        }
    }

    /** {@code INFO memory}'s {@code used_memory}, in bytes. */
    public long usedMemory() throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
            socket.setSoTimeout(5000);
            socket.getOutputStream().write("INFO memory\r\n".getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            StringBuilder reply = new StringBuilder();
            byte[] buffer = new byte[8192];
            while (!reply.toString().contains("used_memory:")
                    || !reply.toString().contains("used_memory_human")) {
                int n = in.read(buffer);
                if (n < 0) {
                    break;
                }
                reply.append(new String(buffer, 0, n, StandardCharsets.US_ASCII));
            }
            for (String line : reply.toString().split("\r\n", -1)) {
                if (line.startsWith("used_memory:")) {
                    return Long.parseLong(
                            line.substring("used_memory:".length()).trim());
                }
            }
            throw new IOException("no used_memory in INFO memory: " + reply);
        }
    }

    private void awaitPing(long timeoutMs) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        IOException last = null;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("redis-server on port " + port + " exited with " + process.exitValue());
            }
            try {
                if (command("PING").equals("+PONG")) {
                    return;
                }
            } catch (IOException e) {
                last = e;
            }
            sleep(50);
        }
        close();
        throw new IOException("redis-server on port " + port + " did not answer PING", last);
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** SIGKILL, as a crashed host; waits until the process is gone. */
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
