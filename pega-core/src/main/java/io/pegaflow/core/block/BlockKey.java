package io.pegaflow.core.block;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Identity of a KV block: the instance's namespace and the connector's opaque hash bytes (vLLM's chained prefix hash,
 * 32 bytes in production). Immutable; the hash code is computed once because keys are looked up many times per query.
 *
 * <p>The hash array is owned by the key after construction: callers must not modify it.
 *
 * <p>The hash code mixes the bytes eight at a time ({@link #hashOf}) instead of {@link Arrays#hashCode(byte[])}: the
 * polynomial hash is slower and collides badly on structured hashes (the reference's test and bench hashes are a salt
 * and a little-endian index, for which {@code 31·b[8] + b[9]} repeats every 31 indices), which turned index buckets
 * into tree bins.
 */
public final class BlockKey {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long C1 = 0x9E3779B97F4A7C15L;
    private static final long C2 = 0xC2B2AE3D27D4EB4FL;

    private final String namespace;
    private final byte[] hash;
    private final int hashCode;

    public BlockKey(String namespace, byte[] hash) {
        this.namespace = namespace;
        this.hash = hash;
        this.hashCode = hashOf(namespace, hash);
    }

    /** The hash code a key of {@code namespace} and {@code hash} has. */
    public static int hashOf(String namespace, byte[] hash) {
        long h = namespace.hashCode() * C1 + hash.length;
        int i = 0;
        for (; i + Long.BYTES <= hash.length; i += Long.BYTES) {
            h = Long.rotateLeft(h ^ ((long) LONGS.get(hash, i) * C2), 31) * C1;
        }
        long tail = 0;
        for (int shift = 0; i < hash.length; i++, shift += 8) {
            tail |= (hash[i] & 0xFFL) << shift;
        }
        h = Long.rotateLeft(h ^ (tail * C2), 31) * C1;
        // SplitMix64's finaliser: every input bit reaches the low 32 bits a hash table uses.
        h = (h ^ (h >>> 30)) * 0xBF58476D1CE4E5B9L;
        h = (h ^ (h >>> 27)) * 0x94D049BB133111EBL;
        return (int) (h ^ (h >>> 31));
    }

    /** Whether this key is ({@code namespace}, {@code hash}) whose {@link #hashOf} is {@code hashCode}. */
    public boolean matches(String namespace, byte[] hash, int hashCode) {
        return this.hashCode == hashCode && this.namespace.equals(namespace) && Arrays.equals(this.hash, hash);
    }

    public String namespace() {
        return namespace;
    }

    /** The hash bytes; shared, never modify. */
    public byte[] hash() {
        return hash;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof BlockKey other)) {
            return false;
        }
        return hashCode == other.hashCode && namespace.equals(other.namespace) && Arrays.equals(hash, other.hash);
    }

    @Override
    public int hashCode() {
        return hashCode;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(namespace.length() + 2 + hash.length * 2);
        sb.append(namespace).append(':');
        for (byte b : hash) {
            sb.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
        }
        return sb.toString();
    }
}
