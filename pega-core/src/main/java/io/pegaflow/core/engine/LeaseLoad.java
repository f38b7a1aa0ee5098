package io.pegaflow.core.engine;

/** One lease of a Load and the vLLM block ids its blocks land in, pairwise in lease order. */
public record LeaseLoad(byte[] lease, int[] blockIds) {}
