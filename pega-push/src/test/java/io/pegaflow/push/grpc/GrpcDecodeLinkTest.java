package io.pegaflow.push.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import org.junit.jupiter.api.Test;

/**
 * How a WatchReceive error reads for its push. A short push can complete its receive with its LayerArrived calls
 * before its watch reaches the decode server, which then answers FAILED_PRECONDITION: a push failed on that alone
 * would report a failure for bytes that all arrived (PushPythonClientTest caught it once in CI).
 */
class GrpcDecodeLinkTest {

    @Test
    void shouldNotTakeAReceiveThatEndedBeforeItsWatchForABrokenLink() {
        String notOpen = "receive 42 is not open on this decode server (finished, failed, timed out or never prepared)";
        assertThat(GrpcDecodeLink.brokenLink(Status.FAILED_PRECONDITION.withDescription(notOpen)))
                .isNull();
    }

    @Test
    void shouldReportEveryOtherEndOfTheWatchAsABrokenLinkNamingTheStatus() {
        assertThat(GrpcDecodeLink.brokenLink(Status.UNAVAILABLE.withDescription("Keepalive failed")))
                .isEqualTo("the decode server's link broke (UNAVAILABLE: Keepalive failed)");
        assertThat(GrpcDecodeLink.brokenLink(Status.DEADLINE_EXCEEDED)).startsWith("the decode server's link broke");
        assertThat(GrpcDecodeLink.brokenLink(Status.INTERNAL)).startsWith("the decode server's link broke");
    }
}
