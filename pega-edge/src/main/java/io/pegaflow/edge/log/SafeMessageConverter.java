package io.pegaflow.edge.log;

import ch.qos.logback.classic.pattern.ClassicConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import org.slf4j.helpers.MessageFormatter;

/**
 * {@code %m}, {@code %msg} and {@code %message} with every argument passed through {@link LogSafe#of}: the template
 * is code and keeps its own line breaks (the readiness summary has some), an argument is data and gets none. Fixing it
 * here rather than at each {@code LOG.info} covers every log statement of both apps, including those of the engine
 * modules running inside pega-server, and those not yet written. A message logged without arguments is shown as it
 * is: by the project's convention such a message is a constant or built from our own values.
 */
public final class SafeMessageConverter extends ClassicConverter {

    @Override
    public String convert(ILoggingEvent event) {
        Object[] arguments = event.getArgumentArray();
        String template = event.getMessage();
        if (arguments == null || arguments.length == 0 || template == null) {
            return event.getFormattedMessage();
        }
        Object[] safe = new Object[arguments.length];
        for (int i = 0; i < arguments.length; i++) {
            safe[i] = LogSafe.of(arguments[i]);
        }
        return MessageFormatter.basicArrayFormat(template, safe);
    }
}
