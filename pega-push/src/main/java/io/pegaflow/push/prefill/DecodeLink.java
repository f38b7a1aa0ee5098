package io.pegaflow.push.prefill;

import io.pegaflow.push.layout.ReceiveKey;
import org.jspecify.annotations.Nullable;

/**
 * The prefill server's calls to a decode server. An interface so the agent knows nothing of gRPC; the engine provides
 * the implementation over its channels.
 */
public interface DecodeLink {
    /** LayerArrived; {@code done} runs with null on success, or the failure. Never blocks. */
    void layerArrived(
            String decodeAddress,
            ReceiveKey receive,
            int tpRank,
            int layer,
            java.util.function.Consumer<@Nullable Throwable> done);

    /** PushFailed, best effort (the decode side's deadline covers a lost call). Never blocks. */
    void pushFailed(String decodeAddress, ReceiveKey receive, int tpRank, String reason);

    /**
     * Opens WatchReceive for one rank of a receive, for at most {@code timeoutNanos}: {@code broken} runs at most once
     * with a reason when the stream ends other than by {@link AutoCloseable#close()} or a receive that succeeded (the
     * decode server went away, or failed the receive). Closing cancels the stream. Never blocks.
     */
    AutoCloseable watch(
            String decodeAddress,
            ReceiveKey receive,
            int tpRank,
            long timeoutNanos,
            java.util.function.Consumer<String> broken);
}
