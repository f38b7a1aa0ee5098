package io.pegaflow.core.engine;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SlotData;

/**
 * What one Save hands to the sealing worker: the unique keys it stored, and for each layer of the request the slot
 * index and one {@link SlotData} per key (null where that layer did not carry the key).
 *
 * <p>Ownership of every non-null {@link SlotData} passes to the sealing worker with the batch.
 */
record SealBatch(String namespace, int totalSlots, BlockKey[] keys, int[] layerSlots, SlotData[][] data)
        implements SealCommand {}
