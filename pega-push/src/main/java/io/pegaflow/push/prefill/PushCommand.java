package io.pegaflow.push.prefill;

import io.pegaflow.transfer.TransferResult;
import org.jspecify.annotations.Nullable;

/**
 * What reaches the push agent: new pushes, and completions of its copies, puts and calls (never more than it has out).
 */
sealed interface PushCommand {
    record Start(Push push) implements PushCommand {}

    /**
     * A layer's copy to staging ran on the device's save lane ({@code error} is null when every byte landed), or the
     * lane stopped before it could.
     */
    record CopyDone(Push push, int layer, @Nullable Throwable error) implements PushCommand {}

    /**
     * A layer's batch resolved: every lane it used completed or closed. As the future's {@code whenComplete}:
     * {@code error} is null exactly when {@code result} is there.
     */
    record PutDone(
            Push push,
            int layer,
            @Nullable TransferResult result,
            @Nullable Throwable error) implements PushCommand {}

    /** The decode server answered LayerArrived for a layer: {@code error} is null when it succeeded. */
    record Delivered(Push push, int layer, @Nullable Throwable error) implements PushCommand {}

    /** The push's WatchReceive stream ended early: the decode server went away or failed the receive. */
    record LinkBroken(Push push, String reason) implements PushCommand {}
}
