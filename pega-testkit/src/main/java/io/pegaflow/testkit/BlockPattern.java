package io.pegaflow.testkit;

import com.google.protobuf.ByteString;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;

/**
 * Deterministic block contents and block hashes for save/load round trips.
 *
 * <p>Two fills:
 *
 * <ul>
 *   <li>{@link #uniform(int) uniform}: every byte of block i is {@code ((i % 251) + 1) XOR d(salt)}, with
 *       {@code d(0) = 0}, so salt 0 is exactly the reference harness fill. The one combination that would give 0 is
 *       mapped to {@code 0xFF}, so a uniform block is never all zero. Cheap and readable in a hex dump, but it cannot
 *       see a byte that was copied from the wrong place inside the same block.
 *   <li>{@link #perByte(long) per-byte}: byte j of block i is a byte of a SplitMix64 hash of (salt, i, j / 8), so
 *       corruption, truncation, a shifted copy or a K/V swap of any byte is detected. {@link #forSlot} mixes the layer
 *       name and TP rank in, so data landing in the wrong layer or rank is detected too.
 * </ul>
 *
 * <p>Hashes follow the reference harness: {@link #hash(int, int)} is {@code [salt] ++ u32_le(i)} (5 bytes);
 * {@link #hash32(int, int)} is the SHA-256 of that (32 bytes, the size of vLLM's default block hashes).
 *
 * <p>Immutable value; thread-safe.
 */
public final class BlockPattern {
    /** Which fill a pattern produces. */
    public enum Kind {
        UNIFORM,
        PER_BYTE
    }

    private static final int REFERENCE_MODULUS = 251;
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;
    private static final long BLOCK_MIX = 0xD1B54A32D192ED03L;

    private final Kind kind;
    private final long seed;

    private BlockPattern(Kind kind, long seed) {
        this.kind = kind;
        this.seed = seed;
    }

    /** The reference-style fill, one byte value per block (salt 0 = the reference harness exactly). */
    public static BlockPattern uniform(int salt) {
        return new BlockPattern(Kind.UNIFORM, salt);
    }

    /** A fill where every byte depends on (salt, block, byte index). */
    public static BlockPattern perByte(long salt) {
        return new BlockPattern(Kind.PER_BYTE, salt);
    }

    public Kind kind() {
        return kind;
    }

    /** The salt (uniform) or the derived seed (per-byte, after {@link #forSlot}). */
    public long seed() {
        return seed;
    }

    /**
     * The pattern one (layer, effective TP rank) slot carries: per-byte patterns mix both in, uniform patterns are
     * returned unchanged (the reference fills every layer alike).
     */
    public BlockPattern forSlot(String layerName, int tpRank) {
        if (kind == Kind.UNIFORM) {
            return this;
        }
        long nameHash = 0xcbf29ce484222325L;
        for (byte b : layerName.getBytes(StandardCharsets.UTF_8)) {
            nameHash = (nameHash ^ (b & 0xFF)) * 0x100000001b3L;
        }
        return new BlockPattern(Kind.PER_BYTE, mix64(mix64(seed ^ nameHash) + tpRank * GOLDEN));
    }

    /** The byte at {@code byteIndex} of the bytes block {@code blockId} owns (K plane first, then V plane). */
    public byte byteAt(int blockId, long byteIndex) {
        if (kind == Kind.UNIFORM) {
            return uniformByte((int) seed, blockId);
        }
        long word = mix64(blockSeed(blockId) + (byteIndex >>> 3) * GOLDEN);
        return (byte) (word >>> ((byteIndex & 7) << 3));
    }

    /** Writes bytes {@code [startByteIndex, startByteIndex + length)} of block {@code blockId} into {@code dst}. */
    public void fill(int blockId, long startByteIndex, byte[] dst, int dstIndex, int length) {
        if (kind == Kind.UNIFORM) {
            java.util.Arrays.fill(dst, dstIndex, dstIndex + length, uniformByte((int) seed, blockId));
            return;
        }
        long blockSeed = blockSeed(blockId);
        long index = startByteIndex;
        int i = 0;
        while (i < length) {
            long word = mix64(blockSeed + (index >>> 3) * GOLDEN);
            int shift = (int) (index & 7);
            int n = Math.min(8 - shift, length - i);
            for (int k = 0; k < n; k++) {
                dst[dstIndex + i + k] = (byte) (word >>> ((shift + k) << 3));
            }
            i += n;
            index += n;
        }
    }

    /** Bytes {@code [startByteIndex, startByteIndex + length)} of block {@code blockId} as a new array. */
    public byte[] bytes(int blockId, long startByteIndex, int length) {
        byte[] out = new byte[length];
        fill(blockId, startByteIndex, out, 0, length);
        return out;
    }

    /** The uniform fill byte of block {@code blockId}: {@code ((i % 251) + 1) XOR d(salt)}, never 0. */
    public static byte uniformByte(int salt, int blockId) {
        int reference = Math.floorMod(blockId, REFERENCE_MODULUS) + 1;
        int derived = salt == 0 ? 0 : (int) (mix64(salt) & 0xFF);
        int value = reference ^ derived;
        return (byte) (value == 0 ? 0xFF : value);
    }

    /** The reference harness hash: {@code [salt] ++ u32_le(index)}, 5 bytes. */
    public static ByteString hash(int salt, int index) {
        byte[] h = ByteBuffer.allocate(5)
                .order(ByteOrder.LITTLE_ENDIAN)
                .put((byte) salt)
                .putInt(index)
                .array();
        return ByteString.copyFrom(h);
    }

    /** A 32-byte hash: SHA-256 of {@link #hash(int, int)}. */
    public static ByteString hash32(int salt, int index) {
        try {
            return ByteString.copyFrom(MessageDigest.getInstance("SHA-256")
                    .digest(hash(salt, index).toByteArray()));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required on every JVM", e);
        }
    }

    /** {@link #hash(int, int)} for indices {@code 0..count-1}. */
    public static List<ByteString> hashes(int salt, int count) {
        List<ByteString> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(hash(salt, i));
        }
        return out;
    }

    /** {@link #hash32(int, int)} for indices {@code 0..count-1}. */
    public static List<ByteString> hashes32(int salt, int count) {
        List<ByteString> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(hash32(salt, i));
        }
        return out;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BlockPattern other && other.kind == kind && other.seed == seed;
    }

    @Override
    public int hashCode() {
        return kind.hashCode() * 31 + Long.hashCode(seed);
    }

    @Override
    public String toString() {
        return "BlockPattern[" + kind + ", seed=" + seed + "]";
    }

    private long blockSeed(int blockId) {
        return mix64(seed ^ (blockId * BLOCK_MIX));
    }

    /** SplitMix64's finaliser (Stafford variant 13). */
    private static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
