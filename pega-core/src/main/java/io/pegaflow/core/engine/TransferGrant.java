package io.pegaflow.core.engine;

import java.util.List;

/**
 * The answer to a peer's {@code QueryBlocksForTransfer}: the lock session that keeps the found blocks' memory alive,
 * and where each block's bytes lie in this node's pool, captured while the lock already held them.
 *
 * @param sessionId the transfer-lock session (a UUIDv4 string), opened even when nothing was found
 * @param lockTimeoutSeconds how long the session lives unreleased
 * @param blocks the found blocks in request order (misses skipped)
 */
public record TransferGrant(String sessionId, long lockTimeoutSeconds, List<Block> blocks) {
    public TransferGrant {
        blocks = List.copyOf(blocks);
    }

    /** One found block: its hash and, per slot in slot order, its segments. */
    public record Block(byte[] hash, List<Slot> slots) {
        public Block {
            slots = List.copyOf(slots);
        }
    }

    /**
     * One slot's host segments: {@code k} is segment 0 (the whole slot for the contiguous layout), {@code v} segment 1
     * or 0/0.
     */
    public record Slot(long kAddress, long kBytes, long vAddress, long vBytes) {}
}
