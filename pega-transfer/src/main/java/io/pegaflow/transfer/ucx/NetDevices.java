package io.pegaflow.transfer.ucx;

import io.pegaflow.transfer.TransferException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Resolves {@code pega.rdma.nics} names against the devices this host has, before UCX sees them. UCX itself only warns
 * about a listed device it cannot find and carries on with the others (and fails only when none is left), so without
 * this check a typo in one NIC name would silently run on fewer NICs than configured.
 *
 * <p>An RDMA device ({@code /sys/class/infiniband/<name>}) becomes {@code <name>:1} unless a port is given; a network
 * interface ({@code /sys/class/net/<name>}, for UCX's TCP transport) is passed as is.
 */
final class NetDevices {
    private NetDevices() {}

    /**
     * @param key the setting the names came from, which a refusal names
     * @param sysClass normally {@code /sys/class}
     * @return the UCX {@code NET_DEVICES} entries, in order
     * @throws TransferException {@link TransferException.Kind#INIT_FAILED} naming the first missing device
     */
    static List<String> resolve(List<String> nics, String key, Path sysClass) {
        List<String> out = new ArrayList<>(nics.size());
        for (String nic : nics) {
            int colon = nic.indexOf(':');
            String device = colon < 0 ? nic : nic.substring(0, colon);
            if (Files.isDirectory(sysClass.resolve("infiniband").resolve(device))) {
                out.add(colon < 0 ? device + ":1" : nic);
            } else if (colon < 0 && Files.exists(sysClass.resolve("net").resolve(device))) {
                out.add(device);
            } else {
                throw new TransferException(
                        TransferException.Kind.INIT_FAILED,
                        key + ": no RDMA device or network interface named '" + nic + "' (looked in "
                                + sysClass.resolve("infiniband") + " and " + sysClass.resolve("net") + ")");
            }
        }
        return out;
    }
}
