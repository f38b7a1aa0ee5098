package io.pegaflow.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.pegaflow.core.device.ProcessUid;
import io.pegaflow.proto.ext.push.PdPushGrpc;
import io.pegaflow.proto.ext.push.RegisterPushLayersRequest;
import io.pegaflow.proto.ext.push.WatchReceiveEvent;
import io.pegaflow.proto.ext.push.WatchReceiveRequest;
import io.pegaflow.push.grpc.PdPushGrpcService;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Iterator;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * PdPush errors are mapped by the edge chain, as every engine RPC's are: an engine error keeps its status and message,
 * and an unexpected failure reaches the client as INTERNAL {@code "internal error"}, with no class name or message of
 * ours (the service used to send {@code e.toString()}).
 */
@Timeout(60)
class PushEdgeErrorsTest {
    private PushNode node;
    private Server server;
    private ManagedChannel channel;
    private PdPushGrpc.PdPushBlockingStub stub;

    @BeforeEach
    void start() throws Exception {
        node = PushNode.start("tcp", PushConfig.defaults());
        PdPushGrpcService service = new PdPushGrpcService(node.engine, () -> {
            if ("boom".equals(BOOM.get())) {
                throw new IllegalStateException("peer credentials of /secret/path unreadable");
            }
            return OptionalInt.of(ProcessUid.current());
        });
        server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(ServerInterceptors.intercept(service, PushEdge.chain()))
                .build()
                .start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
                .usePlaintext()
                .build();
        stub = PdPushGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    /** Which instance id the caller-uid lookup fails for; set per call on the test thread, read on the server's. */
    private static final AtomicReference<String> BOOM = new AtomicReference<>("");

    @AfterEach
    void stop() throws Exception {
        BOOM.set("");
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        node.close();
    }

    @Test
    void shouldAnswerAnUnexpectedFailureWithInternalAndNoClassName() {
        BOOM.set("boom");

        assertThatThrownBy(() -> stub.registerPushLayers(RegisterPushLayersRequest.newBuilder()
                        .setInstanceId("boom")
                        .build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
                    assertThat(e.getStatus().getDescription())
                            .isEqualTo("internal error")
                            .doesNotContain("IllegalStateException")
                            .doesNotContain("/secret/path");
                });
    }

    @Test
    void shouldKeepAnEngineErrorsStatusAndMessage() {
        assertThatThrownBy(() -> stub.registerPushLayers(
                        RegisterPushLayersRequest.newBuilder().setInstanceId("").build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription())
                            .isEqualTo("invalid argument: instance_id must not be empty");
                });
    }

    @Test
    void shouldRefuseAWatchOfAnUnknownReceiveThroughTheEdge() {
        Iterator<WatchReceiveEvent> events = stub.watchReceive(
                WatchReceiveRequest.newBuilder().setReceiveId(42).build());

        assertThatThrownBy(events::hasNext).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
            assertThat(e.getStatus().getDescription()).startsWith("receive 42 is not open");
        });
    }
}
