package io.pegaflow.server.transfer;

import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.node.remote.RemoteFetchTier;
import io.pegaflow.transfer.TransferEngine;
import org.jspecify.annotations.Nullable;

/** Builds {@link TransferStatus} snapshots, for {@code GET /transfer} and the admin UI. Thread-safe. */
public final class TransferStatusView {
    private final TransferEngine transfers;
    private final PegaEngine engine;
    private final @Nullable RemoteFetchTier tier;

    /** {@code tier} is null when this node only serves (no metaserver). */
    TransferStatusView(TransferEngine transfers, PegaEngine engine, @Nullable RemoteFetchTier tier) {
        this.transfers = transfers;
        this.engine = engine;
        this.tier = tier;
    }

    public TransferStatus snapshot() {
        return new TransferStatus(
                transfers.view(),
                engine.transferLockStats(),
                tier == null ? null : TransferStatus.Fetches.of(tier.stats()));
    }
}
