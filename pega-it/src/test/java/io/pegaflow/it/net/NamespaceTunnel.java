package io.pegaflow.it.net;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP port on this JVM's 127.0.0.1 whose connections come out inside a network namespace, dialled from there to
 * {@code target}: the way a test in the root namespace talks to a server that listens only inside one, and the way a
 * client "in namespace b" reaches a server of namespace a (the dial from b crosses the veth).
 *
 * <p>One thread per tunnel accepts and dials; it moves itself into the namespace first ({@link Setns}), so every
 * socket it dials is made there, while the listening socket was made before, in the root namespace. The server sees
 * a connection from its own namespace (its loopback or its veth address), as it would from a local worker; that is
 * also what lets it find the caller's uid in its {@code /proc/net/tcp}. Two pump threads per connection copy bytes
 * until either side ends. {@link #close()} closes every socket and waits for the threads.
 */
public final class NamespaceTunnel implements AutoCloseable {
    private static final int CONNECT_TIMEOUT_MILLIS = 5_000;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(10);

    private final String namespace;
    private final InetSocketAddress target;
    private final ServerSocket listener;
    private final Thread acceptor;
    private final List<Socket> sockets = new ArrayList<>();
    private final List<Thread> pumps = new ArrayList<>();
    private final CompletableFuture<Void> entered = new CompletableFuture<>();
    private volatile boolean closed;

    private NamespaceTunnel(String namespace, InetSocketAddress target) throws IOException {
        this.namespace = namespace;
        this.target = target;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::acceptLoop, "tunnel-" + namespace + "-" + target.getPort());
        acceptor.setDaemon(true);
    }

    /** Opens the tunnel; returns once its thread is inside {@code namespace}, or throws why it could not get there. */
    public static NamespaceTunnel open(String namespace, String host, int port) throws IOException {
        NamespaceTunnel tunnel = new NamespaceTunnel(namespace, new InetSocketAddress(host, port));
        tunnel.acceptor.start();
        try {
            tunnel.entered.get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            return tunnel;
        } catch (ExecutionException | TimeoutException e) {
            tunnel.close();
            throw new IOException("cannot enter network namespace " + namespace, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            tunnel.close();
            throw new IOException("interrupted while entering network namespace " + namespace, e);
        }
    }

    /** The port on 127.0.0.1 (root namespace) to connect to. */
    public int localPort() {
        return listener.getLocalPort();
    }

    private void acceptLoop() {
        try {
            Setns.enterNetworkNamespace(namespace);
        } catch (RuntimeException | Error e) {
            entered.completeExceptionally(e);
            return;
        }
        entered.complete(null);
        while (!closed) {
            Socket inbound;
            try {
                inbound = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            Socket outbound = new Socket();
            try {
                outbound.connect(target, CONNECT_TIMEOUT_MILLIS);
            } catch (IOException refused) {
                // As a refused connection looks to a direct client: the accepted side is closed at once.
                closeQuietly(inbound);
                closeQuietly(outbound);
                continue;
            }
            synchronized (this) {
                if (closed) {
                    closeQuietly(inbound);
                    closeQuietly(outbound);
                    return;
                }
                sockets.add(inbound);
                sockets.add(outbound);
                AtomicInteger directionsDone = new AtomicInteger();
                pumps.add(pump(inbound, outbound, directionsDone));
                pumps.add(pump(outbound, inbound, directionsDone));
            }
        }
    }

    /** Copies one direction; an end of stream is passed on as a half-close, and the second direction to end closes both. */
    private Thread pump(Socket from, Socket to, AtomicInteger directionsDone) {
        Thread t = new Thread(
                () -> {
                    byte[] buffer = new byte[64 * 1024];
                    try {
                        InputStream in = from.getInputStream();
                        OutputStream out = to.getOutputStream();
                        int n;
                        while ((n = in.read(buffer)) >= 0) {
                            out.write(buffer, 0, n);
                        }
                        to.shutdownOutput();
                        if (directionsDone.incrementAndGet() == 2) {
                            closeQuietly(from);
                            closeQuietly(to);
                        }
                    } catch (IOException e) {
                        // a reset on one side is a reset on the other, as it would be without the tunnel
                        closeQuietly(from);
                        closeQuietly(to);
                    }
                },
                "tunnel-pump-" + namespace);
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Override
    public void close() {
        List<Thread> toJoin;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            closeQuietly(listener);
            sockets.forEach(NamespaceTunnel::closeQuietly);
            toJoin = new ArrayList<>(pumps);
        }
        toJoin.add(acceptor);
        for (Thread t : toJoin) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (SocketException ignored) {
            // already closed by the other pump
        } catch (Exception ignored) {
            // closing on the way out; nothing to report to
        }
    }
}
