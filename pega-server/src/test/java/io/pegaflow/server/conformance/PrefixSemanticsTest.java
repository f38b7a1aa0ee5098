package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.pegaflow.proto.QueryReady;
import io.pegaflow.proto.SaveLayer;
import io.pegaflow.proto.SaveRequest;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.KvLayout;
import io.pegaflow.testkit.MockVllmWorker;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Prefix hit semantics over real gRPC: contiguous prefix only, namespace isolation, visibility only once every slot is
 * sealed, dedup of resident blocks.
 */
@Timeout(120)
class PrefixSemanticsTest extends ConformanceSupport {
    private static final String ID = "prefix";
    private static final BlockPattern PATTERN = BlockPattern.perByte(11);

    private MockVllmWorker fiveBlockWorker(String instanceId, String namespace) {
        return bareWorker(instanceId)
                .namespace(namespace)
                .layer("layer_0", KvLayout.contiguous(5, 1024))
                .build();
    }

    /** Queries once all {@code sealed} hashes are visible; releases the lease and returns the hit count. */
    private long hitsAfterSealing(String instanceId, List<ByteString> sealed, List<ByteString> query, String reqId) {
        if (!sealed.isEmpty()) {
            scheduler.awaitSealed(instanceId, sealed, WAIT);
        }
        QueryReady ready = scheduler.queryUntilReady(instanceId, query, reqId, WAIT);
        if (ready.getNumHitBlocks() == 0) {
            assertThat(ready.getLease().isEmpty()).as("no lease without hits").isTrue();
        } else {
            assertThat(ready.getLease().size()).isEqualTo(16);
            scheduler.release(ready.getLease());
        }
        return ready.getNumHitBlocks();
    }

