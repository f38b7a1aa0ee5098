package io.pegaflow.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.transfer.TransferException.Kind;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(60)
class HandshakeDescriptorTest {
    private static final byte[] ADDRESS = {1, 2, 3, 4, 5};
    private static final byte[] RKEY = {9, 8, 7};

    private static HandshakeDescriptor sample() {
        return new HandshakeDescriptor(
                HandshakeDescriptor.Fabric.UCX,
                0x1122334455667788L,
                List.of(ADDRESS, new byte[] {6, 7}),
                1,
                List.of(new RegisteredRegion(0x10000, 0x1000, RKEY), new RegisteredRegion(0x20000, 0x2000, RKEY)));
    }

    @Test
    void shouldRoundTripEveryField() {
        HandshakeDescriptor d = HandshakeDescriptor.decode(sample().encode());
        assertThat(d.fabric()).isEqualTo(HandshakeDescriptor.Fabric.UCX);
        assertThat(d.instanceId()).isEqualTo(0x1122334455667788L);
        assertThat(d.lanes()).isEqualTo(2);
        assertThat(d.laneAddresses().get(0)).containsExactly(ADDRESS);
        assertThat(d.laneAddresses().get(1)).containsExactly(6, 7);
        assertThat(d.nicCount()).isEqualTo(1);
        assertThat(d.regions()).extracting(RegisteredRegion::base).containsExactly(0x10000L, 0x20000L);
        assertThat(d.regions()).extracting(RegisteredRegion::lengthBytes).containsExactly(0x1000L, 0x2000L);
        assertThat(d.regions().get(1).packedRkey()).containsExactly(RKEY);
        assertThat(d.encode()).isEqualTo(sample().encode());
    }

