package io.pegaflow.server.grpc;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * What one HTTP/2 connection to the gRPC listener may hold, under {@code pega.grpc.*} (decision 0030 §3). grpc-java
 * buffers a request's bytes until its message is complete, up to {@code spring.grpc.server.max-inbound-message-size},
 * for every stream a connection opens; its default of no stream limit let one connection hold 40 half-sent 60 MiB
 * Saves and the direct-memory budget with them.
 *
 * @param maxConcurrentCallsPerConnection streams one connection may have open at once (HTTP/2
 *     {@code SETTINGS_MAX_CONCURRENT_STREAMS}); a client queues the rest until one ends. A connector opens one
 *     Session and one call per request in flight, far fewer
 * @param flowControlWindow the HTTP/2 flow-control window of a stream, so a stream whose bytes the server has not read
 *     yet holds at most this much unread
 * @param incompleteMessageTimeout how long a unary or server-streaming call may wait for its one request message after
 *     its headers; then it ends with DEADLINE_EXCEEDED and what it buffered is freed
 * @param maxConnections connections the listener holds open at once; one more is closed as it is accepted and
 *     counted (decision 0031 §4)
 */
@Validated
@ConfigurationProperties("pega.grpc")
public record GrpcTransportProperties(
        @Min(1) @Max(Integer.MAX_VALUE) @DefaultValue("40") int maxConcurrentCallsPerConnection,
        @NotNull @DefaultValue("1MB") DataSize flowControlWindow,
        @NotNull @DefaultValue("30s") Duration incompleteMessageTimeout,
        @Min(1) @DefaultValue("1024") int maxConnections) {

    /** The window in bytes, refused outside HTTP/2's 64 KiB .. 2^31-1 with a message naming the key. */
    public int flowControlWindowBytes() {
        long bytes = flowControlWindow.toBytes();
        if (bytes < 65_535 || bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    "pega.grpc.flow-control-window: " + flowControlWindow + " (expected: 64KB to 2147483647 bytes)");
        }
        return (int) bytes;
    }
}
