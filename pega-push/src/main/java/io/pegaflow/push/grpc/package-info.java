/**
 * The {@code pegaflow.ext.PdPush} gRPC service over the push engine and the gRPC link to decode servers
 * (LayerArrived, PushFailed).
 */
@NullMarked
package io.pegaflow.push.grpc;

import org.jspecify.annotations.NullMarked;
