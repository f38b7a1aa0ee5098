package io.pegaflow.push.prefill;

import io.pegaflow.transfer.TransferResult;

/** What reaches the push agent: new pushes, and completions of its puts and calls (never more than it has out). */
sealed interface PushCommand {
    record Start(Push push) implements PushCommand {}

    /** A layer's batch resolved: every lane it used completed or closed. */
    record PutDone(Push push, int layer, TransferResult result, Throwable error) implements PushCommand {}

    /** The decode server answered LayerArrived for a layer. */
    record Delivered(Push push, int layer, Throwable error) implements PushCommand {}

    /** The push's WatchReceive stream ended early: the decode server went away or failed the receive. */
    record LinkBroken(Push push, String reason) implements PushCommand {}
}
