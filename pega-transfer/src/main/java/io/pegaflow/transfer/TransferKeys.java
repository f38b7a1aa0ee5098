package io.pegaflow.transfer;

/**
 * The configuration keys a {@link TransferConfig} was read from, so that a refused value is reported under the key
 * the operator set: the transfer engine's {@code pega.rdma.*} ({@link #RDMA}), or another engine's of the same meaning
 * (the P/D push engine's {@code pega.pd.*}).
 *
 * @param enabled the switch that turned the engine on
 * @param nics the device list ({@link NicList} syntax)
 * @param lanes connections per peer
 * @param transports the UCX transport list
 */
public record TransferKeys(String enabled, String nics, String lanes, String transports) {
    public static final TransferKeys RDMA =
            new TransferKeys("pega.rdma.enabled", "pega.rdma.nics", "pega.rdma.qps-per-peer", "pega.rdma.transports");
}
