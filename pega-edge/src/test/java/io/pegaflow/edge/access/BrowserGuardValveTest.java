package io.pegaflow.edge.access;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A page can send thousands of refused requests: each kind of refusal is logged once a minute. */
@Timeout(10)
class BrowserGuardValveTest {

    /** A clock the test moves. */
    private static final class Manual extends Clock {
        private Instant now = Instant.parse("2026-12-06T00:00:00Z");

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @Test
    void shouldLogEachKindOnceAMinute() {
        Manual clock = new Manual();
        BrowserGuardValve valve = new BrowserGuardValve(new HostAllowList(List.of(), null), clock);

        assertThat(valve.firstInInterval("host")).isTrue();
        assertThat(valve.firstInInterval("host")).isFalse();
        assertThat(valve.firstInInterval("origin")).as("another kind").isTrue();

        clock.now = clock.now.plus(Duration.ofSeconds(59));
        assertThat(valve.firstInInterval("host")).isFalse();
        clock.now = clock.now.plus(Duration.ofSeconds(1));
        assertThat(valve.firstInInterval("host")).isTrue();
        assertThat(valve.firstInInterval("host")).isFalse();
    }
}
