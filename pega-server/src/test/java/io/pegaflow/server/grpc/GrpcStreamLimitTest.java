package io.pegaflow.server.grpc;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.edge.rpc.EdgeInterceptor;
import io.pegaflow.edge.rpc.EdgeStage;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import io.pegaflow.proto.SaveRequest;
import io.pegaflow.proto.SaveResponse;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;

/**
 * One HTTP/2 connection holds at most {@code pega.grpc.max-concurrent-calls-per-connection} (40) streams (decision
 * 0030 §3): a client opens 40 Saves on one connection and sends their headers but never their message, as a slow or
 * hostile sender would, then a 41st call (a Health). The server starts the 40 Saves; the 41st waits in the client until
 * one of the 40 ends (the client holds it). Meanwhile
 * a worker on its own connection registers, saves and loads its blocks byte-exact. Before the limit the server
 * advertised an unlimited stream count and started all 41, each buffering up to the inbound message limit.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=32MB",
            "pega.device.backend=host"
        })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GrpcStreamLimitTest {
    static final String HOST = "127.0.0.1";
    static final Duration WAIT = Duration.ofSeconds(20);
    static final AtomicInteger STARTED_SAVES = new AtomicInteger();

    @TestConfiguration
    static class CountSaves {
        /** Counts Saves the server started: a call starts at its headers, before any message. */
        @Bean
        EdgeInterceptor countStartedSaves() {
            return new EdgeInterceptor() {
                @Override
                public EdgeStage stage() {
                    return EdgeStage.METRICS;
                }

                @Override
                public <Q, R> ServerCall.Listener<Q> interceptCall(
                        ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                    if (call.getMethodDescriptor()
                            .getFullMethodName()
                            .equals(EngineGrpc.getSaveMethod().getFullMethodName())) {
                        STARTED_SAVES.incrementAndGet();
                    }
                    return next.startCall(call, headers);
                }
            };
        }
    }

    @Autowired
    GrpcPort port;

    @Autowired
    PegaEngine engine;

    @Test
    void shouldStartAtMost40StreamsOfOneConnectionWhileAnotherConnectionSaves() throws Exception {
        ManagedChannel stalled = ManagedChannelBuilder.forAddress(HOST, port.port())
                .usePlaintext()
                .build();
        List<ClientCall<SaveRequest, SaveResponse>> calls = new ArrayList<>();
        int before = STARTED_SAVES.get();
        try {
            // one call first, so the client has the server's SETTINGS (its stream limit) before it opens more
            assertThat(EngineGrpc.newBlockingStub(stalled)
                            .withDeadlineAfter(WAIT.toSeconds(), TimeUnit.SECONDS)
                            .health(HealthRequest.getDefaultInstance())
                            .getStatus()
                            .getOk())
                    .isTrue();
            for (int i = 0; i < 40; i++) {
                ClientCall<SaveRequest, SaveResponse> call =
                        stalled.newCall(EngineGrpc.getSaveMethod(), CallOptions.DEFAULT);
                call.start(new ClientCall.Listener<>() {}, new Metadata());
                call.request(1);
                calls.add(call); // headers only: the message never comes
            }
            // the 41st stream: a complete Health call, whose write also flushes the 40 headers (grpc-java holds a
            // unary call's headers back until its message)
            var health = EngineGrpc.newFutureStub(stalled).health(HealthRequest.getDefaultInstance());
            await().atMost(WAIT)
                    .untilAsserted(() -> assertThat(STARTED_SAVES.get() - before)
                            .as("Saves started on the stalled connection")
                            .isEqualTo(40));

            List<ByteString> hashes = BlockPattern.hashes(4040, 16);
            try (MockScheduler scheduler = MockScheduler.connect(HOST, port.port());
                    MockVllmWorker worker = MockVllmWorker.builder(HOST, port.port())
                            .instanceId("stream-limit-worker")
                            .namespace("ns-stream-limit")
                            .layer("layer_0", KvLayout.contiguous(16, 64 * 1024))
                            .build()) {
                worker.register();
                worker.fillBlocks(blockIds(16), BlockPattern.perByte(4040));
                assertThat(worker.save(blockIds(16), hashes).getStatus().getOk())
                        .isTrue();
                scheduler.awaitSealed(worker.instanceId(), hashes, WAIT);
                worker.zeroBlocks(blockIds(16));
                var ready = scheduler.queryUntilReady(worker.instanceId(), hashes, "after", WAIT);
                assertThat(worker.load(ready.getLease(), blockIds(16)).succeeded())
                        .isTrue();
                worker.verifyBlocks(blockIds(16), BlockPattern.perByte(4040));
                worker.unregister();
            }
            assertThat(health.isDone())
                    .as("the stalled connection's 41st stream is still queued in its client")
                    .isFalse();

        } finally {
            calls.forEach(c -> c.cancel("test over", null));
            stalled.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
        // the stalled connection gone, the server answers as before
        try (MockScheduler after = MockScheduler.connect(HOST, port.port())) {
            assertThat(after.health().getStatus().getOk()).isTrue();
        }
        assertThat(engine.instanceIds()).isEmpty();
    }
}
