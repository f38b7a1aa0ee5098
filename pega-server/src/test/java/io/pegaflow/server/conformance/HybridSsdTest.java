package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.core.ssd.SsdStore;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.HybridModel;
import io.pegaflow.testkit.LoadResult;
import io.pegaflow.testkit.MockVllmWorker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

/**
 * A hybrid instance's groups through the SSD tier, over real gRPC: both groups are written with their group keys and
 * come back byte-exact once RAM dropped them (attention through the prefix query, state checkpoints through the
 * all-or-nothing set fetch of {@code wait_for_full_prefix}); and {@code wait_for_full_prefix} makes the SSD
 * prefetch all or nothing (upstream {@code novitalabs/pegaflow} #411).
 */
@Timeout(120)
@TestPropertySource(properties = {"pega.ssd.enabled=true", "pega.ssd.capacity=16MB"})
class HybridSsdTest extends ConformanceSupport {
    private static final Path DIR = tempDir();

    @Autowired
    SsdStore store;

    @DynamicPropertySource
    static void ssdPath(DynamicPropertyRegistry r) {
        r.add("pega.ssd.paths[0]", () -> DIR.resolve("shard").toString());
    }

    private static Path tempDir() {
        try {
            return Files.createTempDirectory("pega-hybrid-ssd");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private MockVllmWorker saved(String id, List<ByteString> hashes, BlockPattern pattern) throws Exception {
        MockVllmWorker w =
                HybridModel.layers(bareWorker(id).namespace("ns-" + id)).build();
        w.register();
        HybridModel.saveWithCheckpoints(w, hashes, pattern);
        scheduler.awaitSealed(id, hashes, WAIT);
        scheduler.awaitMembers(id, 1, hashes, 2, WAIT);
        store.flush().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        engine.cleanupMemory(); // RAM forgets both groups; only the SSD holds them now
        assertThat(scheduler.query(id, hashes, "ram-only", 1, false).getReady().getNumHitBlocks())
                .as("membership answers from RAM alone")
                .isZero();
        return w;
    }

    @Test
    void shouldBringBothGroupsBackFromSsdByteExact() throws Exception {
        List<ByteString> hashes = BlockPattern.hashes(80, 8);
        BlockPattern pattern = BlockPattern.perByte(0x55D);
        try (MockVllmWorker w = saved("hy-ssd", hashes, pattern)) {
            QueryReady attention = scheduler.queryUntilReady("hy-ssd", hashes, "ssd-attn", WAIT);
            assertThat(attention.getNumHitBlocks()).isEqualTo(8);
            QueryReady state = scheduler.queryUntilReady(
                    "hy-ssd", List.of(hashes.get(3), hashes.get(7)), "ssd-state", 1, true, WAIT);
            assertThat(state.getHitPositionsList()).containsExactly(0, 1);
            assertThat(state.getLease()).isNotEmpty();
            w.zeroBlocks(blockIds(8));

            LoadResult loaded = HybridModel.loadBoth(w, attention.getLease(), state.getLease(), WAIT);

            assertThat(loaded.succeeded()).as("%s", loaded).isTrue();
            assertThat(HybridModel.firstMismatch(w, pattern)).isEmpty();
        }
    }

    @Test
    void shouldMakeTheSsdPrefetchAllOrNothingWhenTheWholePrefixIsAskedFor() throws Exception {
        List<ByteString> hashes = BlockPattern.hashes(81, 8);
        try (MockVllmWorker w = saved("hy-wait", hashes, BlockPattern.perByte(7))) {
            List<ByteString> longer = new ArrayList<>(hashes);
            longer.addAll(BlockPattern.hashes(82, 2)); // never saved

            QueryReady whole = scheduler.queryUntilReady("hy-wait", longer, "whole", 0, true, WAIT);
            assertThat(whole.getNumHitBlocks())
                    .as("8 of 10 on SSD is not the whole prefix")
                    .isZero();
            assertThat(whole.getLease()).isEmpty();
            QueryReady shortSet = scheduler.queryUntilReady(
                    "hy-wait", List.of(hashes.get(3), longer.get(9), hashes.get(7)), "short-set", 1, true, WAIT);
            assertThat(shortSet.getNumHitBlocks()).isZero();
            assertThat(shortSet.getLease()).isEmpty();

            QueryReady partial = scheduler.queryUntilReady("hy-wait", longer, "partial", 0, false, WAIT);
            assertThat(partial.getNumHitBlocks()).isEqualTo(8);
            scheduler.release(partial.getLease());
            w.unregister();
        }
    }
}
