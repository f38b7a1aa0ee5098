/**
 * The prefill role: pushes, their layer-ready polling, device to pool copies and the puts into the decode server's
 * staging, driven by the push agent.
 */
@NullMarked
package io.pegaflow.push.prefill;

import org.jspecify.annotations.NullMarked;
