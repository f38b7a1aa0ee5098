package io.pegaflow.bench.loadgen;

import io.pegaflow.sys.OffHeap;

/**
 * Hashes and bytes of the simulated KV blocks, both derived from (universe, prefix, position) only, so every worker
 * that saves block j of prefix k saves the same bytes under the same hash, and any worker can verify a block another
 * one saved.
 *
 * <p>The universe mixes the seed with the block size, layer count and hash length, so runs with another layout never
 * share hashes (and a warm server from an identical earlier run is a legitimate cache hit).
 *
 * <p>Content of one (block, layer): 64-bit word i is {@code base ^ (i · φ)} with a per-(block, layer) base. A copy
 * from the wrong block, layer or offset, a truncation or a zeroed range all change some word. Filling and checking
 * run at a few GB/s on one core.
 */
final class BlockContent {
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private final long universe;
    private final int hashBytes;

    BlockContent(long seed, long blockBytes, int layers, int hashBytes) {
        this.universe = mix64(mix64(mix64(seed) ^ blockBytes) ^ ((long) layers << 32 | hashBytes));
        this.hashBytes = hashBytes;
    }

    /** The block hash of position {@code j} of prefix {@code k}. */
    byte[] hash(long k, int j) {
        byte[] out = new byte[hashBytes];
        long state = blockSeed(k, j);
        for (int i = 0; i < hashBytes; i += 8) {
            state = mix64(state + GOLDEN);
            for (int b = 0; b < 8 && i + b < hashBytes; b++) {
                out[i + b] = (byte) (state >>> (8 * b));
            }
        }
        return out;
    }

    /** The base of the content of position {@code j} of prefix {@code k} in {@code layer}. */
    long contentBase(long k, int j, int layer) {
        return mix64(blockSeed(k, j) ^ (layer + 1) * 0xD1B54A32D192ED03L);
    }

    /** Word {@code i} of a block whose content base is {@code base}. */
    static long word(long base, long i) {
        return base ^ (i * GOLDEN);
    }

    /** Writes the block's content to {@code [address, address + bytes)}. OFF-HEAP: the caller owns the range. */
    static void fill(long address, long bytes, long base) {
        long words = bytes >>> 3;
        for (long i = 0; i < words; i++) {
            OffHeap.putLong(address + (i << 3), word(base, i));
        }
        long tail = word(base, words);
        for (long b = words << 3; b < bytes; b++) {
            OffHeap.putByte(address + b, (byte) (tail >>> (8 * (b & 7))));
        }
    }

    /**
     * Checks {@code [address, address + bytes)} against the block's content.
     *
     * @return the offset of the first differing byte's word, or -1 when every byte matches
     */
    static long firstMismatch(long address, long bytes, long base) {
        long words = bytes >>> 3;
        for (long i = 0; i < words; i++) {
            if (OffHeap.getLong(address + (i << 3)) != word(base, i)) {
                return i << 3;
            }
        }
        long tail = word(base, words);
        for (long b = words << 3; b < bytes; b++) {
            if (OffHeap.getByte(address + b) != (byte) (tail >>> (8 * (b & 7)))) {
                return b;
            }
        }
        return -1;
    }

    private long blockSeed(long k, int j) {
        return mix64(universe ^ mix64(k * GOLDEN + j));
    }

    static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
