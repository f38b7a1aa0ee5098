package io.pegaflow.core.instance;

import io.pegaflow.core.device.LayerMemory;
import io.pegaflow.core.error.EngineException;

/**
 * One layer tensor registered on one device, with the layout values the connector registers: {@code P} (base address),
 * {@code S} (storage bytes), {@code N} blocks, {@code B} bytes per block segment, {@code K} byte distance from a
 * block's K segment to its V segment, {@code G} segments.
 *
 * <pre>
 *   device address of (block b, segment s) = P + b·B + s·K        valid iff b·B + s·K + B ≤ S
 *   split layout      iff G == 2 and K > B: K and V planes copied separately, stored as two segments of B'
 *   contiguous layout otherwise:           one range of G·B bytes, stored as one segment of G·B'
 * </pre>
 *
 * {@code B' = roundUp(B, alignment)} is the host-side segment size (512 when the SSD tier needs O_DIRECT alignment,
 * else B); padding bytes are never copied. Immutable. Owns its {@link LayerMemory} reference, closed by the device
 * context after the lanes drained.
 */
public final class LayerRegistration {
    private final String name;
    private final int layerId;
    private final int group;
    private final LayerMemory memory;
    private final long numBlocks;
    private final long bytesPerBlock;
    private final long kvStrideBytes;
    private final int segments;
    private final long paddedSegmentBytes;
    private final boolean split;

    private LayerRegistration(
            String name,
            int layerId,
            int group,
            LayerMemory memory,
            long numBlocks,
            long bytesPerBlock,
            long kvStrideBytes,
            int segments,
            long paddedSegmentBytes) {
        this.name = name;
        this.layerId = layerId;
        this.group = group;
        this.memory = memory;
        this.numBlocks = numBlocks;
        this.bytesPerBlock = bytesPerBlock;
        this.kvStrideBytes = kvStrideBytes;
        this.segments = segments;
        this.paddedSegmentBytes = paddedSegmentBytes;
        this.split = segments == 2 && kvStrideBytes > bytesPerBlock;
    }

    /** A layer of storage group 0: see {@link #validate(String, int, int, LayerMemory, long, long, long, long, long)}. */
    public static LayerRegistration validate(
            String name,
            int layerId,
            LayerMemory memory,
            long numBlocks,
            long bytesPerBlock,
            long kvStrideBytes,
            long segments,
            long hostAlignmentBytes) {
        return validate(
                name, layerId, 0, memory, numBlocks, bytesPerBlock, kvStrideBytes, segments, hostAlignmentBytes);
    }

