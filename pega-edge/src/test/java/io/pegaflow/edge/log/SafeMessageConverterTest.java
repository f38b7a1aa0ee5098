package io.pegaflow.edge.log;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import ch.qos.logback.core.OutputStreamAppender;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The known forging cases, with the log statements' own templates, rendered by a Logback pattern layout after
 * {@link SafeLogMessages} installed the converter: each is one line, and the forged text is visibly inside it.
 */
@Timeout(10)
class SafeMessageConverterTest {
    private static final String FORGED = "\n2026-12-06T00:00:00.000Z  WARN 1 --- [main] io.pegaflow.FAKE : FORGED";

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private Logger log;

    @BeforeEach
    void layout() {
        LoggerContext context = new LoggerContext();
        context.setMDCAdapter(new LogbackMDCAdapter());
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern("%5p %logger : %m%n");
        encoder.start();
        OutputStreamAppender<ILoggingEvent> appender = new OutputStreamAppender<>();
        appender.setContext(context);
        appender.setEncoder(encoder);
        appender.setOutputStream(out);
        appender.start();
        log = context.getLogger("io.pegaflow.test");
        log.setLevel(Level.INFO);
        log.addAppender(appender);
        SafeLogMessages.install(context);
    }

    private List<String> lines() {
        return out.toString(StandardCharsets.UTF_8).lines().toList();
    }

    @Test
    void shouldKeepASessionInstanceIdOnItsLine() {
        log.info("session of {} closed: instance {}", "victim" + FORGED, "removed");
        assertThat(lines())
                .containsExactly(
                        " INFO io.pegaflow.test : session of victim\\n2026-12-06T00:00:00.000Z  WARN 1 --- [main]"
                                + " io.pegaflow.FAKE : FORGED closed: instance removed");
    }

    @Test
    void shouldKeepAPushFailedReasonOnItsLine() {
        log.warn(
                "receive {} ({}, instance {}) failed: {}; the decode worker sees load_state -1 and recomputes",
                7,
                "req-1",
                "decode-0",
                "the prefill server gave up on rank 0: boom\r" + FORGED);
        assertThat(lines())
                .hasSize(1)
                .first()
                .asString()
                .contains("boom\\r\\n2026")
                .endsWith("recomputes");
    }

    @Test
    void shouldKeepAnRdmaHandshakeRequesterIdOnItsLine() {
        log.info("peer {} connected ({} lanes)", "<img src=x>:1" + FORGED, 4);
        assertThat(lines()).hasSize(1).first().asString().endsWith("FORGED connected (4 lanes)");
    }

    @Test
    void shouldLeaveTheTemplatesOwnLineBreaksAlone() {
        log.info("ready\n{}\n{}", "grpc=127.0.0.1:50055", "pool=1 GiB");
        assertThat(lines()).containsExactly(" INFO io.pegaflow.test : ready", "grpc=127.0.0.1:50055", "pool=1 GiB");
    }

    @Test
    void shouldBoundAHugeArgument() {
        log.info("instance {} registered", "n".repeat(10 * LogSafe.MAX_CHARS));
        assertThat(lines()).hasSize(1).first().asString().hasSizeLessThan(LogSafe.MAX_CHARS + 100);
    }
}
