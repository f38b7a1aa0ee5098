package io.pegaflow.transfer.ucx;

import io.pegaflow.transfer.lane.Lane;
import java.nio.ByteBuffer;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpRemoteKey;

/**
 * One lane's endpoint to one peer and the peer's remote keys unpacked on it, indexed like the peer's region table.
 * Touched only by its lane's thread.
 *
 * @param address the peer worker address the endpoint was made from, kept reachable for the endpoint's life
 */
record UcxEndpoint(UcpEndpoint endpoint, UcpRemoteKey[] rkeys, ByteBuffer address, Lane.Failure failure) {}
