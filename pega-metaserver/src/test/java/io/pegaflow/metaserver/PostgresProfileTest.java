package io.pegaflow.metaserver;

import static io.pegaflow.metaserver.grpc.Requests.h;
import static io.pegaflow.metaserver.grpc.Requests.heartbeat;
import static io.pegaflow.metaserver.grpc.Requests.insert;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.metaserver.node.NodeRegistry;
import io.pegaflow.metaserver.support.AdjustableClock;
import io.pegaflow.metaserver.support.Databases;
import io.pegaflow.metaserver.support.Databases.PostgresSchema;
import io.pegaflow.metaserver.support.MetaserverTestApp;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code postgres} profile against a real PostgreSQL server: the same Flyway scripts migrate it, fencing survives
 * a restart, and two replicas on one database share fences. Runs when {@code PEGA_TEST_POSTGRES_URL} names a server
 * ({@code .ci/postgres.sh} prints one) and is skipped otherwise.
 */
@Tag("integration")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PostgresProfileTest {

    static final Metadata.Key<String> EPOCH =
            Metadata.Key.of("pega-metaserver-epoch", Metadata.ASCII_STRING_MARSHALLER);
    static final String NODE = "10.6.0.1:50055";

    @TempDir
    Path dir;

    final AdjustableClock clock = new AdjustableClock();
    PostgresSchema schema;

    @BeforeEach
    void createSchema() throws Exception {
        String url = Databases.postgresUrlOrSkip();
        schema = PostgresSchema.create(url);
    }

    @AfterEach
    void dropSchema() throws Exception {
        if (schema != null) {
            schema.close();
        }
    }

    MetaserverTestApp replica() {
        return MetaserverTestApp.start(
                dir, clock, "--spring.profiles.active=postgres", "--spring.datasource.url=" + schema.url());
    }

    static Status refusal(Runnable call) {
        return catchThrowableOfType(StatusRuntimeException.class, call::run).getStatus();
    }

    @Test
    void shouldKeepFencingAcrossARestartOnPostgres() {
        UUID old = UUID.randomUUID();
        UUID successor = UUID.randomUUID();
        try (MetaserverTestApp first = replica()) {
            first.stub().heartbeatNode(heartbeat(NODE, old));
            clock.advance(Duration.ofSeconds(31));
            first.stub().heartbeatNode(heartbeat(NODE, successor));
        }
        try (MetaserverTestApp second = replica()) {
            assertThat(second.stub()
                            .insertBlockHashes(insert("ns", NODE, successor, h(1)))
                            .getInsertedCount())
                    .isEqualTo(1);
            clock.advance(Duration.ofMinutes(2));
            Status refused = refusal(() -> second.stub().heartbeatNode(heartbeat(NODE, old)));
            assertThat(refused.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
            assertThat(refused.getDescription()).isEqualTo("stale node session");
        }
    }

    @Test
    void shouldShareSessionsAndFencesBetweenTwoReplicas() {
        UUID old = UUID.randomUUID();
        UUID successor = UUID.randomUUID();
        try (MetaserverTestApp one = replica();
                MetaserverTestApp two = replica()) {
            one.stub().heartbeatNode(heartbeat(NODE, old));
            String epochOne = one.lastHeaders().get(EPOCH);
            two.stub().heartbeatNode(heartbeat("10.6.0.2:50055", UUID.randomUUID()));
            assertThat(two.lastHeaders().get(EPOCH)).isNotEqualTo(epochOne); // each process start has its own

            // A live session on replica one blocks a newcomer on replica two...
            assertThat(refusal(() -> two.stub().heartbeatNode(heartbeat(NODE, successor)))
                            .getCode())
                    .isEqualTo(Status.Code.FAILED_PRECONDITION);
            clock.advance(Duration.ofSeconds(31));
            // ...until it goes stale; then the takeover on two fences the old id on one as well.
            two.stub().heartbeatNode(heartbeat(NODE, successor));
            assertThat(refusal(() -> one.stub().heartbeatNode(heartbeat(NODE, old)))
                            .getCode())
                    .isEqualTo(Status.Code.FAILED_PRECONDITION);
            one.bean(NodeRegistry.class).refreshFromStore(); // what node-refresh-secs does periodically
            assertThat(refusal(() -> one.stub().insertBlockHashes(insert("ns", NODE, old, h(1))))
                            .getDescription())
                    .isEqualTo("stale node session");
            assertThat(one.stub()
                            .insertBlockHashes(insert("ns", NODE, successor, h(1)))
                            .getInsertedCount())
                    .isEqualTo(1);
        }
    }
}
