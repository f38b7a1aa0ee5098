/**
 * The SSD tier: sharded, log-structured rings of checksummed entries, written and read with {@code O_DIRECT}
 * straight from and into pinned pool memory, rebuilt from disk on restart (see {@code docs/ssd.md}).
 *
 * <p>Public API: {@link io.pegaflow.core.ssd.SsdStore} (open, offer, flush, readPrefix, status, close),
 * which is also the engine's spill, {@link io.pegaflow.core.ssd.SsdBackingTier} (the engine's backing tier, with the
 * {@code max-prefetch-blocks} budget), {@link io.pegaflow.core.ssd.SsdConfig}, {@link io.pegaflow.core.ssd.SsdMetricsView},
 * {@link io.pegaflow.core.ssd.ShardStatus} and {@link io.pegaflow.core.ssd.SsdErrorKind}. Everything else is
 * package-private: the on-disk layouts ({@code ShardLayoutDescriptor}, {@code EntryDescriptor}, {@code SlotLayout}),
 * the index and rings ({@code SsdIndex}, {@code SsdShard}, {@code SsdEntry}), recovery ({@code ShardRecovery}), the
 * I/O agents ({@code SsdWriter}, {@code SsdReader}) and the only raw-address code ({@code NativeIo},
 * {@code DirectIoFile}, {@code IoScratch}).
 */
@NullMarked
package io.pegaflow.core.ssd;

import org.jspecify.annotations.NullMarked;
