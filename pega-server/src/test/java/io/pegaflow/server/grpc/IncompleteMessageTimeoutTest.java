package io.pegaflow.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import io.pegaflow.proto.SaveRequest;
import io.pegaflow.proto.SaveResponse;
import io.pegaflow.testkit.MockScheduler;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;

/**
 * A call whose request message never completes ends (decision 0030 §3): a Save sends its headers and then nothing, as
 * a stalled sender's half-sent message; with {@code pega.grpc.incomplete-message-timeout=2s} the server closes it with
 * DEADLINE_EXCEEDED naming the key, forgets it, and keeps answering. Before, the call stayed open for as long as the
 * connection did, holding whatever it had buffered.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "server.address=127.0.0.1",
            "pega.pool.size=16MB",
            "pega.device.backend=host",
            "pega.grpc.incomplete-message-timeout=2s"
        })
@DirtiesContext
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IncompleteMessageTimeoutTest {
    static final String HOST = "127.0.0.1";

    @Autowired
    GrpcPort port;

    @Autowired
    IncompleteMessageTimeout timeouts;

    @Test
    void shouldEndACallWhoseMessageNeverComes() throws Exception {
        ManagedChannel channel = ManagedChannelBuilder.forAddress(HOST, port.port())
                .usePlaintext()
                .build();
        try {
            CompletableFuture<Status> closed = new CompletableFuture<>();
            ClientCall<SaveRequest, SaveResponse> stalled =
                    channel.newCall(EngineGrpc.getSaveMethod(), CallOptions.DEFAULT);
            stalled.start(
                    new ClientCall.Listener<>() {
                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            closed.complete(status);
                        }
                    },
                    new Metadata());
            stalled.request(1);
            // a complete call on the same connection flushes the stalled one's headers (grpc-java holds a unary
            // call's headers back until its message)
            assertThat(EngineGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(20, TimeUnit.SECONDS)
                            .health(HealthRequest.getDefaultInstance())
                            .getStatus()
                            .getOk())
                    .isTrue();

            Status status = closed.get(20, TimeUnit.SECONDS);
            assertThat(status.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
            assertThat(status.getDescription()).contains("pega.grpc.incomplete-message-timeout");
            assertThat(timeouts.waiting()).isZero();
            try (MockScheduler after = MockScheduler.connect(HOST, port.port())) {
                assertThat(after.health().getStatus().getOk()).isTrue();
            }
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}
