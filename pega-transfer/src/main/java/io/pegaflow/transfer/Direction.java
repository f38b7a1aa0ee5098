package io.pegaflow.transfer;

/** Which way a one-sided operation moves bytes. */
public enum Direction {
    /** Read the peer's memory into local memory (the reference's RDMA READ). */
    GET,
    /** Write local memory into the peer's memory (RDMA WRITE). */
    PUT
}
