package io.pegaflow.core.engine;

import java.util.List;

/** One layer of a Save: vLLM block ids and the hash each one stores, pairwise. */
public record LayerSave(String layerName, int[] blockIds, List<byte[]> blockHashes) {}
