package io.pegaflow.transfer;

import io.pegaflow.transfer.TransferException.Kind;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * What two nodes exchange once, in the {@code handshake_metadata} bytes of {@code RdmaHandshake}, before one-sided
 * operations can flow: one worker address per connection lane, the registered regions with their packed remote keys,
 * and the numbers both sides must agree on. Our own format ({@code docs/transfer.md}; UCX rkeys are opaque blobs, so
 * the reference's bincode layout cannot carry them).
 *
 * <pre>
 *   descriptor (little endian), version 1:
 *   0        4        6         8              16           20          24             28            32
 *   +--------+--------+---------+--------------+------------+-----------+--------------+-------------+
 *   | "PGX1" | ver=1  | fabric  | instance id  | lanes (N)  | NIC count | region count | total bytes |
 *   | u32    | u16    | u16     | u64          | u32        | u32       | u32          | u32         |
 *   +--------+--------+---------+--------------+------------+-----------+--------------+-------------+
 *   32:  N       x { address bytes u32, worker address }              lane i connects to the peer's lane i
 *        regions x { base u64, length u64, rkey bytes u32, packed rkey }   sorted by base, disjoint
 *   total bytes - 4: crc32c u32 over everything before it
 * </pre>
 *
 * {@link #decode} accepts a descriptor only when every length field is in range and agrees with the byte count, the
 * CRC matches and the region table is sorted, non-empty per entry and free of overlap and overflow; anything else is
 * {@link Kind#INVALID_DESCRIPTOR} with a message naming the first field that is wrong. Trailing bytes are refused.
 *
 * @param instanceId random per engine instance, so a restarted peer at the same address is told apart
 * @param laneAddresses one worker address per connection lane ({@code qps_per_peer} of them)
 * @param nicCount how many NICs the node runs its lanes over; peers must agree
 * @param regions the registered regions, sorted by base
 */
public record HandshakeDescriptor(
        Fabric fabric, long instanceId, List<byte[]> laneAddresses, int nicCount, List<RegisteredRegion> regions) {
    static final int MAGIC = 0x31584750; // "PGX1"
    static final int VERSION = 1;
    static final int HEADER_BYTES = 32;
    static final int CRC_BYTES = 4;

    /** Bounds that keep a hostile descriptor from costing memory: far above what a real node sends. */
    public static final int MAX_LANES = 64;

    public static final int MAX_NICS = 64;
    public static final int MAX_REGIONS = 4096;
    public static final int MAX_BLOB_BYTES = 16 * 1024;
    public static final int MAX_TOTAL_BYTES = 4 * 1024 * 1024;

    /** The data plane a descriptor belongs to; nodes of different fabrics cannot pair. */
    public enum Fabric {
        UCX(1),
        LOOPBACK(2);

        final int code;

        Fabric(int code) {
            this.code = code;
        }

        static @Nullable Fabric of(int code) {
            for (Fabric f : values()) {
                if (f.code == code) {
                    return f;
                }
            }
            return null;
        }

        @Override
        public String toString() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** @throws IllegalArgumentException when the parts break a rule {@link #decode} enforces */
    public HandshakeDescriptor {
        laneAddresses = List.copyOf(laneAddresses);
        regions = List.copyOf(regions);
        String problem = problem(laneAddresses, nicCount, regions);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
    }

    /** Connections per peer ({@code qps_per_peer}). */
    public int lanes() {
        return laneAddresses.size();
    }

    /**
     * Refuses a peer this node cannot pair with. Both sides check, so a mismatch fails the handshake on either end.
     *
     * @throws TransferException {@link Kind#INCOMPATIBLE_PEER} naming both values
     */
    public void checkCompatible(HandshakeDescriptor remote) {
        if (remote.fabric != fabric) {
            throw new TransferException(
                    Kind.INCOMPATIBLE_PEER, "remote fabric mismatch: local=" + fabric + ", remote=" + remote.fabric);
        }
        if (remote.lanes() != lanes()) {
            throw new TransferException(
                    Kind.INCOMPATIBLE_PEER,
                    "remote qps_per_peer mismatch: local=" + lanes() + ", remote=" + remote.lanes()
                            + " (every node must use as many connections per peer)");
        }
        if (remote.nicCount != nicCount) {
            throw new TransferException(
                    Kind.INCOMPATIBLE_PEER,
                    "remote NIC count mismatch: local=" + nicCount + ", remote=" + remote.nicCount
                            + " (every node must list as many NICs)");
        }
    }

    /** The index of the region holding {@code [addr, addr + len)}, or -1. Regions are sorted, so binary search. */
    public int regionIndexOf(long addr, long len) {
        int lo = 0;
        int hi = regions.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            RegisteredRegion r = regions.get(mid);
            if (addr < r.base()) {
                hi = mid - 1;
            } else if (addr - r.base() >= r.lengthBytes()) {
                lo = mid + 1;
            } else {
                return r.contains(addr, len) ? mid : -1; // -1: starts inside this region but runs past its end
            }
        }
        return -1;
    }

    /** The wire bytes. */
    public byte[] encode() {
        int total = HEADER_BYTES + CRC_BYTES;
        for (byte[] a : laneAddresses) {
            total += 4 + a.length;
        }
        for (RegisteredRegion r : regions) {
            total += 20 + r.packedRkey().length;
        }
        ByteBuffer b = ByteBuffer.allocate(total).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC).putShort((short) VERSION).putShort((short) fabric.code).putLong(instanceId);
        b.putInt(lanes()).putInt(nicCount).putInt(regions.size()).putInt(total);
        for (byte[] a : laneAddresses) {
            b.putInt(a.length).put(a);
        }
        for (RegisteredRegion r : regions) {
            b.putLong(r.base())
                    .putLong(r.lengthBytes())
                    .putInt(r.packedRkey().length)
                    .put(r.packedRkey());
        }
        b.putInt(crc(b.array(), total - CRC_BYTES));
        return b.array();
    }

    /**
     * Decodes and validates wire bytes.
     *
     * @throws TransferException {@link Kind#INVALID_DESCRIPTOR} naming what is wrong
     */
    public static HandshakeDescriptor decode(byte[] bytes) {
        if (bytes.length < HEADER_BYTES + CRC_BYTES) {
            throw invalid(bytes.length + " bytes, shorter than the " + (HEADER_BYTES + CRC_BYTES) + "-byte minimum");
        }
        if (bytes.length > MAX_TOTAL_BYTES) {
            throw invalid(bytes.length + " bytes, more than the " + MAX_TOTAL_BYTES + "-byte maximum");
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int magic = b.getInt();
        if (magic != MAGIC) {
            throw invalid(String.format("bad magic 0x%08x (expected 0x%08x \"PGX1\")", magic, MAGIC));
        }
        int version = b.getShort() & 0xFFFF;
        if (version != VERSION) {
            throw invalid("unsupported version " + version + " (this node reads " + VERSION + ")");
        }
        int fabricCode = b.getShort() & 0xFFFF;
        Fabric fabric = Fabric.of(fabricCode);
        if (fabric == null) {
            throw invalid("unknown fabric code " + fabricCode);
        }
        long instanceId = b.getLong();
        int lanes = b.getInt();
        int nics = b.getInt();
        int regionCount = b.getInt();
        int total = b.getInt();
        if (total != bytes.length) {
            throw invalid("total bytes field says " + Integer.toUnsignedString(total) + ", got " + bytes.length);
        }
        int crc = b.getInt(bytes.length - CRC_BYTES);
        if (crc != crc(bytes, bytes.length - CRC_BYTES)) {
            throw invalid("CRC mismatch");
        }
        checkCount("lane count", lanes, 1, MAX_LANES);
        checkCount("NIC count", nics, 1, MAX_NICS);
        checkCount("region count", regionCount, 0, MAX_REGIONS);
        b.limit(bytes.length - CRC_BYTES);
        List<byte[]> addresses = new ArrayList<>(lanes);
        for (int i = 0; i < lanes; i++) {
            addresses.add(blob(b, "lane " + i + " address"));
        }
        List<RegisteredRegion> regions = new ArrayList<>(regionCount);
        for (int i = 0; i < regionCount; i++) {
            if (b.remaining() < 16) {
                throw invalid("region " + i + " is truncated");
            }
            long base = b.getLong();
            long length = b.getLong();
            regions.add(new RegisteredRegion(base, length, blob(b, "region " + i + " rkey")));
        }
        if (b.hasRemaining()) {
            throw invalid(b.remaining() + " trailing bytes");
        }
        String problem = problem(addresses, nics, regions);
        if (problem != null) {
            throw invalid(problem);
        }
        return new HandshakeDescriptor(fabric, instanceId, addresses, nics, regions);
    }

    private static void checkCount(String what, int value, int min, int max) {
        if (value < min || value > max) {
            throw invalid(what + " " + Integer.toUnsignedString(value) + " out of range [" + min + ", " + max + "]");
        }
    }

    private static byte[] blob(ByteBuffer b, String what) {
        if (b.remaining() < 4) {
            throw invalid(what + " is truncated");
        }
        int length = b.getInt();
        if (length < 1 || length > MAX_BLOB_BYTES) {
            throw invalid(
                    what + " length " + Integer.toUnsignedString(length) + " out of range [1, " + MAX_BLOB_BYTES + "]");
        }
        if (b.remaining() < length) {
            throw invalid(what + " is truncated: " + length + " bytes announced, " + b.remaining() + " left");
        }
        byte[] out = new byte[length];
        b.get(out);
        return out;
    }

    /** The first rule the parts break, or null. Shared by the constructor and {@link #decode}. */
    private static @Nullable String problem(List<byte[]> addresses, int nics, List<RegisteredRegion> regions) {
        if (addresses.isEmpty() || addresses.size() > MAX_LANES) {
            return "lane count " + addresses.size() + " out of range [1, " + MAX_LANES + "]";
        }
        if (nics < 1 || nics > MAX_NICS) {
            return "NIC count " + nics + " out of range [1, " + MAX_NICS + "]";
        }
        if (regions.size() > MAX_REGIONS) {
            return "region count " + regions.size() + " out of range [0, " + MAX_REGIONS + "]";
        }
        for (int i = 0; i < addresses.size(); i++) {
            int n = addresses.get(i).length;
            if (n < 1 || n > MAX_BLOB_BYTES) {
                return "lane " + i + " address length " + n + " out of range [1, " + MAX_BLOB_BYTES + "]";
            }
        }
        long previousEnd = 0;
        for (int i = 0; i < regions.size(); i++) {
            RegisteredRegion r = regions.get(i);
            if (r.lengthBytes() <= 0) {
                return "region " + i + " has length " + r.lengthBytes();
            }
            if (r.base() < 0 || r.base() + r.lengthBytes() < 0) {
                return String.format("region %d [0x%x, +%d) overflows the address space", i, r.base(), r.lengthBytes());
            }
            if (i > 0 && r.base() < previousEnd) {
                return "region " + i + " overlaps or precedes region " + (i - 1) + " (regions must be sorted by base)";
            }
            int n = r.packedRkey().length;
            if (n < 1 || n > MAX_BLOB_BYTES) {
                return "region " + i + " rkey length " + n + " out of range [1, " + MAX_BLOB_BYTES + "]";
            }
            previousEnd = r.base() + r.lengthBytes();
        }
        return null;
    }

    private static int crc(byte[] bytes, int length) {
        CRC32C c = new CRC32C();
        c.update(bytes, 0, length);
        return (int) c.getValue();
    }

    private static TransferException invalid(String what) {
        return new TransferException(Kind.INVALID_DESCRIPTOR, "invalid handshake descriptor: " + what);
    }
}
