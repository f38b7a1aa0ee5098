package io.pegaflow.testkit;

/**
 * How one registered KV layer lies in device memory, as the connector describes it in {@code RegisterContextBatch}.
 *
 * <p>{@code numBlocks} N, {@code bytesPerBlock} B (stride between blocks and size of one segment),
 * {@code kvStrideBytes} K (K-to-V distance, 0 when G = 1), {@code segments} G (1 or 2) and {@code tensorBytes} S (the
 * registered size, the descriptor's {@code size}). The factories compute these from a contiguous tensor shape exactly
 * as the reference worker's {@code _infer_kv_cache_registration}; the canonical constructor accepts any non-negative
 * values so negative tests can describe layouts the server must reject.
 *
 * <p>Copy model: a layout {@linkplain #isSplit() is split} when {@code G == 2 && K > B}; then each block owns two
 * ranges of B bytes (K plane at {@code b·B}, V plane at {@code b·B + K}). Otherwise it owns one contiguous range of
 * {@code G·B} bytes at {@code b·B}. Only those bytes move; everything else in the tensor is untouched.
 *
 * <p>Immutable value; thread-safe.
 */
public record KvLayout(long numBlocks, long bytesPerBlock, long kvStrideBytes, int segments, long tensorBytes) {
    /** The pseudo-layer name of a cross-layer tensor without pipeline parallelism. */
    public static final String CROSS_LAYER_NAME = "ALL_LAYERS";

    public KvLayout {
        if (numBlocks < 0 || bytesPerBlock < 0 || kvStrideBytes < 0 || segments < 0 || tensorBytes < 0) {
            throw new IllegalArgumentException("negative layout field: N=" + numBlocks + " B=" + bytesPerBlock + " K="
                    + kvStrideBytes + " G=" + segments + " S=" + tensorBytes);
        }
    }

    /** N blocks of B contiguous bytes, G = 1, K = 0, S = N·B: the reference harness layout (4 × 1024). */
    public static KvLayout contiguous(long numBlocks, long bytesPerBlock) {
        return new KvLayout(numBlocks, bytesPerBlock, 0, 1, Math.multiplyExact(numBlocks, bytesPerBlock));
    }

    /**
     * FlashAttention's KV-first tensor {@code (2, nb, bs, h, d)}: N = nb, B = stride[1]·elem, K = stride[0]·elem,
     * G = 2.
     */
    public static KvLayout kvFirst(long numBlocks, long blockSize, long heads, long headDim, int elemBytes) {
        long stride1 = product(blockSize, heads, headDim);
        long stride0 = Math.multiplyExact(numBlocks, stride1);
        long kBytes = Math.multiplyExact(stride0, elemBytes);
        return new KvLayout(
                numBlocks, Math.multiplyExact(stride1, elemBytes), kBytes, 2, Math.multiplyExact(2, kBytes));
    }

    /** FlashInfer's blocks-first tensor {@code (nb, 2, bs, h, d)}: N = nb, B = stride[0]·elem, K = 0, G = 1. */
    public static KvLayout blocksFirst(long numBlocks, long blockSize, long heads, long headDim, int elemBytes) {
        long blockBytes = Math.multiplyExact(product(2, blockSize, heads, headDim), elemBytes);
        return new KvLayout(numBlocks, blockBytes, 0, 1, Math.multiplyExact(numBlocks, blockBytes));
    }

    /**
     * The cross-layer tensor {@code (nb, L, 2, bs, h, d)} registered as one pseudo-layer ({@link #CROSS_LAYER_NAME}):
     * N = nb, B = stride[0]·elem = L·2·bs·h·d·elem, K = 0, G = 1.
     */
    public static KvLayout crossLayer(
            long numBlocks, long numLayers, long blockSize, long heads, long headDim, int elemBytes) {
        long blockBytes = Math.multiplyExact(product(numLayers, 2, blockSize, heads, headDim), elemBytes);
        return new KvLayout(numBlocks, blockBytes, 0, 1, Math.multiplyExact(numBlocks, blockBytes));
    }

