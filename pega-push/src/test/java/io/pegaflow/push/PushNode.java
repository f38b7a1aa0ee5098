package io.pegaflow.push;

import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.NettyServerBuilder;
import io.pegaflow.core.device.DeviceBackend;
import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.core.device.host.HostDeviceBackend;
import io.pegaflow.core.engine.EngineConfig;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.core.memory.PinnedMemoryPool;
import io.pegaflow.core.memory.PoolConfig;
import io.pegaflow.kernel.agent.AgentGroup;
import io.pegaflow.kernel.agent.NanoClock;
import io.pegaflow.push.grpc.GrpcDecodeLink;
import io.pegaflow.push.grpc.PdPushGrpcService;
import io.pegaflow.push.grpc.PushWire;
import io.pegaflow.push.layout.HandshakeSeal;
import io.pegaflow.transfer.TransferConfig;
import io.pegaflow.transfer.TransferEngine;
import io.pegaflow.transfer.ucx.UcxSharedMemory;
import io.pegaflow.transfer.ucx.UcxTransferEngine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One push server as the sidecar runs it, without Spring: its own pinned pool and the cache engine over it (push staging
 * comes from the engine's {@link PegaEngine#staging() allocator}), the host device backend, a UCX transfer engine over
 * the pool (TCP or shared memory on loopback), the push engine, and the PdPush gRPC service on an
 * ephemeral loopback port; or ({@link #onSharedContext}) with the pool allocated by a UCX context that the push engine
 * shares with a P2P transfer engine. {@link #kill()} drops it abruptly (the gRPC server first, with no goodbye to peers).
 */
final class PushNode implements AutoCloseable {
    final PinnedMemoryPool pool;
    final DeviceBackend backend;
    /** The cache engine; owns the pool and the backend. */
    final PegaEngine cache;

    final PushEngine engine;
    final Server server;
    final AgentGroup agents = new AgentGroup();
    private volatile int port = -1;
    private boolean closed;

    /** The context that allocated the pool, in a node started {@link #onSharedContext}; else null. */
    private final @Nullable UcxSharedMemory poolContext;
    /** The P2P transfer engine beside the push engine on {@link #poolContext}; else null. */
    private final @Nullable TransferEngine neighbour;

    private PushNode(String transports, PushConfig config, long poolBytes, boolean sharedContext, HandshakeSeal seal) {
        TransferConfig transferConfig = TransferConfig.of("lo", 2).withTransports(transports);
        poolContext = sharedContext ? UcxSharedMemory.open(transferConfig) : null;
        pool = poolContext == null
                ? PinnedMemoryPool.create(PoolConfig.of(poolBytes))
                : PinnedMemoryPool.create(PoolConfig.of(poolBytes), poolContext);
        backend = new HostDeviceBackend();
        cache = PegaEngine.launch(EngineConfig.defaults(pool.config()), pool, backend);
        // as pega-server runs the remote tier's engine (other lane count) and the push engine on the pool's context
        neighbour = poolContext == null
                ? null
                : UcxTransferEngine.open(
                        TransferConfig.of("lo", 1).withTransports(transports),
                        poolContext,
                        pool.regions(),
                        NanoClock.SYSTEM);
        TransferEngine transfer = UcxTransferEngine.open(transferConfig, poolContext, pool.regions(), NanoClock.SYSTEM);
        engine = new PushEngine(
                config,
                seal,
                new PushWire(),
                cache.staging(),
                cache.sideRegistrations(),
                cache.workers(),
                transfer,
                new GrpcDecodeLink(config.rpcTimeout()),
                NanoClock.SYSTEM,
                agents,
                () -> "127.0.0.1:" + port);
        try {
            // the keepalive settings of pega-server's application.yml (spring.grpc.server.keep-alive.*)
            server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                    .keepAliveTime(30, TimeUnit.SECONDS)
                    .keepAliveTimeout(10, TimeUnit.SECONDS)
                    .permitKeepAliveTime(4, TimeUnit.SECONDS)
                    .permitKeepAliveWithoutCalls(true)
                    .addService(ServerInterceptors.intercept(
                            new PdPushGrpcService(engine, () -> OptionalInt.of(ProcessUid.current())),
                            PushEdge.chain()))
                    .build()
                    .start();
        } catch (IOException e) {
            engine.close();
            throw new UncheckedIOException(e);
        }
        port = server.getPort();
    }

    static PushNode start(String transports, PushConfig config) {
        return new PushNode(transports, config, 64L << 20, false, HandshakeSeal.none());
    }

    static PushNode start(String transports, PushConfig config, long poolBytes) {
        return new PushNode(transports, config, poolBytes, false, HandshakeSeal.none());
    }

    /** A node whose handshakes are sealed with {@code seal} (a cluster credential), and checked against it. */
    static PushNode start(String transports, PushConfig config, HandshakeSeal seal) {
        return new PushNode(transports, config, 64L << 20, false, seal);
    }

    /**
     * A node whose pool a UCX context allocated in shared memory, with the push engine and a second transfer engine
     * both on that context, as pega-server runs P2P and the push together (decision 0019).
     */
    static PushNode onSharedContext(String transports, PushConfig config) {
        return new PushNode(transports, config, 64L << 20, true, HandshakeSeal.none());
    }

    /** The context that allocated the pool ({@link #onSharedContext}). */
    UcxSharedMemory poolContext() {
        if (poolContext == null) {
            throw new IllegalStateException("this node's pool is mapped privately");
        }
        return poolContext;
    }

    int port() {
        return port;
    }

    /** Stops serving at once and closes the engine: in-flight calls to this node fail, peers get no notice. */
    void kill() {
        close();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        server.shutdownNow();
        try {
            server.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        engine.close();
        if (neighbour != null) {
            neighbour.close();
        }
        cache.close(); // and with it the backend and the pool
        if (poolContext != null) {
            poolContext.close();
        }
    }
}
