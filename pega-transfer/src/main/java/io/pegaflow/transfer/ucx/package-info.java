/** The UCX fabric: {@link io.pegaflow.transfer.ucx.UcxTransferEngine} builds it; everything else is package-private. */
@NullMarked
package io.pegaflow.transfer.ucx;

import org.jspecify.annotations.NullMarked;
