package io.pegaflow.server.config;

import jakarta.validation.constraints.NotNull;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * What survives a restart of the server ({@code pega.state.*}, docs/operations.md "Restarting the server").
 *
 * @param dir directory of the registration journal; empty (the default) journals nothing and restores nothing, so a
 *     restarted server knows no instance until its workers register again, which the reference connector never does
 * @param detachedIdleTimeout how long an instance restored from the journal, that no Session adopted, may go without
 *     an RPC before its mappings are released
 */
@Validated
@ConfigurationProperties("pega.state")
public record StateProperties(
        @NotNull @DefaultValue("") String dir,
        @NotNull @DefaultValue("10m") Duration detachedIdleTimeout) {

    public StateProperties {
        if (detachedIdleTimeout.isNegative() || detachedIdleTimeout.isZero()) {
            throw new IllegalArgumentException(
                    "pega.state.detached-idle-timeout: " + detachedIdleTimeout + " (expected: > 0)");
        }
    }

    /** The state directory, when one is configured. */
    public Optional<Path> directory() {
        return dir.isBlank() ? Optional.empty() : Optional.of(Path.of(dir));
    }
}
