/**
 * A compiled client of Save, QueryPrefetch and Load ({@link io.pegaflow.bench.link.LinkBench}): drives an instance that
 * another process registered (a torch worker on a GPU machine, a test's shm worker here) with the block-id patterns
 * of {@code gpu-tests/bandwidth.py}, so the server's own cost can be told from a Python client's. docs/gpu.md has the
 * commands.
 */
@NullMarked
package io.pegaflow.bench.link;

import org.jspecify.annotations.NullMarked;
