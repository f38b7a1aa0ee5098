/**
 * Copy batches: {@link io.pegaflow.kernel.plan.RangePlan} (source, destination, length, coalesced by a
 * {@link io.pegaflow.kernel.plan.MergeRule}). A ground-floor package with no dependencies, so the device copiers, the
 * transfer engine and the push engine share one coalescing rule.
 */
@NullMarked
package io.pegaflow.kernel.plan;

import org.jspecify.annotations.NullMarked;
