package io.pegaflow.core.block;

/**
 * The storage hash of a block of a hybrid cache group, as upstream keys it ({@code novitalabs/pegaflow} v0.23.12,
 * {@code group_hash}): group 0 keeps the connector's hash, group {@code g > 0} appends {@code g} as four big-endian
 * bytes. The group therefore travels inside the key through every tier (RAM index, SSD entries, the metaserver and
 * peers' transfer descriptors), and an attention block and a state checkpoint of one token prefix never collide.
 */
public final class GroupHash {
    private GroupHash() {}

    /** The key bytes of {@code hash} in storage group {@code group}: {@code hash} itself for group 0, else a copy. */
    public static byte[] of(byte[] hash, int group) {
        if (group == 0) {
            return hash;
        }
        byte[] out = new byte[hash.length + Integer.BYTES];
        System.arraycopy(hash, 0, out, 0, hash.length);
        out[hash.length] = (byte) (group >>> 24);
        out[hash.length + 1] = (byte) (group >>> 16);
        out[hash.length + 2] = (byte) (group >>> 8);
        out[hash.length + 3] = (byte) group;
        return out;
    }
}
