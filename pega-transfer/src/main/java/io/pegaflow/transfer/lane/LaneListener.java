package io.pegaflow.transfer.lane;

import io.pegaflow.transfer.TransferException;

/** What a lane tells its engine. Called on the lane thread: must only record and enqueue. */
interface LaneListener {
    /** An endpoint of the connection failed or a part missed its deadline: drop the connection on every lane. */
    void connectionFailed(Connection connection, TransferException cause);
}
