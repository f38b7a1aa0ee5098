package io.pegaflow.metaserver.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.pegaflow.metaserver.node.NodeRegistry.HeartbeatOutcome;
import io.pegaflow.metaserver.node.SessionRejectedException.Reason;
import io.pegaflow.metaserver.support.AdjustableClock;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The node lifecycle rules ({@code docs/metaserver.md}) plus persistent fencing (ADR 0002), run against every database
 * the metaserver supports: each subclass supplies a freshly migrated database per test.
 */
abstract class NodeLifecycleContract {

    static final long STALE_MS = 30_000;
    static final long TTL_MS = 120 * 60_000L;
    static final String NODE = "10.0.0.1:50055";

    final AdjustableClock clock = new AdjustableClock();
    JdbcNodeStore store;
    NodeRegistry registry;

    /** A new, migrated, empty database. */
    abstract DataSource newDatabase() throws Exception;

    @BeforeEach
    void setUpRegistry() throws Exception {
        store = new JdbcNodeStore(newDatabase());
        registry = new NodeRegistry(store, clock, STALE_MS, TTL_MS);
    }

    /** A restart: a new registry over the same database. */
    NodeRegistry restart() {
        return new NodeRegistry(store, clock, STALE_MS, TTL_MS);
    }

    static Reason rejection(ThrowingCall call) {
        SessionRejectedException e = catchThrowableOfType(SessionRejectedException.class, call::run);
        assertThat(e).as("expected a rejection").isNotNull();
        return e.reason();
    }

    @FunctionalInterface
    interface ThrowingCall {
        void run() throws Exception;
    }

    @Test
    void shouldRegisterThenRefreshTheSameSession() throws Exception {
        UUID id = UUID.randomUUID();
        assertThat(registry.heartbeat(NODE, id)).isEqualTo(HeartbeatOutcome.REGISTERED);
        clock.advance(Duration.ofSeconds(10));
        assertThat(registry.heartbeat(NODE, id)).isEqualTo(HeartbeatOutcome.REFRESHED);
        assertThat(registry.session(NODE).orElseThrow().lastSeenMs()).isEqualTo(clock.millis());
        assertThat(store.loadNodes()).singleElement().satisfies(row -> {
            assertThat(row.id()).isEqualTo(id);
            assertThat(row.lastSeenMs()).isEqualTo(clock.millis());
        });
    }

    @Test
    void shouldReviveAStaleSessionWithTheSameId() throws Exception {
        UUID id = UUID.randomUUID();
        registry.heartbeat(NODE, id);
        clock.advance(Duration.ofMinutes(5));
        NodeSession before = registry.session(NODE).orElseThrow();
        assertThat(before.isVisible(clock.millis(), STALE_MS)).isFalse();

        assertThat(registry.heartbeat(NODE, id)).isEqualTo(HeartbeatOutcome.REFRESHED);
        assertThat(registry.session(NODE).orElseThrow().isVisible(clock.millis(), STALE_MS))
                .isTrue();
    }

    @Test
    void shouldRejectANewIdWhileTheOldSessionIsFresh() throws Exception {
        UUID old = UUID.randomUUID();
        registry.heartbeat(NODE, old);
        clock.advance(Duration.ofMillis(STALE_MS)); // exactly at the limit is still fresh

        assertThat(rejection(() -> registry.heartbeat(NODE, UUID.randomUUID()))).isEqualTo(Reason.STALE_SESSION);
        assertThat(registry.session(NODE).orElseThrow().id()).isEqualTo(old);
    }

    @Test
    void shouldCountWritesAsLivenessWhenDecidingATakeover() throws Exception {
        UUID old = UUID.randomUUID();
        registry.heartbeat(NODE, old);
        clock.advance(Duration.ofSeconds(25));
        registry.touch(NODE, old); // an insert: only in memory
        clock.advance(Duration.ofSeconds(25));

        assertThat(rejection(() -> registry.heartbeat(NODE, UUID.randomUUID()))).isEqualTo(Reason.STALE_SESSION);
    }

    @Test
    void shouldTakeOverAStaleAddressAndFenceTheOldIdForGood() throws Exception {
        UUID old = UUID.randomUUID();
        UUID fresh = UUID.randomUUID();
        registry.heartbeat(NODE, old);
        NodeSession oldSession = registry.session(NODE).orElseThrow();
        clock.advance(Duration.ofMillis(STALE_MS + 1));

        assertThat(registry.heartbeat(NODE, fresh)).isEqualTo(HeartbeatOutcome.TAKEOVER);
        assertThat(oldSession.ended()).isTrue();
        assertThat(registry.takeovers()).isEqualTo(1);
        assertThat(rejection(() -> registry.touch(NODE, old))).isEqualTo(Reason.STALE_SESSION);

        // The reference would let the old id back once the new session goes quiet; the fence does not.
        clock.advance(Duration.ofMinutes(10));
        assertThat(rejection(() -> registry.heartbeat(NODE, old))).isEqualTo(Reason.FENCED);
        assertThat(registry.session(NODE).orElseThrow().id()).isEqualTo(fresh);
        assertThat(store.loadFencedSessions()).singleElement().satisfies(fence -> {
            assertThat(fence.id()).isEqualTo(old);
            assertThat(fence.supersededBy()).isEqualTo(fresh);
            assertThat(fence.url()).isEqualTo(NODE);
        });
        assertThat(store.loadNodes())
                .singleElement()
                .satisfies(row -> assertThat(row.takeovers()).isEqualTo(1));
    }