    /**
     * An MLA tensor {@code (nb_phys, bs_phys, d)} under a scheduler block of {@code schedulerBlockSize} tokens:
     * {@code r = schedulerBlockSize / bs_phys}, N = nb_phys / r, B = r·stride[0]·elem, K = 0, G = 1.
     *
     * @throws IllegalArgumentException when r is not a whole number or does not divide nb_phys (the connector raises
     *     ValueError before any RPC)
     */
    public static KvLayout mla(
            long numPhysBlocks, long physBlockSize, long dim, int elemBytes, long schedulerBlockSize) {
        if (physBlockSize <= 0 || schedulerBlockSize % physBlockSize != 0) {
            throw new IllegalArgumentException(
                    "block size " + schedulerBlockSize + " is not a multiple of physical block size " + physBlockSize);
        }
        long ratio = schedulerBlockSize / physBlockSize;
        if (ratio == 0 || numPhysBlocks % ratio != 0) {
            throw new IllegalArgumentException(
                    "physical block count " + numPhysBlocks + " is not a multiple of the split ratio " + ratio);
        }
        long physRowBytes = Math.multiplyExact(product(physBlockSize, dim), elemBytes);
        return new KvLayout(
                numPhysBlocks / ratio,
                Math.multiplyExact(ratio, physRowBytes),
                0,
                1,
                Math.multiplyExact(numPhysBlocks, physRowBytes));
    }

    /** The cross-layer pseudo-layer name: {@code ALL_LAYERS}, or {@code ALL_LAYERS_pp<rank>} when PP size > 1. */
    public static String crossLayerName(int ppRank, int ppSize) {
        return ppSize > 1 ? CROSS_LAYER_NAME + "_pp" + ppRank : CROSS_LAYER_NAME;
    }

    /** This layout with another registered size S, e.g. one byte short of {@link #requiredBytes()}. */
    public KvLayout withTensorBytes(long newTensorBytes) {
        return new KvLayout(numBlocks, bytesPerBlock, kvStrideBytes, segments, newTensorBytes);
    }

    /** {@code b·B + s·K}: byte offset of segment {@code s} of block {@code b} from the tensor start. */
    public long segmentOffset(long block, int segment) {
        return Math.addExact(
                Math.multiplyExact(block, bytesPerBlock), Math.multiplyExact((long) segment, kvStrideBytes));
    }

    /** {@code G == 2 && K > B}: K and V planes are copied as two separate ranges. */
    public boolean isSplit() {
        return segments == 2 && kvStrideBytes > bytesPerBlock;
    }

    /** The server's registration bound {@code (N−1)·B + (G−1)·K + B}; registration needs it to be ≤ S. */
    public long requiredBytes() {
        if (numBlocks == 0 || segments == 0) {
            return bytesPerBlock;
        }
        return Math.addExact(segmentOffset(numBlocks - 1, segments - 1), bytesPerBlock);
    }

    /** Bytes one block owns and a save/load moves: {@code G·B}. */
    public long ownedBytesPerBlock() {
        return Math.multiplyExact((long) segments, bytesPerBlock);
    }

    /** Number of byte ranges one block owns: 2 when split, else 1. */
    public int rangesPerBlock() {
        return isSplit() ? 2 : 1;
    }

    /** Length of each owned range: B when split, else {@code G·B}. */
    public long rangeBytes() {
        return isSplit() ? bytesPerBlock : ownedBytesPerBlock();
    }

    /** Offset from the tensor start of owned range {@code range} (0 or, when split, 1) of block {@code block}. */
    public long rangeOffset(long block, int range) {
        if (range < 0 || range >= rangesPerBlock()) {
            throw new IndexOutOfBoundsException("range " + range + " of " + rangesPerBlock());
        }
        return segmentOffset(block, range);
    }

    private static long product(long... factors) {
        long result = 1;
        for (long f : factors) {
            result = Math.multiplyExact(result, f);
        }
        return result;
    }
}
