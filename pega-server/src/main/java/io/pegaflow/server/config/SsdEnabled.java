package io.pegaflow.server.config;

import java.util.List;
import org.springframework.boot.context.properties.bind.BindResult;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Whether the SSD tier is on: {@code pega.ssd.enabled} when it is written out, otherwise whether any
 * {@code pega.ssd.paths} is given, as the reference's {@code --ssd-cache-path} alone turns its tier on.
 */
public final class SsdEnabled implements Condition {

    @Override
    public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
        return in(context.getEnvironment());
    }

    public static boolean in(Environment env) {
        Boolean explicit = env.getProperty("pega.ssd.enabled", Boolean.class);
        if (explicit != null) {
            return explicit;
        }
        BindResult<List<String>> paths = Binder.get(env).bind("pega.ssd.paths", Bindable.listOf(String.class));
        return paths.isBound() && paths.get().stream().anyMatch(p -> !p.isBlank());
    }
}
