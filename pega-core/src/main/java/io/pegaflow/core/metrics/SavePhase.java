package io.pegaflow.core.metrics;

/**
 * The steps of one Save, in the order a request passes them; each is timed on every Save and exported as
 * {@code pegaflow_save_phase_seconds{phase=...}} ({@code docs/metrics.md}). The gRPC steps (receive, parse, decode,
 * reply) are recorded by the server, the rest by the engine. Their sums against the RPC's own duration tell where a
 * large Save's time goes besides the copy.
 */
public enum SavePhase {
    /** From the request's headers until its last byte arrived (the body's transfer over the socket). */
    RECEIVE("receive"),
    /** Protobuf decoding of the request message. */
    PARSE("parse"),
    /** Caller authorization and translation of the message into the engine's arguments. */
    DECODE("decode"),
    /** Device, rank, instance and layer-name checks. */
    VALIDATE("validate"),
    /** Hashing the request's keys, dropping duplicates and blocks already resident, ordering each layer's pairs. */
    INDEX("index"),
    /** The request's share check and its pool allocations. */
    ALLOCATE("allocate"),
    /** Building the copy plan (device ranges to pool addresses). */
    PLAN("plan"),
    /** The device-to-pool copy on the save lane, from hand-off until it completed. */
    COPY("copy"),
    /**
     * The slots of the stored pairs: built while the copy runs (so this overlaps {@link #COPY}), handed to the sealing
     * worker once it completed.
     */
    SEAL("seal"),
    /** Building and sending the reply. */
    REPLY("reply");

    private final String label;

    SavePhase(String label) {
        this.label = label;
    }

    /** The {@code phase} label value. */
    public String label() {
        return label;
    }
}
