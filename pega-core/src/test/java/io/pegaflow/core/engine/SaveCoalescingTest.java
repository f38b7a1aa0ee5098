package io.pegaflow.core.engine;

import static io.pegaflow.core.engine.EngineHarness.KIB;
import static io.pegaflow.core.engine.EngineHarness.MIB;
import static io.pegaflow.core.engine.EngineHarness.NAMESPACE;
import static io.pegaflow.core.engine.EngineHarness.hashes;
import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.engine.EngineHarness.Worker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A Save places a layer's blocks in pool memory in block-id order, so blocks with adjacent ids sit in adjacent pool
 * memory whatever order the request lists them in, and a run of them is one range on both sides of the copy.
 */
@Timeout(60)
class SaveCoalescingTest {
    private static final int BLOCK_BYTES = (int) (16 * KIB);

    private final EngineHarness harness = new EngineHarness(16 * MIB);

    @AfterEach
    void tearDown() {
        harness.close();
    }

    @Test
    void shouldPlaceAdjacentBlockIdsInAdjacentPoolMemoryWhateverTheRequestOrder() {
        Worker w = harness.worker("coalesce", 16, BLOCK_BYTES);
        w.register();
        int[] ids = {7, 5, 9, 6, 2, 8};
        long[] content = {70, 50, 90, 60, 20, 80};
        w.fill(ids, content);
        List<byte[]> hashes = hashes(3, ids.length);
        w.save(ids, hashes);
        harness.engine.flushSeals();

        Map<Integer, Long> address = new HashMap<>();
        List<BlockKey> keys = new ArrayList<>();
        for (byte[] h : hashes) {
            keys.add(new BlockKey(NAMESPACE, h));
        }
        Map<BlockKey, Integer> idOf = new HashMap<>();
        for (int i = 0; i < ids.length; i++) {
            idOf.put(keys.get(i), ids[i]);
        }
        harness.engine.cache().lookupEach(keys, (key, block) -> {
            address.put(idOf.get(key), addressOf(block));
            block.release(); // lookups retain for the caller
        });
        assertThat(address).hasSize(ids.length);
        int[] sorted = ids.clone();
        Arrays.sort(sorted);
        for (int i = 1; i < sorted.length; i++) {
            assertThat(address.get(sorted[i]))
                    .as("block %d follows block %d in the pool", sorted[i], sorted[i - 1])
                    .isEqualTo(address.get(sorted[i - 1]) + BLOCK_BYTES);
        }

        // and the blocks still load back to the ids their hashes were saved from
        w.zero();
        byte[] lease = w.query(hashes, "r").lease();
        int[] targets = {0, 1, 2, 3, 4, 10};
        assertThat(w.load(lease, targets).succeeded()).isTrue();
        w.verify(targets, content);
    }

    @Test
    void shouldLeaveAscendingSelectionsAsTheyAreAndSortOthersByBlockId() {
        int[] keys = {0, 1, 2};
        int[] ids = {3, 4, 9};
        SavePath.inBlockIdOrder(keys, ids, 3);
        assertThat(ids).containsExactly(3, 4, 9);
        assertThat(keys).containsExactly(0, 1, 2);

        int[] k2 = {0, 1, 2, 3, 99};
        int[] i2 = {12, 10, 11, Integer.MAX_VALUE - 1, 77}; // only the first four are the selection
        SavePath.inBlockIdOrder(k2, i2, 4);
        assertThat(i2).containsExactly(10, 11, 12, Integer.MAX_VALUE - 1, 77);
        assertThat(k2).containsExactly(1, 2, 0, 3, 99);
    }

    private static long addressOf(SealedBlock block) {
        return block.slot(0).address(0);
    }
}
