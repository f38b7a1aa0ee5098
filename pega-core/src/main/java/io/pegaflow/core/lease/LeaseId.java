package io.pegaflow.core.lease;

import io.pegaflow.core.error.EngineException;
import java.nio.ByteBuffer;
import java.security.SecureRandom;

/** The 16 opaque bytes a client holds for a lease, as two longs (no array per lookup). */
public record LeaseId(long high, long low) {
    public static final int LENGTH_BYTES = 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A random version-4 UUID, like the reference. */
    static LeaseId random() {
        long hi = RANDOM.nextLong();
        long lo = RANDOM.nextLong();
        hi = (hi & ~0xF000L) | 0x4000L;
        lo = (lo & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new LeaseId(hi, lo);
    }

    /**
     * Parses the wire form.
     *
     * @throws EngineException INVALID_ARGUMENT with the reference's texts for an empty or wrongly sized id
     */
    public static LeaseId parse(byte[] bytes) {
        if (bytes.length == 0) {
            throw EngineException.badRequest("query lease id must be non-empty");
        }
        if (bytes.length != LENGTH_BYTES) {
            throw EngineException.badRequest("query lease id must be 16 bytes, got " + bytes.length);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        return new LeaseId(b.getLong(), b.getLong());
    }

    public byte[] toBytes() {
        return ByteBuffer.allocate(LENGTH_BYTES).putLong(high).putLong(low).array();
    }
}
