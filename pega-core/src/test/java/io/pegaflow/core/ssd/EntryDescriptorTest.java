package io.pegaflow.core.ssd;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.core.block.BlockKey;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class EntryDescriptorTest {
    private static final long FORMAT = 0x1234_5678_9ABC_DEF0L;

    private static SlotLayout layout() {
        return new SlotLayout(new int[] {60, 1}, new byte[] {2, 1}, new long[] {9216, 512});
    }

    private static ByteBuffer encoded(BlockKey key, SlotLayout layout, int headerBytes) {
        ByteBuffer b = ByteBuffer.allocate(headerBytes).order(ByteOrder.LITTLE_ENDIAN);
        EntryDescriptor.encode(b, headerBytes, FORMAT, 1_000_448L, key, layout, 0xCAFEBABE);
        return b;
    }

    @Test
    void shouldRoundTripKeyLayoutLengthAndChecksum() {
        BlockKey key = new BlockKey("model-ns", "some 32 byte vllm block hash....".getBytes(StandardCharsets.UTF_8));
        int headerBytes = EntryDescriptor.headerBytes(key, layout());
        assertThat(headerBytes).isEqualTo(512);

        EntryDescriptor.Header h = EntryDescriptor.decode(encoded(key, layout(), headerBytes), headerBytes, FORMAT);

        assertThat(h).isNotNull();
        assertThat(h.key()).isEqualTo(key);
        assertThat(h.layout()).isEqualTo(layout());
        assertThat(h.begin()).isEqualTo(1_000_448L);
        assertThat(h.payloadBytes()).isEqualTo(60 * 2 * 9216 + 512);
        assertThat(h.payloadCrc()).isEqualTo(0xCAFEBABE);
        assertThat(h.totalBytes()).as("padded to 4 KiB").isEqualTo((512 + h.payloadBytes() + 4095) / 4096 * 4096);
    }

    @Test
    void shouldGrowTheHeaderInWholeSectorsForLongKeys() {
        BlockKey key = new BlockKey("ns", new byte[1000]);
        int headerBytes = EntryDescriptor.headerBytes(key, layout());
        assertThat(headerBytes).isEqualTo(1536);
        assertThat(EntryDescriptor.decode(encoded(key, layout(), headerBytes), headerBytes, FORMAT)
                        .key())
                .isEqualTo(key);
    }

    @Test
    void shouldRejectAnyFlippedByteAndAForeignFormat() {
        BlockKey key = new BlockKey("ns", new byte[] {1, 2, 3, 4, 5});
        int headerBytes = EntryDescriptor.headerBytes(key, layout());
        for (int i = 0; i < headerBytes; i += 7) {
            ByteBuffer b = encoded(key, layout(), headerBytes);
            b.put(i, (byte) (b.get(i) ^ 1));
            assertThat(EntryDescriptor.decode(b, headerBytes, FORMAT))
                    .as("byte %d flipped", i)
                    .isNull();
        }
        assertThat(EntryDescriptor.decode(encoded(key, layout(), headerBytes), headerBytes, FORMAT + 1))
                .isNull();
        assertThat(EntryDescriptor.peekHeaderBytes(ByteBuffer.allocate(512).order(ByteOrder.LITTLE_ENDIAN)))
                .isEqualTo(-1);
    }

    @Test
    void shouldRoundTripASuperblockAndRejectATornOne() {
        ByteBuffer b = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        ShardLayoutDescriptor.encode(b, new ShardLayoutDescriptor.Superblock(1 << 20, FORMAT, 3));
        assertThat(ShardLayoutDescriptor.decode(b)).isEqualTo(new ShardLayoutDescriptor.Superblock(1 << 20, FORMAT, 3));
        b.put(17, (byte) 1);
        assertThat(ShardLayoutDescriptor.decode(b)).isNull();
    }
}
