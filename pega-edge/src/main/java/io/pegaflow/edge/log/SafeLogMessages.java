package io.pegaflow.edge.log;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import java.util.Iterator;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.context.logging.LoggingApplicationListener;
import org.springframework.context.ApplicationListener;
import org.springframework.core.Ordered;

/**
 * Puts {@link SafeMessageConverter} behind {@code %m}/{@code %msg}/{@code %message} in every pattern layout of the
 * Logback configuration Spring Boot has just built (its defaults, or the operator's {@code logging.config}), then
 * restarts those layouts so they parse their pattern again. Runs right after {@link LoggingApplicationListener};
 * registered in {@code META-INF/spring.factories}, so both apps and their tests get it without an import. Structured
 * (JSON) encoders escape control characters themselves and are left alone. Does nothing when Logback is not the
 * logging system.
 */
public final class SafeLogMessages implements ApplicationListener<ApplicationEnvironmentPreparedEvent>, Ordered {

    private static final String[] WORDS = {"m", "msg", "message"};

    @Override
    public int getOrder() {
        return LoggingApplicationListener.DEFAULT_ORDER + 1;
    }

    @Override
    public void onApplicationEvent(ApplicationEnvironmentPreparedEvent event) {
        install();
    }

    private static void install() {
        ILoggerFactory factory = LoggerFactory.getILoggerFactory();
        if (factory instanceof LoggerContext context) {
            install(context);
        }
    }

    /** Idempotent: a layout that already has the converter is restarted once more, to the same effect. */
    static void install(LoggerContext context) {
        for (Logger logger : context.getLoggerList()) {
            for (Iterator<Appender<ILoggingEvent>> it = logger.iteratorForAppenders(); it.hasNext(); ) {
                install(it.next());
            }
        }
    }

    private static void install(Appender<ILoggingEvent> appender) {
        if (appender instanceof OutputStreamAppender<ILoggingEvent> stream) {
            Encoder<ILoggingEvent> encoder = stream.getEncoder();
            if (encoder instanceof LayoutWrappingEncoder<ILoggingEvent> wrapping
                    && wrapping.getLayout() instanceof PatternLayout layout) {
                for (String word : WORDS) {
                    layout.getInstanceConverterMap().put(word, SafeMessageConverter::new);
                }
                layout.stop();
                layout.start();
            }
        }
    }
}
