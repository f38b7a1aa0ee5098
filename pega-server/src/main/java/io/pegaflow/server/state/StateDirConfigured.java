package io.pegaflow.server.state;

import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Whether {@code pega.state.dir} names a directory: an empty value, like none, turns the journal off. */
final class StateDirConfigured implements Condition {
    @Override
    public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
        String dir = context.getEnvironment().getProperty("pega.state.dir");
        return dir != null && !dir.isBlank();
    }
}