    @Test
    void shouldFindTheRegionHoldingARangeOnly() {
        HandshakeDescriptor d = sample();
        assertThat(d.regionIndexOf(0x10000, 0x1000)).isZero();
        assertThat(d.regionIndexOf(0x20800, 16)).isEqualTo(1);
        assertThat(d.regionIndexOf(0x10ff0, 32)).as("runs past the end").isEqualTo(-1);
        assertThat(d.regionIndexOf(0x18000, 1)).as("between regions").isEqualTo(-1);
        assertThat(d.regionIndexOf(0x0ffff, 2)).as("starts before").isEqualTo(-1);
        assertThat(d.regionIndexOf(0x21fff, 1)).isEqualTo(1);
        assertThat(d.regionIndexOf(0x22000, 1)).isEqualTo(-1);
        assertThat(d.regionIndexOf(0x10000, 0)).as("empty range").isEqualTo(-1);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "magic          | 0  | 4 | 0x12345678 | bad magic 0x12345678",
                "version        | 4  | 2 | 2          | unsupported version 2",
                "fabric         | 6  | 2 | 9          | unknown fabric code 9",
                "lanes zero     | 16 | 4 | 0          | lane count 0 out of range [1, 64]",
                "lanes many     | 16 | 4 | 65         | lane count 65 out of range [1, 64]",
                "nics zero      | 20 | 4 | 0          | NIC count 0 out of range [1, 64]",
                "regions many   | 24 | 4 | 5000       | region count 5000 out of range [0, 4096]",
                "regions one    | 24 | 4 | 1          | 23 trailing bytes",
                "regions three  | 24 | 4 | 3          | region 2 is truncated",
                "address length | 32 | 4 | 0          | lane 0 address length 0 out of range",
                "address huge   | 32 | 4 | 99999      | lane 0 address length 99999 out of range",
                "address long   | 32 | 4 | 200        | lane 0 address is truncated: 200 bytes announced",
            })
    void shouldRefuseAFieldOutOfRangeNamingIt(String field, int offset, int width, long value, String message) {
        byte[] bytes = sample().encode();
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (width == 2) {
            b.putShort(offset, (short) value);
        } else {
            b.putInt(offset, (int) value);
        }
        assertInvalid(reCrc(bytes), message);
    }

    @Test
    void shouldRefuseAnInconsistentRegionTable() {
        assertInvalid(
                regions(new RegisteredRegion(0x20000, 16, RKEY), new RegisteredRegion(0x10000, 16, RKEY)),
                "region 1 overlaps or precedes region 0");
        assertInvalid(
                regions(new RegisteredRegion(0x10000, 0x2000, RKEY), new RegisteredRegion(0x11000, 16, RKEY)),
                "region 1 overlaps");
        assertInvalid(regions(new RegisteredRegion(0x10000, 0, RKEY)), "region 0 has length 0");
        assertInvalid(regions(new RegisteredRegion(Long.MAX_VALUE - 8, 16, RKEY)), "overflows the address space");
        assertInvalid(regions(new RegisteredRegion(-4096, 16, RKEY)), "overflows the address space");
    }

    /** Encodes a region table the constructor would refuse, by writing it over a valid descriptor's. */
    private static byte[] regions(RegisteredRegion... table) {
        HandshakeDescriptor base =
                new HandshakeDescriptor(HandshakeDescriptor.Fabric.UCX, 1, List.of(ADDRESS), 1, List.of());
        byte[] head = base.encode();
        int total = head.length;
        for (RegisteredRegion r : table) {
            total += 20 + r.packedRkey().length;
        }
        ByteBuffer b = ByteBuffer.allocate(total).order(ByteOrder.LITTLE_ENDIAN);
        b.put(head, 0, head.length - 4);
        b.putInt(24, table.length).putInt(28, total);
        for (RegisteredRegion r : table) {
            b.putLong(r.base())
                    .putLong(r.lengthBytes())
                    .putInt(r.packedRkey().length)
                    .put(r.packedRkey());
        }
        return reCrc(b.array());
    }

    @Test
    void shouldRefuseTruncationCorruptionAndTrailingBytes() {
        byte[] bytes = sample().encode();
        assertInvalid(new byte[3], "3 bytes, shorter than the 36-byte minimum");
        assertInvalid(java.util.Arrays.copyOf(bytes, bytes.length - 1), "total bytes field says");
        byte[] flipped = bytes.clone();
        flipped[40] ^= 1;
        assertInvalid(flipped, "CRC mismatch");
        byte[] longer = java.util.Arrays.copyOf(bytes, bytes.length + 4);
        ByteBuffer.wrap(longer).order(ByteOrder.LITTLE_ENDIAN).putInt(28, longer.length);
        assertInvalid(reCrc(longer), "4 trailing bytes");
        assertInvalid(new byte[HandshakeDescriptor.MAX_TOTAL_BYTES + 1], "more than the");
    }

    @Test
    void shouldRefuseGarbageWithOneKindOfError() {
        Random random = new Random(42);
        byte[] valid = sample().encode();
        for (int i = 0; i < 20_000; i++) {
            byte[] junk;
            if (i % 2 == 0) {
                junk = new byte[random.nextInt(200)];
                random.nextBytes(junk);
            } else {
                junk = valid.clone();
                junk[random.nextInt(junk.length)] = (byte) random.nextInt();
                if (i % 4 == 1) {
                    junk = reCrc(junk);
                }
            }
            try {
                HandshakeDescriptor.decode(junk);
            } catch (TransferException e) {
                assertThat(e.kind()).isEqualTo(Kind.INVALID_DESCRIPTOR);
                assertThat(e.getMessage()).startsWith("invalid handshake descriptor: ");
            }
        }
    }

    @Test
    void shouldRefuseAPeerOfAnotherFabric() {
        HandshakeDescriptor loopback = new HandshakeDescriptor(
                HandshakeDescriptor.Fabric.LOOPBACK, 1, sample().laneAddresses(), 1, sample().regions());
        assertThatThrownBy(() -> sample().checkCompatible(loopback))
                .isInstanceOfSatisfying(
                        TransferException.class, e -> assertThat(e.kind()).isEqualTo(Kind.INCOMPATIBLE_PEER))
                .hasMessage("remote fabric mismatch: local=ucx, remote=loopback");
        sample().checkCompatible(sample());
    }

    @Test
    void shouldRefuseToBuildWhatItWouldRefuseToDecode() {
        assertThatThrownBy(() -> new HandshakeDescriptor(HandshakeDescriptor.Fabric.UCX, 1, List.of(), 1, List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lane count 0");
        assertThatThrownBy(() -> new HandshakeDescriptor(
                        HandshakeDescriptor.Fabric.UCX,
                        1,
                        List.of(ADDRESS),
                        1,
                        List.of(new RegisteredRegion(0, 1, new byte[0]))))
                .hasMessageContaining("rkey length 0");
    }

    private static void assertInvalid(byte[] bytes, String message) {
        assertThatThrownBy(() -> HandshakeDescriptor.decode(bytes))
                .isInstanceOfSatisfying(
                        TransferException.class, e -> assertThat(e.kind()).isEqualTo(Kind.INVALID_DESCRIPTOR))
                .hasMessageContaining(message);
    }

    private static byte[] reCrc(byte[] bytes) {
        CRC32C c = new CRC32C();
        c.update(bytes, 0, bytes.length - 4);
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt(bytes.length - 4, (int) c.getValue());
        return bytes;
    }
}
