package io.pegaflow.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.SessionEvent;
import io.pegaflow.proto.SessionRequest;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The reference client pings every 30 s, also while its Session stream is idle (novitalabs/pegaflow v0.22.4, the
 * connector's gRPC channel). With grpc-java's default server policy such pings earn GOAWAY {@code too_many_pings}, the
 * Session dies and the instance is torn down. This test pings at the fastest rate grpc-java allows (10 s) against the
 * server's shipped policy, for long enough that the default policy would have killed the stream, and checks the Session
 * is still installed.
 */
@Tag("slow")
@Timeout(120)
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.NONE,
        properties = {"spring.grpc.server.port=0", "pega.pool.size=4MB", "pega.device.backend=host"})
class KeepaliveSessionTest {

    @Autowired
    GrpcPort grpcPort;

    @Autowired
    PegaEngine engine;

    @Test
    void shouldKeepAnIdleSessionAliveUnderClientKeepalivePings() throws Exception {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", grpcPort.port())
                .usePlaintext()
                .keepAliveTime(10, TimeUnit.SECONDS)
                .keepAliveWithoutCalls(true)
                .build();
        try {
            CountDownLatch ended = new CountDownLatch(1);
            AtomicReference<Throwable> error = new AtomicReference<>();
            EngineGrpc.newStub(channel)
                    .session(
                            SessionRequest.newBuilder()
                                    .setInstanceId("idle-session")
                                    .setNamespace("ns")
                                    .setTpSize(1)
                                    .setWorldSize(1)
                                    .build(),
                            new StreamObserver<SessionEvent>() {
                                @Override
                                public void onNext(SessionEvent value) {}

                                @Override
                                public void onError(Throwable t) {
                                    error.set(t);
                                    ended.countDown();
                                }

                                @Override
                                public void onCompleted() {
                                    ended.countDown();
                                }
                            });
            // Three pings at 10 s spacing: the default 5-minute permit would have sent GOAWAY after the second.
            boolean endedEarly = ended.await(35, TimeUnit.SECONDS);
            assertThat(endedEarly).as("session ended: %s", error.get()).isFalse();
            assertThat(engine.status().sessionCount()).isEqualTo(1);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
