package io.pegaflow.core.device.cuda;

import io.pegaflow.sys.cuda.Cuda;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * Where GPUs sit in the host: the NUMA node of each device, read from sysfs through the device's PCI bus id
 * ({@code /sys/bus/pci/devices/<bus id>/numa_node}). This is the CUDA-ordinal-correct mapping that the reference lacks
 * (it asks {@code nvidia-smi} by physical index, which is wrong under {@code CUDA_VISIBLE_DEVICES}).
 *
 * <p>Stateless; every method reads sysfs again.
 */
public final class CudaTopology {
    /** The node of a device that sysfs does not place (single-node hosts report -1). */
    public static final int UNKNOWN_NODE = -1;

    private static final Pattern BUS_ID = Pattern.compile("^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]$");
    private static final Pattern NODE_DIR = Pattern.compile("^node[0-9]+$");

    private CudaTopology() {}

    /** NUMA node of a CUDA device ordinal, or {@link #UNKNOWN_NODE}. Needs the driver; never throws. */
    public static int numaNodeOfDevice(int ordinal) {
        try {
            return numaNodeOfPciBusId(Path.of("/sys/bus/pci/devices"), Cuda.pciBusId(Cuda.device(ordinal)));
        } catch (RuntimeException e) {
            return UNKNOWN_NODE;
        }
    }

    /** Reads {@code <sysPciDevices>/<busId>/numa_node}; {@link #UNKNOWN_NODE} when absent, negative or odd. */
    static int numaNodeOfPciBusId(Path sysPciDevices, String busId) {
        String id = busId.toLowerCase(java.util.Locale.ROOT);
        // The driver prints an 8-digit domain ("00000000:1B:00.0"); sysfs uses 4 digits.
        if (id.matches("^0{4}[0-9a-f]{4}:.*")) {
            id = id.substring(4);
        }
        if (!BUS_ID.matcher(id).matches()) {
            return UNKNOWN_NODE;
        }
        try {
            String s = Files.readString(sysPciDevices.resolve(id).resolve("numa_node"))
                    .trim();
            int node = Integer.parseInt(s);
            return node >= 0 ? node : UNKNOWN_NODE;
        } catch (IOException | NumberFormatException e) {
            return UNKNOWN_NODE;
        }
    }

    /** Number of NUMA nodes of this host ({@code /sys/devices/system/node/node*}); 1 when sysfs says nothing. */
    public static int hostNumaNodeCount() {
        return hostNumaNodeCount(Path.of("/sys/devices/system/node"));
    }

    static int hostNumaNodeCount(Path sysNodes) {
        int n = 0;
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(sysNodes)) {
            for (Path p : dirs) {
                if (NODE_DIR.matcher(p.getFileName().toString()).matches()) {
                    n++;
                }
            }
        } catch (IOException e) {
            return 1;
        }
        return Math.max(1, n);
    }
}
