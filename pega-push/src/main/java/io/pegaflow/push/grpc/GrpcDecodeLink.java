package io.pegaflow.push.grpc;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.protobuf.ByteString;
import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.pegaflow.proto.ext.push.LayerArrivedRequest;
import io.pegaflow.proto.ext.push.LayerArrivedResponse;
import io.pegaflow.proto.ext.push.PdPushGrpc;
import io.pegaflow.proto.ext.push.PushFailedRequest;
import io.pegaflow.proto.ext.push.PushFailedResponse;
import io.pegaflow.proto.ext.push.WatchReceiveEvent;
import io.pegaflow.proto.ext.push.WatchReceiveRequest;
import io.pegaflow.push.layout.ReceiveKey;
import io.pegaflow.push.prefill.DecodeLink;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * {@link DecodeLink} over gRPC: one channel (plaintext or TLS) per decode server address, created on first use and closed with
 * the engine. Every call has the {@code pega.pd.rpc-timeout} deadline.
 *
 * <p>While a call is open (the {@code WatchReceive} stream of a rank being pushed) the channel pings the decode server
 * every {@link #KEEPALIVE_TIME} and drops the connection when a ping is not answered within {@link #KEEPALIVE_TIMEOUT}:
 * a decode host that vanished without closing its sockets (power loss, a cut cable, a stopped process) then breaks the
 * stream within about 15 s, and the push fails at once instead of at its deadline. Servers permit pings this often
 * ({@code spring.grpc.server.keep-alive.permit-time}, 4 s).
 */
public final class GrpcDecodeLink implements DecodeLink, AutoCloseable {
    /** gRPC's lowest client keepalive interval, and what the servers permit. */
    public static final Duration KEEPALIVE_TIME = Duration.ofSeconds(10);

    public static final Duration KEEPALIVE_TIMEOUT = Duration.ofSeconds(5);

    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final long timeoutNanos;
    private final ChannelCredentials transport;
    private final ClientInterceptor[] interceptors;

    /** Plaintext channels. */
    public GrpcDecodeLink(Duration rpcTimeout, ClientInterceptor... interceptors) {
        this(rpcTimeout, InsecureChannelCredentials.create(), interceptors);
    }

    /**
     * @param transport plaintext or TLS; pega-server passes {@code pega.cluster.ssl-bundle}'s, whose key is the client
     *     certificate a decode server requiring one checks
     * @param interceptors on every channel to a decode server; pega-server adds the cluster credential, which the
     *     decode server requires on these server-to-server calls when it has one
     */
    public GrpcDecodeLink(Duration rpcTimeout, ChannelCredentials transport, ClientInterceptor... interceptors) {
        this.timeoutNanos = rpcTimeout.toNanos();
        this.transport = transport;
        this.interceptors = interceptors.clone();
    }

    private ManagedChannel channel(String address) {
        return channels.computeIfAbsent(
                address,
                a -> NettyChannelBuilder.forTarget(a, transport)
                        .keepAliveTime(KEEPALIVE_TIME.toNanos(), TimeUnit.NANOSECONDS)
                        .keepAliveTimeout(KEEPALIVE_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS)
                        .intercept(interceptors)
                        .build());
    }

    private PdPushGrpc.PdPushFutureStub stub(String address) {
        return PdPushGrpc.newFutureStub(channel(address)).withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void layerArrived(
            String address, ReceiveKey receive, int tpRank, int layer, Consumer<@Nullable Throwable> done) {
        var f = stub(address)
                .layerArrived(LayerArrivedRequest.newBuilder()
                        .setReceiveId(receive.id())
                        .setReceiveSecret(ByteString.copyFrom(receive.secret()))
                        .setTpRank(tpRank)
                        .setLayer(layer)
                        .build());
        Futures.addCallback(
                f,
                new FutureCallback<LayerArrivedResponse>() {
                    @Override
                    public void onSuccess(@Nullable LayerArrivedResponse r) {
                        done.accept(null);
                    }

                    @Override
                    public void onFailure(Throwable t) {
                        done.accept(t);
                    }
                },
                MoreExecutors.directExecutor());
    }

    @Override
    public void pushFailed(String address, ReceiveKey receive, int tpRank, String reason) {
        var f = stub(address)
                .pushFailed(PushFailedRequest.newBuilder()
                        .setReceiveId(receive.id())
                        .setReceiveSecret(ByteString.copyFrom(receive.secret()))
                        .setTpRank(tpRank)
                        .setReason(reason)
                        .build());
        Futures.addCallback(
                f,
                new FutureCallback<PushFailedResponse>() {
                    @Override
                    public void onSuccess(@Nullable PushFailedResponse r) {}

                    @Override
                    public void onFailure(Throwable t) {
                        // best effort: the decode side's own deadline fails the receive
                    }
                },
                MoreExecutors.directExecutor());
    }

    @Override
    public AutoCloseable watch(
            String address, ReceiveKey receive, int tpRank, long timeoutNanos, Consumer<String> broken) {
        AtomicBoolean over = new AtomicBoolean(); // closed by us, answered, or reported: nothing more to say
        AtomicReference<ClientCallStreamObserver<WatchReceiveRequest>> call = new AtomicReference<>();
        PdPushGrpc.newStub(channel(address))
                .withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS)
                .watchReceive(
                        WatchReceiveRequest.newBuilder()
                                .setReceiveId(receive.id())
                                .setReceiveSecret(ByteString.copyFrom(receive.secret()))
                                .setTpRank(tpRank)
                                .build(),
                        new ClientResponseObserver<WatchReceiveRequest, WatchReceiveEvent>() {
                            @Override
                            public void beforeStart(ClientCallStreamObserver<WatchReceiveRequest> requestStream) {
                                call.set(requestStream);
                            }

                            @Override
                            public void onNext(WatchReceiveEvent e) {
                                if (!over.compareAndSet(false, true)) {
                                    return;
                                }
                                if (e.getState() < 0) {
                                    broken.accept("the decode server failed the receive: " + e.getReason());
                                }
                            }

                            @Override
                            public void onError(Throwable t) {
                                if (over.compareAndSet(false, true)) {
                                    String reason = brokenLink(Status.fromThrowable(t));
                                    if (reason != null) {
                                        broken.accept(reason);
                                    }
                                }
                            }

                            @Override
                            public void onCompleted() {
                                over.set(true);
                            }
                        });
        return () -> {
            ClientCallStreamObserver<WatchReceiveRequest> c = call.get();
            if (over.compareAndSet(false, true) && c != null) {
                c.cancel("the push ended", null);
            }
        };
    }

    /**
     * What a watch's error means for its push: a lost link, or nothing (null). FAILED_PRECONDITION is the decode
     * server saying the receive is no longer open: it ended before the watch reached it, which a short push's
     * LayerArrived calls can cause by completing it first. That is not a broken link; the push's own LayerArrived
     * answers and deadline tell whether it succeeded.
     */
    static @Nullable String brokenLink(Status s) {
        if (s.getCode() == Status.Code.FAILED_PRECONDITION) {
            return null;
        }
        return "the decode server's link broke (" + s.getCode() + ": " + s.getDescription() + ")";
    }

    @Override
    public void close() {
        // a graceful shutdown first: the PushFailed calls of the pushes failed by the engine's close are in flight
        for (ManagedChannel ch : channels.values()) {
            ch.shutdown();
        }
        for (ManagedChannel ch : channels.values()) {
            try {
                if (!ch.awaitTermination(2, TimeUnit.SECONDS)) {
                    ch.shutdownNow();
                    ch.awaitTermination(2, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ch.shutdownNow();
            }
        }
        channels.clear();
    }
}
