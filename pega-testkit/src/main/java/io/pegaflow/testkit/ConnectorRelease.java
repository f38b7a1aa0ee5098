package io.pegaflow.testkit;

import io.pegaflow.proto.RegisterContextRequest;
import java.util.function.IntUnaryOperator;

/**
 * A pegaflow-llm connector release as a mock worker plays it on the wire, read from upstream's source
 * ({@code novitalabs/pegaflow}, tag {@code v0.22.4} and commit {@code d3ed31a}, v0.23.12): what its RegisterContextBatch
 * carries and which form its Load takes.
 *
 * @param clientVersion field 15, empty when the release sends none
 * @param sendsNumLayers field 7 (up to 0.22.8)
 * @param sendsLayerIds field 16 (0.22.7 and 0.22.8 only)
 * @param sendsLayerGroupIds field 19, all zeros for a model with one cache group (0.23.11 and later)
 * @param groupedLoad Load with layer groups and per-group targets (0.23.7 and later)
 */
public record ConnectorRelease(
        String clientVersion,
        boolean sendsNumLayers,
        boolean sendsLayerIds,
        boolean sendsLayerGroupIds,
        boolean groupedLoad) {

    /** Generation G0: the reference connector. */
    public static final ConnectorRelease V0_22_4 = new ConnectorRelease("", true, false, false, false);
    /** Generation G1: sends its version, still num_layers, and the short-lived layer_ids. */
    public static final ConnectorRelease V0_22_8 = new ConnectorRelease("0.22.8", true, true, false, false);
    /** Generation G2: no num_layers (the server seals the layer space), legacy Load. */
    public static final ConnectorRelease V0_23_6 = new ConnectorRelease("0.23.6", false, false, false, false);
    /** Generation G3: no num_layers, grouped Load, layer_group_ids (all zeros for a dense model). */
    public static final ConnectorRelease V0_23_12 = new ConnectorRelease("0.23.12", false, false, true, true);

    /** The same wire under another version string, e.g. an unknown release or a build tag. */
    public ConnectorRelease withVersion(String version) {
        return new ConnectorRelease(version, sendsNumLayers, sendsLayerIds, sendsLayerGroupIds, groupedLoad);
    }

    /**
     * Adds this release's fields to a registration ({@code numLayers} when it sends it; each layer's storage group from
     * {@code groupOf} when it sends {@code layer_group_ids}).
     */
    void shape(RegisterContextRequest.Builder r, int numLayers, IntUnaryOperator groupOf) {
        if (!clientVersion.isEmpty()) {
            r.setClientVersion(clientVersion);
        }
        if (sendsNumLayers) {
            r.setNumLayers(numLayers);
        } else {
            r.clearNumLayers();
        }
        for (int i = 0; i < r.getLayerNamesCount(); i++) {
            if (sendsLayerIds) {
                r.addLayerIds(i);
            }
            if (sendsLayerGroupIds) {
                r.addLayerGroupIds(groupOf.applyAsInt(i));
            }
        }
    }
}
