package io.pegaflow.server.internode;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.kernel.agent.NanoClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The session state machine on a hand-moved clock: no server, no threads, no real time. */
@Timeout(10)
class MetaserverSessionTest {

    /** A clock the test moves. */
    static final class ManualClock implements NanoClock {
        long now = 1_000_000_000L;

        void advance(Duration d) {
            now += d.toNanos();
        }

        @Override
        public long nanoTime() {
            return now;
        }
    }

    private static final Duration INITIAL = Duration.ofMillis(100);
    private static final Duration MAX = Duration.ofSeconds(30);
    private final ManualClock clock = new ManualClock();

    private MetaserverSession session(Duration heartbeatInterval) {
        return new MetaserverSession(clock, heartbeatInterval, INITIAL, MAX);
    }

    private static final String DOWN = "HeartbeatNode: UNAVAILABLE: down";

    @Test
    void shouldHeartbeatAtOnceThenOncePerPeriod() {
        MetaserverSession s = session(Duration.ofSeconds(5));
        assertThat(s.heartbeatDue()).isTrue();
        assertThat(s.link()).isEqualTo(MetaserverLink.CONNECTING);

        assertThat(s.heartbeatSucceeded(30))
                .as("first contact establishes the session")
                .isTrue();
        assertThat(s.link()).isEqualTo(MetaserverLink.UP);
        assertThat(s.registered()).isTrue();
        clock.advance(Duration.ofMillis(4999));
        assertThat(s.heartbeatDue()).isFalse();
        clock.advance(Duration.ofMillis(1));
        assertThat(s.heartbeatDue()).isTrue();
        assertThat(s.heartbeatSucceeded(30))
                .as("a routine heartbeat establishes nothing")
                .isFalse();
    }

    @Test
    void shouldFollowHalfTheMetaserversStaleWindowWhenNoPeriodIsSet() {
        MetaserverSession s = session(null);
        s.heartbeatSucceeded(30);
        clock.advance(Duration.ofMillis(14_999));
        assertThat(s.heartbeatDue()).isFalse();
        clock.advance(Duration.ofMillis(1));
        assertThat(s.heartbeatDue()).isTrue();

        s.heartbeatSucceeded(1); // half of one second rounds to zero: at least a second
        clock.advance(Duration.ofMillis(999));
        assertThat(s.heartbeatDue()).isFalse();
        clock.advance(Duration.ofMillis(1));
        assertThat(s.heartbeatDue()).isTrue();
    }

    @Test
    void shouldBackOffDoublingToTheMaximumAndStartOverAfterASuccess() {
        MetaserverSession s = session(Duration.ofSeconds(5));
        long expectedMs = INITIAL.toMillis();
        for (int failure = 0; failure < 12; failure++) {
            s.callFailed(DOWN, false, false);
            assertThat(s.inBackoff()).isTrue();
            clock.advance(Duration.ofMillis(expectedMs - 1));
            assertThat(s.heartbeatDue()).as("backoff %d ms", expectedMs).isFalse();
            clock.advance(Duration.ofMillis(1));
            assertThat(s.heartbeatDue()).isTrue();
            assertThat(s.inBackoff())
                    .as("announcements try a heartbeat once the backoff passed")
                    .isFalse();
            expectedMs = Math.min(expectedMs * 2, MAX.toMillis());
        }
        assertThat(expectedMs).isEqualTo(MAX.toMillis());

        s.heartbeatSucceeded(30);
        s.callFailed(DOWN, false, false);
        clock.advance(INITIAL);
        assertThat(s.heartbeatDue()).as("a success resets the backoff").isTrue();
    }

    @Test
    void shouldReportAFailureStreakOnceAndTheLinkUntilItRecovers() {
        MetaserverSession s = session(Duration.ofSeconds(5));
        s.heartbeatSucceeded(30);

        MetaserverSession.Failure first = s.callFailed(DOWN, false, false);
        MetaserverSession.Failure second = s.callFailed(DOWN, false, false);

        assertThat(first.firstOfStreak()).isTrue();
        assertThat(second.firstOfStreak()).isFalse();
        assertThat(s.link()).isEqualTo(MetaserverLink.FAILING);
        assertThat(s.lastFailure()).isEqualTo(DOWN);
        assertThat(s.registered()).isFalse();
        assertThat(s.heartbeatSucceeded(30))
                .as("recovering re-establishes the session")
                .isTrue();
        assertThat(s.link()).isEqualTo(MetaserverLink.UP);
    }

    @Test
    void shouldTellAFenceFromAnOutage() {
        MetaserverSession s = session(Duration.ofSeconds(5));
        s.heartbeatSucceeded(30);

        MetaserverSession.Failure fenced =
                s.callFailed("InsertBlockHashes: FAILED_PRECONDITION: stale node session", true, true);

        assertThat(fenced.fenced()).isTrue();
        assertThat(fenced.sessionRefused()).isTrue();
        assertThat(s.link()).isEqualTo(MetaserverLink.FENCED);
        s.callFailed(DOWN, false, false);
        assertThat(s.link()).as("the latest failure decides").isEqualTo(MetaserverLink.FAILING);
    }

    @Test
    void shouldAnnounceEachEpochOnceAndOnlyWithASession() {
        MetaserverSession s = session(Duration.ofSeconds(5));
        assertThat(s.needsAnnouncementTo(1)).as("no session yet").isFalse();
        s.heartbeatSucceeded(30);
        assertThat(s.needsAnnouncementTo(EpochCapture.UNKNOWN))
                .as("a reference metaserver")
                .isFalse();
        assertThat(s.needsAnnouncementTo(1)).isTrue();

        s.announcedTo(1);
        assertThat(s.needsAnnouncementTo(1)).isFalse();
        assertThat(s.needsAnnouncementTo(2)).as("a restarted metaserver").isTrue();
        s.callFailed(DOWN, false, false);
        assertThat(s.needsAnnouncementTo(2)).as("not while the session is lost").isFalse();
    }
}
