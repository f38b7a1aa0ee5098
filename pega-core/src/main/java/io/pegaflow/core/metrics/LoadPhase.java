package io.pegaflow.core.metrics;

/**
 * The steps of one Load, in the order a request passes them; each is timed on every Load that reaches it and exported
 * as {@code pegaflow_load_phase_seconds{phase=...}} ({@code docs/metrics.md}). The RPC answers once the copy is
 * queued: {@link #REPLY} follows {@link #QUEUE}, while {@link #PLAN}, {@link #COPY} and {@link #SIGNAL} run on the
 * device's load lane.
 */
public enum LoadPhase {
    /** From the request's headers until its last byte arrived. */
    RECEIVE("receive"),
    /** Protobuf decoding of the request message. */
    PARSE("parse"),
    /** Caller authorization and translation of the message into the engine's arguments (block ids, layer names). */
    DECODE("decode"),
    /** Lease handles, the load-state object, device, rank, instance and layer-name checks. */
    VALIDATE("validate"),
    /** Taking one share of each lease (the index side of a Load). */
    LEASE("lease"),
    /** From the hand-off to the load lane until the lane started the copy. */
    QUEUE("queue"),
    /** Building the copy plan (pool addresses to device ranges), on the lane. */
    PLAN("plan"),
    /** The pool-to-device copy, on the lane. */
    COPY("copy"),
    /** Writing the load-state object once the copy completed. */
    SIGNAL("signal"),
    /** Building and sending the reply. */
    REPLY("reply");

    private final String label;

    LoadPhase(String label) {
        this.label = label;
    }

    /** The {@code phase} label value. */
    public String label() {
        return label;
    }
}
