package io.pegaflow.concurrency.cache;

import io.pegaflow.concurrency.Pools;
import io.pegaflow.concurrency.WitnessedBlock;
import io.pegaflow.core.block.BlockKey;
import io.pegaflow.core.block.SealedBlock;
import io.pegaflow.core.cache.BlockCache;
import io.pegaflow.core.cache.EvictedBlocks;
import io.pegaflow.core.cache.InsertOutcome;
import java.util.List;

/**
 * A Caffeine-policy index ({@code pega.cache.admission=caffeine}) whose budget holds exactly one block, with block
 * {@code a} resident and {@code b}'s key more frequent than {@code a}'s. Blocks the policy evicts while inserting are
 * released at once, as the engine's sink does.
 */
final class CaffeineFixture {
    /** A pool size whose 7/8 budget fits one {@link Pools#UNIT_BYTES} block and not two. */
    private static final long POOL_BYTES = Pools.UNIT_BYTES + Pools.UNIT_BYTES / 4;

    static final BlockKey A = new BlockKey("ns", new byte[] {1});
    static final BlockKey B = new BlockKey("ns", new byte[] {2});

    final WitnessedBlock a = new WitnessedBlock();
    final WitnessedBlock b = new WitnessedBlock();
    final BlockCache cache = BlockCache.caffeine(POOL_BYTES, EvictedBlocks::releaseAll);

    CaffeineFixture() {
        InsertOutcome[] outcome = new InsertOutcome[1];
        // b's key seen three times before: W-TinyLFU prefers it to a, so inserting b tries to evict a
        for (int i = 0; i < 3; i++) {
            b.block().retain();
            cache.insertAll(List.of(B), List.of(b.block()), outcome);
            if (outcome[0] != InsertOutcome.INSERTED) {
                throw new IllegalStateException("fixture: b was not inserted: " + outcome[0]);
            }
            cache.evictAll().releaseAll();
        }
        cache.insertAll(List.of(A), List.of(a.block()), outcome);
        if (outcome[0] != InsertOutcome.INSERTED) {
            throw new IllegalStateException("fixture: a was not inserted: " + outcome[0]);
        }
    }

    /**
     * A lease of {@code a} as a query takes it: r1 = 1 and the frees seen while holding it, then released; or r1 = 0
     * and -1 when {@code a} was gone.
     *
     * @return {leased, frees while held}
     */
    int[] leaseA() {
        SealedBlock[] out = new SealedBlock[1];
        if (cache.prefix(List.of(A), out) == 0) {
            return new int[] {0, -1};
        }
        int frees = a.frees();
        out[0].release();
        return new int[] {1, frees};
    }

    /** Whether {@code a} is still resident; then drains the index and frees everything this state made. */
    int residentThenDispose(boolean bStaysWithCaller) {
        int resident = cache.contains(A) ? 1 : 0;
        cache.evictAll().releaseAll();
        if (bStaysWithCaller) {
            b.block().release();
        }
        return resident;
    }

    int freesOfA() {
        return a.frees();
    }

    void disposeWitnesses() {
        a.dispose();
        b.dispose();
    }
}