    @Test
    void shouldKeepSessionsAndFencesAcrossARestart() throws Exception {
        UUID old = UUID.randomUUID();
        UUID fresh = UUID.randomUUID();
        registry.heartbeat(NODE, old);
        clock.advance(Duration.ofMinutes(1));
        registry.heartbeat(NODE, fresh);
        long epochBefore = store.startEpoch(clock.millis()).epoch();

        NodeRegistry restarted = restart();

        assertThat(store.startEpoch(clock.millis()).epoch()).isEqualTo(epochBefore + 1);
        assertThat(restarted.touch(NODE, fresh).id()).isEqualTo(fresh); // writes resume without a heartbeat
        assertThat(rejection(() -> restarted.touch(NODE, old))).isEqualTo(Reason.STALE_SESSION);
        clock.advance(Duration.ofMinutes(5));
        assertThat(rejection(() -> restarted.heartbeat(NODE, old))).isEqualTo(Reason.FENCED);
    }

    @Test
    void shouldRefuseWritesFromUnknownAddresses() {
        assertThat(rejection(() -> registry.touch(NODE, UUID.randomUUID()))).isEqualTo(Reason.UNKNOWN_NODE);
    }

    @Test
    void shouldUnregisterOnlyTheCurrentSession() throws Exception {
        UUID old = UUID.randomUUID();
        UUID fresh = UUID.randomUUID();
        assertThat(rejection(() -> registry.unregister(NODE, old))).isEqualTo(Reason.UNKNOWN_NODE);
        registry.heartbeat(NODE, old);
        clock.advance(Duration.ofMinutes(1));
        registry.heartbeat(NODE, fresh);

        // A late unregister of the superseded session must not end the new one.
        assertThat(rejection(() -> registry.unregister(NODE, old))).isEqualTo(Reason.STALE_SESSION);
        NodeSession current = registry.session(NODE).orElseThrow();
        registry.unregister(NODE, fresh);

        assertThat(current.ended()).isTrue();
        assertThat(registry.session(NODE)).isEmpty();
        assertThat(store.loadNodes()).isEmpty();
        assertThat(rejection(() -> registry.touch(NODE, fresh))).isEqualTo(Reason.UNKNOWN_NODE);
        // As in the reference, an unregistered id may register again (it was not fenced).
        assertThat(registry.heartbeat(NODE, fresh)).isEqualTo(HeartbeatOutcome.REGISTERED);
    }

    @Test
    void shouldSweepNodesSilentForLongerThanTheTtl() throws Exception {
        UUID quiet = UUID.randomUUID();
        UUID busy = UUID.randomUUID();
        registry.heartbeat(NODE, quiet);
        registry.heartbeat("10.0.0.2:50055", busy);
        clock.advance(Duration.ofMillis(TTL_MS));
        registry.touch("10.0.0.2:50055", busy);
        clock.advance(Duration.ofSeconds(1));

        assertThat(registry.sweepExpired(Duration.ofDays(7).toMillis())).isEqualTo(1);
        assertThat(registry.session(NODE)).isEmpty();
        assertThat(registry.session("10.0.0.2:50055")).isPresent();
        assertThat(store.loadNodes()).extracting(NodeRow::url).containsExactly("10.0.0.2:50055");
    }

    @Test
    void shouldPurgeFencesAfterTheirRetention() throws Exception {
        registry.heartbeat(NODE, UUID.randomUUID());
        clock.advance(Duration.ofMinutes(1));
        registry.heartbeat(NODE, UUID.randomUUID());
        assertThat(store.loadFencedSessions()).hasSize(1);

        clock.advance(Duration.ofHours(2));
        registry.heartbeat(NODE, registry.session(NODE).orElseThrow().id());
        registry.sweepExpired(Duration.ofHours(1).toMillis());

        assertThat(store.loadFencedSessions()).isEmpty();
    }

    @Test
    void shouldSeeTakeoversMadeByAnotherReplica() throws Exception {
        NodeRegistry replica = restart(); // a second metaserver on the same database
        UUID old = UUID.randomUUID();
        UUID fresh = UUID.randomUUID();
        registry.heartbeat(NODE, old);
        replica.refreshFromStore();
        assertThat(replica.touch(NODE, old).id()).isEqualTo(old);
        clock.advance(Duration.ofMinutes(1));

        replica.heartbeat(NODE, fresh);
        assertThat(rejection(() -> registry.heartbeat(NODE, old))).isEqualTo(Reason.FENCED);
        registry.refreshFromStore();

        assertThat(rejection(() -> registry.touch(NODE, old))).isEqualTo(Reason.STALE_SESSION);
        assertThat(registry.touch(NODE, fresh).id()).isEqualTo(fresh);
    }
}
