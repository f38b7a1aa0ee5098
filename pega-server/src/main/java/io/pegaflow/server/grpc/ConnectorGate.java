package io.pegaflow.server.grpc;

import io.micrometer.core.instrument.Counter;
import io.pegaflow.core.error.EngineException;
import io.pegaflow.core.instance.Connector;
import io.pegaflow.core.instance.ConnectorGeneration;
import io.pegaflow.edge.metrics.CatalogMeters;
import io.pegaflow.proto.RegisterContextRequest;
import io.pegaflow.proto.TransferMode;
import io.pegaflow.server.config.CompatProperties;
import io.pegaflow.server.metrics.ServerMetric;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Objects;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.info.BuildProperties;
import org.springframework.stereotype.Component;

/**
 * Admits a RegisterContextBatch by its connector: the version must be one this server accepts
 * ({@link ConnectorVersions}, {@code pega.compat.*}), and the request's flags are read into the {@link Connector} the
 * instance keeps. Runs before anything else of the registration, as upstream's gate does
 * ({@code pegaflow-server/src/service.rs}, commit {@code d3ed31a}), and refuses with upstream's text, which the
 * connector treats as fatal at startup: {@code PegaFlow version mismatch: client=<v> server=<ours>}.
 *
 * <p>{@code layer_group_ids} (hybrid cache groups, pegaflow-llm 0.23.11+) are the engine's to check: they are part of
 * the layer space, like the names they run parallel to.
 */
@Component
final class ConnectorGate {
    static final String EXTRA_VERSIONS_KEY = "pega.compat.extra-versions";

    private final ConnectorVersions versions;
    private final String serverVersion;
    private final Map<ConnectorGeneration, Counter> registrations = new EnumMap<>(ConnectorGeneration.class);

    ConnectorGate(CompatProperties compat, ObjectProvider<BuildProperties> build, CatalogMeters meters) {
        this.versions = new ConnectorVersions(
                compat.extraVersions(),
                compat.generations().isEmpty()
                        ? EnumSet.noneOf(ConnectorGeneration.class)
                        : EnumSet.copyOf(compat.generations()),
                compat.presumedVersions());
        BuildProperties props = build.getIfAvailable();
        String version = props == null ? null : props.getVersion();
        this.serverVersion = "pega-server-" + (version == null ? "dev" : version);
        for (ConnectorGeneration g : ConnectorGeneration.values()) {
            registrations.put(g, meters.counter(ServerMetric.PEGAFLOW_CONNECTOR_REGISTRATIONS, g.name()));
        }
    }

    /**
     * @throws EngineException FAILED_PRECONDITION for a version not accepted, naming the key that accepts it
     */
    Connector admit(RegisterContextRequest r) {
        String client = r.getClientVersion();
        ConnectorGeneration generation = versions.generationOf(client)
                .orElseThrow(() -> EngineException.failedPrecondition("PegaFlow version mismatch: client="
                        + (client.isEmpty() ? "<missing>" : client) + " server=" + serverVersion
                        + "; this server accepts connector versions " + versions.describe() + ". To accept this one,"
                        + " add it to " + EXTRA_VERSIONS_KEY + " (VERSION or VERSION=G0..G3), or allow its generation"
                        + " in pega.compat.generations; docs/compatibility.md lists what each version needs"));
        // An unknown enum value reads as DIRECT, as prost's getter does upstream.
        boolean kernel = r.getTransferMode() == TransferMode.TRANSFER_MODE_KERNEL;
        return new Connector(client, generation, r.getPageFirst(), kernel);
    }

    /** Counts a registration the engine accepted. */
    void registered(Connector connector) {
        Objects.requireNonNull(registrations.get(connector.generation()), "every generation has a counter")
                .increment();
    }
}
