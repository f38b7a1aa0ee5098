package io.pegaflow.metaserver;

import static io.pegaflow.metaserver.grpc.Requests.h;
import static io.pegaflow.metaserver.grpc.Requests.heartbeat;
import static io.pegaflow.metaserver.grpc.Requests.insert;
import static io.pegaflow.metaserver.grpc.Requests.prefixes;
import static io.pegaflow.metaserver.grpc.Requests.query;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.entry;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import io.pegaflow.proto.MetaServerGrpc.MetaServerBlockingStub;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A metaserver process restart (the Spring application closed and started again over the same H2 file): node
 * sessions and fences survive, the block index does not, and the epoch in the response metadata changes so servers
 * know to re-announce.
 */
@Tag("integration")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetaserverRestartTest {

    static final Metadata.Key<String> EPOCH =
            Metadata.Key.of("pega-metaserver-epoch", Metadata.ASCII_STRING_MARSHALLER);
    static final String TAKEN = "10.8.0.1:50055";
    static final String OTHER = "10.8.0.2:50055";

    @TempDir
    Path dir;

    final AdjustableClock clock = new AdjustableClock();

    @Test
    void shouldKeepFencingAndAnnounceANewEpochAfterARestart() {
        UUID old = UUID.randomUUID();
        UUID successor = UUID.randomUUID();
        UUID other = UUID.randomUUID();
        String epochBefore;
        try (MetaserverTestApp first = MetaserverTestApp.start(dir, clock)) {
            MetaServerBlockingStub stub = first.stub();
            stub.heartbeatNode(heartbeat(TAKEN, old));
            clock.advance(Duration.ofSeconds(31));
            stub.heartbeatNode(heartbeat(TAKEN, successor));
            stub.heartbeatNode(heartbeat(OTHER, other));
            stub.insertBlockHashes(insert("ns", OTHER, other, h(1), h(2)));
            epochBefore = first.lastHeaders().get(EPOCH);
        }
        clock.advance(Duration.ofSeconds(5));

        try (MetaserverTestApp second = MetaserverTestApp.start(dir, clock)) {
            MetaServerBlockingStub stub = second.stub();

            // The index is soft state: empty until servers re-announce, which the new epoch tells them to do.
            assertThat(prefixes(stub.queryPrefixBlocks(query("ns", h(1))))).isEmpty();
            assertThat(Long.parseLong(second.lastHeaders().get(EPOCH))).isEqualTo(Long.parseLong(epochBefore) + 1);

            // Known sessions write at once, without a new heartbeat; the re-announced blocks are visible.
            stub.insertBlockHashes(insert("ns", OTHER, other, h(1), h(2)));
            stub.insertBlockHashes(insert("ns", TAKEN, successor, h(1)));
            assertThat(prefixes(stub.queryPrefixBlocks(query("ns", h(1), h(2)))))
                    .containsOnly(entry(OTHER, 2), entry(TAKEN, 1));

            // The fenced id stays refused, even once its successor has gone quiet.
            clock.advance(Duration.ofMinutes(2));
            StatusRuntimeException refused =
                    catchThrowableOfType(StatusRuntimeException.class, () -> stub.heartbeatNode(heartbeat(TAKEN, old)));
            assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
            assertThat(refused.getStatus().getDescription()).isEqualTo("stale node session");
            StatusRuntimeException write = catchThrowableOfType(
                    StatusRuntimeException.class, () -> stub.insertBlockHashes(insert("ns", TAKEN, old, h(1))));
            assertThat(write.getStatus().getDescription()).isEqualTo("stale node session");
        }
    }
}
