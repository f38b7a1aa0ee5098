package io.pegaflow.core.instance;

/**
 * The one slot formula: a sealed block holds one slot per (layer, tp rank) of its instance, at index
 * {@code layer_id × tp_size + tp_rank}, and {@code num_layers × tp_size} slots in all. Save, Load, the seal and the
 * transfer path all index slots through here, so they cannot disagree. The arithmetic is checked: a result outside
 * {@code int} (impossible under {@link InstanceLimits}, which registration enforces) fails instead of wrapping into
 * another layer's slot.
 */
public final class SlotFormula {
    private SlotFormula() {}

    /**
     * The slot of {@code (layerId, tpRank)} in an instance of {@code tpSize} ranks.
     *
     * @throws IllegalArgumentException when an operand is negative or {@code tpRank >= tpSize}
     * @throws ArithmeticException when the index does not fit an {@code int}
     */
    public static int slotIndex(int layerId, int tpSize, int tpRank) {
        if (layerId < 0 || tpSize < 1 || tpRank < 0 || tpRank >= tpSize) {
            throw new IllegalArgumentException(
                    "no slot for layer_id " + layerId + ", tp_rank " + tpRank + " of tp_size " + tpSize);
        }
        return Math.addExact(Math.multiplyExact(layerId, tpSize), tpRank);
    }

    /**
     * Slots per block of an instance: {@code numLayers × tpSize}.
     *
     * @throws IllegalArgumentException when an operand is negative
     * @throws ArithmeticException when the count does not fit an {@code int}
     */
    public static int slotCount(int numLayers, int tpSize) {
        if (numLayers < 0 || tpSize < 0) {
            throw new IllegalArgumentException("no slot count for num_layers " + numLayers + ", tp_size " + tpSize);
        }
        return Math.multiplyExact(numLayers, tpSize);
    }
}
