/**
 * Test fixtures that play the reference vLLM connector against a real PegaFlow server over gRPC, on the host backend.
 *
 * <p>Public API:
 *
 * <ul>
 *   <li>{@link io.pegaflow.testkit.MockVllmWorker} (with its {@code Builder}) and {@link io.pegaflow.testkit.LoadResult}:
 *       the worker role (register, save, load, unregister; fill and verify block bytes).
 *   <li>{@link io.pegaflow.testkit.MockScheduler} and {@link io.pegaflow.testkit.SessionHandle}: the scheduler role
 *       (session, query, release).
 *   <li>{@link io.pegaflow.testkit.ShmDeviceMemory}: host-backend device memory and its descriptor;
 *       {@link io.pegaflow.testkit.LayerRegion}: one registered layer within it.
 *   <li>{@link io.pegaflow.testkit.LoadStateShm}: the 32-byte load completion object.
 *   <li>{@link io.pegaflow.testkit.KvLayout}: (N, B, K, G, S) of the connector's layouts.
 *   <li>{@link io.pegaflow.testkit.BlockPattern}: deterministic block bytes and block hashes.
 *   <li>{@link io.pegaflow.testkit.ReferenceHarness}: the reference harness constants.
 *   <li>{@link io.pegaflow.testkit.TestkitTimeoutException}: a wait ran out of time.
 * </ul>
 */
@NullMarked
package io.pegaflow.testkit;

import org.jspecify.annotations.NullMarked;
