/**
 * The engine shared by every fabric: {@link io.pegaflow.transfer.lane.LaneEngine} (peers, validation, spreading a
 * batch over the lanes, failure propagation, counters) over a {@link io.pegaflow.transfer.lane.Fabric}'s
 * {@link io.pegaflow.transfer.lane.Lane}s, one agent thread each. Public only for the fabric packages; callers use
 * {@link io.pegaflow.transfer.TransferEngine}.
 */
@NullMarked
package io.pegaflow.transfer.lane;

import org.jspecify.annotations.NullMarked;
