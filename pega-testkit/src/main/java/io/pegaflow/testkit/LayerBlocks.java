package io.pegaflow.testkit;

import com.google.protobuf.ByteString;
import java.util.List;

/**
 * Some layers of a worker and the blocks they save, with one hash per block id: one part of a {@link
 * MockVllmWorker#save(List)}. A hybrid connector saves its attention layers for every block and its state layers for
 * checkpoint blocks only, in one request.
 */
public record LayerBlocks(List<String> layerNames, List<Integer> blockIds, List<ByteString> hashes) {
    public LayerBlocks {
        layerNames = List.copyOf(layerNames);
        blockIds = List.copyOf(blockIds);
        hashes = List.copyOf(hashes);
    }
}
