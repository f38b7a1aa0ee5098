/** The UCX fabric: {@link io.pegaflow.transfer.ucx.UcxTransferEngine} builds it; everything else is package-private. */
package io.pegaflow.transfer.ucx;
