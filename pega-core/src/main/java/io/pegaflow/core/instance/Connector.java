package io.pegaflow.core.instance;

/**
 * What an instance's connector told us when it registered: its version (empty for G0, which sends none), the
 * generation that version belongs to, and the two registration flags of later connectors.
 *
 * @param clientVersion {@code client_version} as sent; empty when absent
 * @param pageFirst page-first host layout (upstream #360): part of the instance's topology, so every worker must agree
 * @param kernelTransfer the connector asked for the kernel copy backend; a hint, this server keeps its own copy policy
 */
public record Connector(
        String clientVersion, ConnectorGeneration generation, boolean pageFirst, boolean kernelTransfer) {

    /** A v0.22.4 connector, and every in-process caller that does not say otherwise. */
    public static final Connector LEGACY = new Connector("", ConnectorGeneration.G0, false, false);

    /** The version as messages print it: {@code <missing>} when the connector sent none, as upstream writes it. */
    public String versionText() {
        return clientVersion.isEmpty() ? "<missing>" : clientVersion;
    }
}
