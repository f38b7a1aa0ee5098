package io.pegaflow.edge.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.HealthRequest;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Against a peer that accepts connections and never answers (the case a missing deadline hangs on): a call without a
 * deadline is refused at once, one with a deadline reaches the peer and ends at its deadline.
 */
@Timeout(30)
class DeadlineRequiredInterceptorTest {
    @Test
    void shouldRefuseACallWithoutADeadlineAndPassOneWithIt() throws Exception {
        try (ServerSocket blackHole = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", blackHole.getLocalPort())
                    .usePlaintext()
                    .intercept(new DeadlineRequiredInterceptor())
                    .build();
            try {
                EngineGrpc.EngineBlockingStub stub = EngineGrpc.newBlockingStub(channel);

                Status refused = catchThrowableOfType(
                                StatusRuntimeException.class, () -> stub.health(HealthRequest.getDefaultInstance()))
                        .getStatus();
                assertThat(refused.getCode()).isEqualTo(Status.Code.INTERNAL);
                assertThat(refused.getDescription())
                        .contains("pegaflow.Engine/Health")
                        .contains("has no deadline");

                Status timedOut = catchThrowableOfType(
                                StatusRuntimeException.class,
                                () -> stub.withDeadlineAfter(200, TimeUnit.MILLISECONDS)
                                        .health(HealthRequest.getDefaultInstance()))
                        .getStatus();
                assertThat(timedOut.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}
