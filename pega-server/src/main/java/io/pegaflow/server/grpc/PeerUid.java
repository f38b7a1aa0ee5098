package io.pegaflow.server.grpc;

import io.pegaflow.core.device.ProcessUid;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;
import org.jspecify.annotations.Nullable;

/**
 * The operating-system user of the process at the other end of a gRPC connection, where Linux can tell: for a TCP
 * peer on this host (loopback or one of its own addresses), the uid the kernel lists for the peer's socket in
 * {@code /proc/net/tcp} or {@code tcp6} (the client's own socket, whose local address is our peer address); for an
 * in-process or Unix-domain transport, this process's uid. A peer on another host has no socket here, so no uid.
 *
 * <p>Read per registration only (a few hundred lines of procfs text), never on the data path.
 */
final class PeerUid {
    private static final Path TCP = Path.of("/proc/net/tcp");
    private static final Path TCP6 = Path.of("/proc/net/tcp6");
    private static final int LOCAL_ADDRESS = 1;
    private static final int UID = 7;

    private PeerUid() {}

    static OptionalInt of(@Nullable SocketAddress peer) {
        if (peer instanceof InetSocketAddress inet) {
            InetAddress address = inet.getAddress();
            return address == null ? OptionalInt.empty() : lookUp(procAddresses(address, inet.getPort()));
        }
        return peer == null ? OptionalInt.empty() : OptionalInt.of(ProcessUid.current());
    }

    /** How the kernel prints {@code address:port} in tcp (IPv4) and tcp6 (IPv6, IPv4-mapped too). */
    private static List<String> procAddresses(InetAddress address, int port) {
        String hexPort = String.format(Locale.ROOT, ":%04X", port);
        byte[] b = address.getAddress();
        if (address instanceof Inet4Address) {
            String v4 = words(b);
            return List.of(v4 + hexPort, "0000000000000000FFFF0000" + v4 + hexPort);
        }
        if (address instanceof Inet6Address) {
            return List.of(words(b) + hexPort);
        }
        return List.of();
    }

    /** Each 32-bit word of the address in the byte order of this little-endian host, as /proc prints it. */
    private static String words(byte[] b) {
        StringBuilder out = new StringBuilder(b.length * 2);
        for (int w = 0; w < b.length; w += 4) {
            for (int i = 3; i >= 0; i--) {
                out.append(String.format(Locale.ROOT, "%02X", b[w + i] & 0xFF));
            }
        }
        return out.toString();
    }

    private static OptionalInt lookUp(List<String> candidates) {
        for (Path table : List.of(TCP, TCP6)) {
            List<String> lines;
            try {
                lines = Files.readAllLines(table);
            } catch (IOException e) {
                continue; // no IPv6 on this host
            }
            for (String line : lines) {
                String[] f = line.trim().split("\\s+", -1);
                if (f.length > UID && candidates.contains(f[LOCAL_ADDRESS])) {
                    return OptionalInt.of(Integer.parseInt(f[UID]));
                }
            }
        }
        return OptionalInt.empty();
    }
}
