package io.pegaflow.core.block;

import java.util.Arrays;

/**
 * Identity of a KV block: the instance's namespace and the connector's opaque hash bytes (vLLM's chained prefix hash,
 * 32 bytes in production). Immutable; the hash code is computed once because keys are looked up many times per query.
 *
 * <p>The hash array is owned by the key after construction: callers must not modify it.
 */
public final class BlockKey {
    private final String namespace;
    private final byte[] hash;
    private final int hashCode;

    public BlockKey(String namespace, byte[] hash) {
        this.namespace = namespace;
        this.hash = hash;
        this.hashCode = 31 * namespace.hashCode() + Arrays.hashCode(hash);
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
