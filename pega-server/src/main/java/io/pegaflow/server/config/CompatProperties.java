package io.pegaflow.server.config;

import io.pegaflow.core.instance.ConnectorGeneration;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Which pegaflow-llm connector versions may register ({@code pega.compat.*}); see docs/compatibility.md. A connector
 * sends its exact package version from 0.22.6 on, and this server accepts the versions whose wire it knows, each
 * mapped to its generation; everything else is refused at registration, as upstream refuses any version but its own.
 *
 * @param extraVersions more versions to accept, each {@code VERSION} or {@code VERSION=G0..G3}: a build such as
 *     {@code 0.23.6+native-arena-v1}, or a release newer than this server knows. Without {@code =G}, a build tag takes
 *     its release's generation and an unknown release G3, the newest wire
 * @param generations the generations accepted at all; narrow it to refuse, say, every connector but the newest
 * @param presumedVersions accept 0.24.x and 0.25.x, whose source is not public and whose wire is presumed to be
 *     0.23.12's (G3); false accepts only versions checked against upstream's source
 */
@Validated
@ConfigurationProperties("pega.compat")
public record CompatProperties(
        @NotNull @DefaultValue
        List<
                        @Pattern(
                                regexp = "[0-9A-Za-z][0-9A-Za-z.+_-]*(=G[0-3])?",
                                message = "must be VERSION or VERSION=G0..G3")
                        String>
                extraVersions,

        @NotNull @DefaultValue({"G0", "G1", "G2", "G3"}) List<ConnectorGeneration> generations,
        @DefaultValue("true") boolean presumedVersions) {}
