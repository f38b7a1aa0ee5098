package io.pegaflow.edge.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.grpc.Status;
import io.grpc.StatusException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/** INTERNAL errors are logged with their cause, at most a burst per window, and the next line counts the rest. */
@Timeout(30)
class InternalErrorLogTest {

    /** A clock the test moves by hand. */
    static final class ManualClock extends Clock {
        private Instant now = Instant.parse("2026-12-01T00:00:00Z");

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    private final ManualClock clock = new ManualClock();
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(InternalErrorLog.class);

    @BeforeEach
    void capture() {
        appender.start();
        logger.addAppender(appender);
    }

    @AfterEach
    void release() {
        logger.detachAppender(appender);
    }

    @Test
    void shouldLogTheCauseAndSendOnlyTheDescription() {
        InternalErrorLog log = new InternalErrorLog(clock);
        IllegalStateException cause = new IllegalStateException("copy engine fault at 0x7f00");

        StatusException status = log.internal("storage error: batch copy failed", cause);

        assertThat(status.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
        assertThat(status.getStatus().getDescription()).isEqualTo("storage error: batch copy failed");
        assertThat(status.getStatus().getCause())
                .as("nothing of the cause travels")
                .isNull();
        assertThat(appender.list).hasSize(1);
        ILoggingEvent line = appender.list.get(0);
        assertThat(line.getFormattedMessage()).isEqualTo("RPC failed with INTERNAL: storage error: batch copy failed");
        assertThat(line.getThrowableProxy().getMessage()).isEqualTo("copy engine fault at 0x7f00");
    }

    @Test
    void shouldCountWhatExceedsTheBurstAndReportItWithTheNextLine() {
        InternalErrorLog log = new InternalErrorLog(clock, 2, Duration.ofMinutes(1));
        RuntimeException cause = new RuntimeException("boom");

        assertThat(log.log("a", cause)).isTrue();
        assertThat(log.log("b", cause)).isTrue();
        assertThat(log.log("c", cause)).isFalse();
        assertThat(log.log("d", cause)).isFalse();
        clock.advance(Duration.ofSeconds(59));
        assertThat(log.log("e", cause)).as("still the same window").isFalse();
        clock.advance(Duration.ofSeconds(1));
        assertThat(log.log("f", cause)).isTrue();

        assertThat(appender.list)
                .extracting(ILoggingEvent::getFormattedMessage)
                .containsExactly(
                        "RPC failed with INTERNAL: a",
                        "RPC failed with INTERNAL: b",
                        "RPC failed with INTERNAL: f (3 earlier INTERNAL errors were not logged)");
    }
}
