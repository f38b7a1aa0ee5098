package io.pegaflow.metaserver.index;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.metaserver.node.NodeSession;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A node that keeps a small resident set while sealing and evicting continuously (the fleet's steady state) leaves
 * removed records in its share FIFO; they must be compacted away within a bound proportional to what it owns, or
 * the index's heap grows with everything the node ever announced.
 */
class AnnouncementFifoTest {

    private static final String NS = "fleet";

    private static List<ByteString> range(int from, int count) {
        List<ByteString> out = new ArrayList<>(count);
        for (int i = from; i < from + count; i++) {
            out.add(ByteString.copyFrom(new byte[] {(byte) (i >> 24), (byte) (i >> 16), (byte) (i >> 8), (byte) i}));
        }
        return out;
    }

    @Test
    void shouldBoundTheFifoOfANodeThatChurnsASmallResidentSet() {
        BlockOwnerIndex index = new BlockOwnerIndex(10_000_000, 30_000, 7_200_000);
        NodeSession node = NodeSession.detached("10.0.0.1:50055", UUID.randomUUID(), 0);
        int resident = 256;
        int batch = 64;
        int maxEntries = 0;
        // 200k blocks sealed, each evicted once 256 newer ones exist: ownership stays at 256 records
        for (int sealed = 0; sealed < 200_000; sealed += batch) {
            index.insert(NS, range(sealed, batch), node, 0);
            if (sealed >= resident) {
                index.remove(NS, range(sealed - resident, batch), node.url(), node.id());
            }
            maxEntries = Math.max(maxEntries, index.announcedEntries(node));
        }
        assertThat(index.ownerCount()).isEqualTo(resident);
        assertThat(maxEntries).isLessThanOrEqualTo(2 * 1_024 + batch);
    }
}