    /**
     * Validates a layer exactly as the reference does and fixes its host layout.
     *
     * @param layerId the layer's id within its storage group (its slot row in that group's blocks)
     * @param group the storage group (hybrid cache group, upstream {@code layer_group_ids}); 0 for attention layers
     * @throws EngineException INVALID_ARGUMENT {@code "invalid argument: layer {name}: {reason}"}
     */
    public static LayerRegistration validate(
            String name,
            int layerId,
            int group,
            LayerMemory memory,
            long numBlocks,
            long bytesPerBlock,
            long kvStrideBytes,
            long segments,
            long hostAlignmentBytes) {
        if (memory.baseAddress() == 0) {
            throw invalid(name, "data_ptr must not be null");
        }
        if (memory.sizeBytes() <= 0) {
            throw invalid(name, "size_bytes must be > 0");
        }
        if (bytesPerBlock == 0 || numBlocks == 0 || segments == 0) {
            throw invalid(name, "bytes_per_block, num_blocks, and segments must be non-zero");
        }
        if (segments > 2 || numBlocks < 0 || bytesPerBlock < 0 || kvStrideBytes < 0) {
            throw invalid(name, "segments must be 1 or 2 and sizes must fit in 63 bits");
        }
        if (segments > 1 && kvStrideBytes == 0) {
            throw invalid(name, "kv_stride_bytes must be > 0 when segments > 1");
        }
        if (segments == 2 && kvStrideBytes < bytesPerBlock) {
            // The reference accepts 0 < K < B and then copies G·B bytes per block, past the end it validated: the
            // K and V segments of one block would overlap, which no real KV cache does.
            throw invalid(
                    name,
                    "kv_stride_bytes " + kvStrideBytes + " overlaps the K segment: with 2 segments it must be >= "
                            + "bytes_per_block " + bytesPerBlock);
        }
        long end;
        try {
            // The end of the last byte any copy touches, computed from the length really copied: B per plane for the
            // split layout (the V plane of the last block ends last), G·B from the block start otherwise.
            boolean split = segments == 2 && kvStrideBytes > bytesPerBlock;
            long lastBlock = Math.multiplyExact(numBlocks - 1, bytesPerBlock);
            end = split
                    ? Math.addExact(Math.addExact(lastBlock, kvStrideBytes), bytesPerBlock)
                    : Math.addExact(lastBlock, Math.multiplyExact(segments, bytesPerBlock));
        } catch (ArithmeticException e) {
            throw invalid(name, "registered memory too small: layout overflows 64-bit offsets");
        }
        if (end > memory.sizeBytes()) {
            throw invalid(name, "registered memory too small: need " + end + " bytes, got " + memory.sizeBytes());
        }
        long padded = roundUp(bytesPerBlock, Math.max(1, hostAlignmentBytes));
        return new LayerRegistration(
                name, layerId, group, memory, numBlocks, bytesPerBlock, kvStrideBytes, (int) segments, padded);
    }

    private static EngineException invalid(String name, String reason) {
        return EngineException.invalidArgument("layer " + name + ": " + reason);
    }

    private static long roundUp(long value, long alignment) {
        return (value + alignment - 1) / alignment * alignment;
    }

    public String name() {
        return name;
    }

    /** The layer's id within its storage group: blocks of the group hold its slots at this row. */
    public int layerId() {
        return layerId;
    }

    /** The storage group whose blocks hold this layer's slots (0 unless the connector declared hybrid groups). */
    public int group() {
        return group;
    }

    public LayerMemory memory() {
        return memory;
    }

    public long numBlocks() {
        return numBlocks;
    }

    public long bytesPerBlock() {
        return bytesPerBlock;
    }

    public int segments() {
        return segments;
    }

    public boolean isSplit() {
        return split;
    }

    /** Host bytes per stored segment: B' for split, G·B' for contiguous. */
    public long hostSegmentBytes() {
        return split ? paddedSegmentBytes : paddedSegmentBytes * segments;
    }

    /** Real bytes copied per stored segment: B for split, G·B for contiguous. */
    public long copySegmentBytes() {
        return split ? bytesPerBlock : bytesPerBlock * segments;
    }

    /**
     * Device address of the range a copy of a block's segment touches (segment 1 = V plane, split layout only), after
     * checking that all {@link #copySegmentBytes()} of it lie inside the registered memory. Every copy plan of every
     * backend is built through here, so no range can leave the registration even if a layout check upstream is wrong.
     *
     * @throws EngineException INTERNAL {@code "storage error: layer {name}: transfer exceeds registered memory"}
     */
    public long deviceRange(long blockId, int segment) {
        long offset = blockId * bytesPerBlock + segment * kvStrideBytes;
        if (blockId < 0
                || blockId >= numBlocks
                || segment < 0
                || segment >= (split ? 2 : 1)
                || offset > memory.sizeBytes() - copySegmentBytes()) {
            throw EngineException.storage("layer " + name + ": transfer exceeds registered memory");
        }
        return memory.baseAddress() + offset;
    }

    /** Whether {@code blockId} addresses memory inside the registration. */
    public boolean containsBlock(long blockId) {
        return blockId >= 0 && blockId < numBlocks;
    }
}
