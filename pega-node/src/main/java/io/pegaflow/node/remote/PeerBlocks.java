package io.pegaflow.node.remote;

import io.pegaflow.transfer.PeerId;
import java.util.List;

/**
 * What the remote tier asks of a peer that owns blocks, whatever the wire (the reference's {@code RdmaHandshake},
 * {@code QueryBlocksForTransfer} and {@code ReleaseTransferLock} in pega-server): exchange
 * transfer descriptors once, lock a prefix of blocks and learn where their segments lie in the peer's memory, and
 * release that lock. The tier then reads the segments itself over the transfer engine.
 *
 * <p>Every call carries the deadline it is given. Ownership: the node hands an instance to its remote tier, which
 * closes it once, when the tier closes.
 */
public interface PeerBlocks extends AutoCloseable {

    /**
     * Sends this node's transfer descriptor to {@code peer} and returns the peer's; the peer connects back before it
     * answers.
     *
     * @param requesterId this node's advertised address, as the peer knows it
     * @throws RuntimeException when the call fails or its deadline passes
     */
    byte[] handshake(PeerId peer, String requesterId, byte[] descriptor, long timeoutNanos);

    /**
     * Asks {@code peer} to lock the blocks of {@code hashes} it holds, for {@code requesterId}, and to say where their
     * segments are. The peer answers a prefix (it may skip what it no longer holds); the tier checks what it uses.
     *
     * @param checksums ask the peer for a CRC32C of each locked block's bytes (a peer that does not know the request
     *     answers none)
     * @throws RuntimeException when the call fails or its deadline passes
     */
    Grant lock(
            PeerId peer,
            String namespace,
            List<byte[]> hashes,
            String requesterId,
            boolean checksums,
            long timeoutNanos);

    /**
     * Ends a lock early. Fire and forget: it never throws and never waits for the answer (the lock expires at the
     * peer anyway if this is lost).
     */
    void release(PeerId peer, String session, long timeoutNanos);

    /** Drops every connection to peers. Idempotent. */
    @Override
    void close();

    /**
     * A peer's answer to {@link #lock}.
     *
     * @param session the lock's id, for {@link #release}; empty when the peer locked nothing
     * @param lockTimeoutSeconds how long the peer holds the lock from when it took it, by its own settings (0 when it
     *     does not say)
     * @param blocks the locked blocks, in the order the peer answered
     * @param checksums the CRC32C of each block's segments in slot order (K then V), parallel to {@code blocks}; empty
     *     when none were asked for or the peer sent none
     */
    record Grant(String session, long lockTimeoutSeconds, List<LockedBlock> blocks, int[] checksums) {
        public Grant {
            blocks = List.copyOf(blocks);
            checksums = checksums.clone();
        }

        /** A grant without checksums. */
        public Grant(String session, long lockTimeoutSeconds, List<LockedBlock> blocks) {
            this(session, lockTimeoutSeconds, blocks, new int[0]);
        }

        @Override
        public int[] checksums() {
            return checksums.clone();
        }
    }

    /** One locked block: its hash and, per slot, where its segments lie in the peer's registered memory. */
    record LockedBlock(byte[] hash, List<Slot> slots) {
        public LockedBlock {
            hash = hash.clone();
            slots = List.copyOf(slots);
        }

        @Override
        public byte[] hash() {
            return hash.clone();
        }
    }

    /**
     * A slot's segments in the peer's memory, as the peer reported them (unsigned on the wire, so a value past
     * {@code Long.MAX_VALUE} reads negative here): the K segment (or the whole slot) and, for split layouts, the V
     * segment; {@code vAddress == 0 && vSize == 0} when the slot is one contiguous segment.
     */
    record Slot(long kAddress, long kSize, long vAddress, long vSize) {}
}