    @Test
    void shouldReportThreeOfFiveWhenTheFirstThreeAreCached() {
        try (MockVllmWorker w = fiveBlockWorker(ID, "ns-prefix")) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(80, 5);
            w.fillBlocks(blockIds(5), PATTERN);
            w.save(blockIds(3), hashes.subList(0, 3));

            assertThat(hitsAfterSealing(ID, hashes.subList(0, 3), hashes, "three"))
                    .isEqualTo(3);
        }
    }

    @Test
    void shouldStopAtTheFirstGap() {
        try (MockVllmWorker w = fiveBlockWorker(ID, "ns-prefix")) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(81, 4);
            w.fillBlocks(blockIds(4), PATTERN);
            w.save(List.of(0, 2, 3), List.of(hashes.get(0), hashes.get(2), hashes.get(3)));

            assertThat(hitsAfterSealing(ID, List.of(hashes.get(0), hashes.get(2), hashes.get(3)), hashes, "gap"))
                    .isEqualTo(1);
        }
    }

    @Test
    void shouldReportZeroWhenTheFirstBlockIsMissing() {
        try (MockVllmWorker w = fiveBlockWorker(ID, "ns-prefix")) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(82, 4);
            w.fillBlocks(blockIds(4), PATTERN);
            w.save(List.of(1, 2, 3), hashes.subList(1, 4));

            assertThat(hitsAfterSealing(ID, hashes.subList(1, 4), hashes, "first-missing"))
                    .isZero();
        }
    }

    @Test
    void shouldNotLetAMissPoisonALaterQueryWithTheSameReqId() {
        try (MockVllmWorker w = fiveBlockWorker(ID, "ns-prefix")) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(83, 4);
            assertThat(hitsAfterSealing(ID, List.of(), hashes, "same-req")).isZero();

            w.fillBlocks(blockIds(4), PATTERN);
            w.save(blockIds(4), hashes);

            assertThat(hitsAfterSealing(ID, hashes, hashes, "same-req")).isEqualTo(4);
        }
    }

    @Test
    void shouldAnswerEmptyQueryWithZeroAndNoLease() {
        try (MockVllmWorker w = fiveBlockWorker(ID, "ns-prefix")) {
            w.register();

            assertThat(hitsAfterSealing(ID, List.of(), List.of(), "empty")).isZero();
            assertThat(engine.activeLeases()).isZero();
        }
    }

    @Test
    void shouldIsolateNamespacesAndShareWithinOne() {
        try (MockVllmWorker alpha = fiveBlockWorker("alpha", "ns-alpha");
                MockVllmWorker beta = fiveBlockWorker("beta", "ns-beta");
                MockVllmWorker alphaTwin = fiveBlockWorker("alpha-twin", "ns-alpha")) {
            alpha.register();
            beta.register();
            alphaTwin.register();
            List<ByteString> hashes = BlockPattern.hashes(84, 4);
            alpha.fillBlocks(blockIds(4), PATTERN);
            alpha.save(blockIds(4), hashes);

            assertThat(hitsAfterSealing("alpha", hashes, hashes, "a")).isEqualTo(4);
            assertThat(hitsAfterSealing("beta", List.of(), hashes, "b")).isZero();
            QueryReady twin = scheduler.queryUntilReady("alpha-twin", hashes, "twin", WAIT);
            assertThat(twin.getNumHitBlocks()).isEqualTo(4);
            assertThat(alphaTwin.load(twin.getLease(), blockIds(4)).succeeded()).isTrue();
            alphaTwin.verifyBlocks(blockIds(4), PATTERN);
        }
    }

    @Test
    void shouldHideBlocksUntilEveryLayerWasSaved() {
        try (MockVllmWorker w = bareWorker(ID)
                .layer("layer_0", KvLayout.contiguous(4, 1024))
                .layer("layer_1", KvLayout.contiguous(4, 1024))
                .build()) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(85, 4);
            w.fillBlocks(blockIds(4), PATTERN);
            SaveRequest both = w.saveRequest(blockIds(4), hashes);
            SaveRequest layer0 = both.toBuilder().removeSaves(1).build();
            SaveRequest layer1 = both.toBuilder().removeSaves(0).build();

            w.stub().save(layer0);
            engine.flushSeals();
            assertThat(hitsAfterSealing(ID, List.of(), hashes, "half")).isZero();

            w.stub().save(layer1);
            QueryReady ready = awaitReady(ID, hashes, 4, "whole");
            w.zeroBlocks(blockIds(4));
            assertThat(w.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            w.verifyBlocks(blockIds(4), PATTERN);
        }
    }

    @Test
    void shouldTreatResavingResidentBlocksAsNoOp() {
        try (MockVllmWorker w = fiveBlockWorker(ID, "ns-prefix")) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(86, 4);
            w.fillBlocks(blockIds(4), PATTERN);
            w.save(blockIds(4), hashes);
            scheduler.awaitSealed(ID, hashes, WAIT);
            long used = engine.pool().usedBytes();
            int resident = engine.cache().size();

            w.fillBlocks(blockIds(4), BlockPattern.perByte(999));
            assertThat(w.save(blockIds(4), hashes).getStatus().getOk()).isTrue();
            engine.flushSeals();

            assertThat(engine.pool().usedBytes()).as("nothing allocated").isEqualTo(used);
            assertThat(engine.cache().size()).isEqualTo(resident);
            QueryReady ready = awaitReady(ID, hashes, 4, "dedup");
            w.zeroBlocks(blockIds(4));
            assertThat(w.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            w.verifyBlocks(blockIds(4), PATTERN);
        }
    }

    @Test
    void shouldSaveOnlyTheMissingPartOfAPartlyResidentBatch() {
        try (MockVllmWorker w = fiveBlockWorker(ID, "ns-prefix")) {
            w.register();
            List<ByteString> hashes = BlockPattern.hashes(87, 4);
            w.fillBlocks(blockIds(4), PATTERN);
            w.save(blockIds(2), hashes.subList(0, 2));
            scheduler.awaitSealed(ID, hashes.subList(0, 2), WAIT);
            long used = engine.pool().usedBytes();

            w.save(blockIds(4), hashes);
            engine.flushSeals();

            assertThat(engine.pool().usedBytes() - used)
                    .as("two new 1 KiB blocks")
                    .isEqualTo(2048);
            assertThat(engine.cache().size()).isEqualTo(4);
            assertThat(hitsAfterSealing(ID, hashes, hashes, "rest")).isEqualTo(4);
        }
    }

    @Test
    void shouldDeduplicateAHashRepeatedWithinOneSave() {
        try (MockVllmWorker w = fiveBlockWorker(ID, "ns-prefix")) {
            w.register();
            ByteString h = BlockPattern.hash(88, 0);
            w.fillBlocks(blockIds(5), PATTERN);
            SaveRequest twice = SaveRequest.newBuilder()
                    .setInstanceId(ID)
                    .addSaves(SaveLayer.newBuilder()
                            .setLayerName("layer_0")
                            .addBlockIds(2)
                            .addBlockIds(3)
                            .addBlockHashes(h)
                            .addBlockHashes(h))
                    .build();

            w.stub().save(twice);
            QueryReady ready = awaitReady(ID, List.of(h), 1, "repeat");

            assertThat(engine.cache().size()).isEqualTo(1);
            w.zeroBlocks(blockIds(5));
            assertThat(w.load(ready.getLease(), List.of(4)).succeeded()).isTrue();
            assertThat(w.layers().get(0).memory().readBytes(4 * 1024L, 1024))
                    .as("the first pair wins: block 2's bytes")
                    .isEqualTo(PATTERN.forSlot("layer_0", 0).bytes(2, 0, 1024));
        }
    }
}
