package io.pegaflow.server.grpc;

import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.pegaflow.kernel.agent.NanoClock;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code pega.grpc.max-connections} (decision 0031 §4): the gRPC listener accepts at most this many connections at once;
 * one more is closed as it is accepted, before a byte of it is read, and counted. grpc-java has no such bound, and
 * every connection may hold {@code max-concurrent-calls-per-connection} streams with their buffers, so without it the
 * connection count was the one thing a caller could multiply freely.
 *
 * <p>The bound lives in the accepting channel, so the listener runs on NIO event loops of its own (a boss thread
 * and grpc-java's default worker count), shut down with this object.
 */
final class ConnectionLimit implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionLimit.class);
    private static final long LOG_INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final int max;
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicLong refused = new AtomicLong();
    private final NanoClock clock;
    private final AtomicLong lastLogged;
    private final EventLoopGroup boss = new MultiThreadIoEventLoopGroup(
            1, new DefaultThreadFactory("pega-grpc-accept", true), NioIoHandler.newFactory());
    // 0: Netty's default, twice the cores, as grpc-java's shared worker group
    private final EventLoopGroup workers = new MultiThreadIoEventLoopGroup(
            0, new DefaultThreadFactory("pega-grpc-io", true), NioIoHandler.newFactory());

    ConnectionLimit(int max, NanoClock clock) {
        if (max < 1) {
            throw new IllegalArgumentException("pega.grpc.max-connections: " + max + " (expected: >= 1)");
        }
        this.max = max;
        this.clock = clock;
        this.lastLogged = new AtomicLong(clock.nanoTime() - LOG_INTERVAL_NANOS);
    }

    /** Puts the bound into the listener. */
    void applyTo(NettyServerBuilder builder) {
        builder.channelFactory(() -> new BoundedServerChannel(this))
                .bossEventLoopGroup(boss)
                .workerEventLoopGroup(workers);
    }

    int open() {
        return open.get();
    }

    long refused() {
        return refused.get();
    }

    int max() {
        return max;
    }

    private boolean admit() {
        for (; ; ) {
            int n = open.get();
            if (n >= max) {
                refused.incrementAndGet();
                return false;
            }
            if (open.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    private void refusedOne(Channel child) {
        long now = clock.nanoTime();
        long last = lastLogged.get();
        if (now - last >= LOG_INTERVAL_NANOS && lastLogged.compareAndSet(last, now)) {
            LOG.warn(
                    "gRPC connection from {} closed at accept: {} connections open, pega.grpc.max-connections is {}"
                            + " ({} refused so far; logged once a minute)",
                    child.remoteAddress(),
                    open.get(),
                    max,
                    refused.get());
        }
    }

    /** A NIO accepting channel that closes each connection past the bound instead of handing it to gRPC. */
    private static final class BoundedServerChannel extends NioServerSocketChannel {
        private final ConnectionLimit limit;

        BoundedServerChannel(ConnectionLimit limit) {
            this.limit = limit;
        }

        @Override
        protected int doReadMessages(List<Object> buf) throws Exception {
            int before = buf.size();
            int accepted = super.doReadMessages(buf);
            for (int i = buf.size() - 1; i >= before; i--) {
                Channel child = (Channel) buf.get(i);
                if (limit.admit()) {
                    child.closeFuture().addListener(f -> limit.open.decrementAndGet());
                } else {
                    buf.remove(i);
                    limit.refusedOne(child);
                    child.unsafe().closeForcibly();
                }
            }
            // what was accepted, refused or not, so the accept loop goes on draining the backlog
            return accepted;
        }
    }

    @Override
    public void close() {
        // the listener has stopped (the gRPC lifecycle ends before beans are destroyed); wait for the loops' threads
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
