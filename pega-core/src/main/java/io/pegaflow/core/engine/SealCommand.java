package io.pegaflow.core.engine;

/** What other threads send the sealing agent: a Save's slots, a flush barrier, or an in-flight collection. */
sealed interface SealCommand permits SealBatch, SealAgent.Flush, SealAgent.Gc {}
