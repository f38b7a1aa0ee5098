package io.pegaflow.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import java.security.MessageDigest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class BlockPatternTest {

    @Test
    void shouldReproduceTheReferenceFillWithSaltZero() {
        for (int block = 0; block < 600; block++) {
            assertThat(BlockPattern.uniform(0).byteAt(block, 17)).isEqualTo((byte) ((block % 251) + 1));
        }
    }

    @Test
    void shouldNeverProduceAZeroUniformByte() {
        for (int salt = 0; salt < 256; salt++) {
            for (int block = 0; block < 502; block++) {
                assertThat(BlockPattern.uniformByte(salt, block)).isNotZero();
            }
        }
        assertThat(BlockPattern.uniformByte(17, 3)).isNotEqualTo(BlockPattern.uniformByte(0, 3));
    }

    @Test
    void shouldBeDeterministicAndAgreeBetweenByteAtAndFill() {
        BlockPattern a = BlockPattern.perByte(42);
        BlockPattern b = BlockPattern.perByte(42);
        byte[] whole = a.bytes(7, 0, 100);
        assertThat(b.bytes(7, 0, 100)).isEqualTo(whole);
        // an unaligned window equals the same bytes of the whole block
        assertThat(a.bytes(7, 13, 50)).isEqualTo(java.util.Arrays.copyOfRange(whole, 13, 63));
        for (int j = 0; j < 100; j++) {
            assertThat(a.byteAt(7, j)).isEqualTo(whole[j]);
        }
        assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
    }

    @Test
    void shouldDifferAcrossBlocksSaltsLayersAndRanks() {
        BlockPattern p = BlockPattern.perByte(42);
        byte[] base = p.bytes(1, 0, 64);

        assertThat(p.bytes(2, 0, 64)).isNotEqualTo(base);
        assertThat(BlockPattern.perByte(43).bytes(1, 0, 64)).isNotEqualTo(base);
        assertThat(p.forSlot("layer_0", 0).bytes(1, 0, 64)).isNotEqualTo(base);
        assertThat(p.forSlot("layer_0", 0).bytes(1, 0, 64))
                .isNotEqualTo(p.forSlot("layer_1", 0).bytes(1, 0, 64))
                .isNotEqualTo(p.forSlot("layer_0", 1).bytes(1, 0, 64))
                .isEqualTo(p.forSlot("layer_0", 0).bytes(1, 0, 64));
        // the second half of a block (e.g. its V plane) does not repeat the first
        assertThat(p.bytes(1, 64, 64)).isNotEqualTo(base);
        assertThat(BlockPattern.uniform(5).forSlot("layer_9", 3)).isEqualTo(BlockPattern.uniform(5));
    }

    @Test
    void shouldBuildTheReferenceHashes() throws Exception {
        assertThat(BlockPattern.hash(17, 1).toByteArray()).containsExactly(17, 1, 0, 0, 0);
        assertThat(BlockPattern.hash(200, 0x01020304).toByteArray()).containsExactly(200, 4, 3, 2, 1);
        assertThat(BlockPattern.hashes(17, 4)).hasSize(4).doesNotHaveDuplicates();

        ByteString h32 = BlockPattern.hash32(17, 1);
        assertThat(h32.size()).isEqualTo(32);
        assertThat(h32.toByteArray())
                .isEqualTo(MessageDigest.getInstance("SHA-256").digest(new byte[] {17, 1, 0, 0, 0}));
        assertThat(BlockPattern.hashes32(17, 3))
                .containsExactly(BlockPattern.hash32(17, 0), BlockPattern.hash32(17, 1), BlockPattern.hash32(17, 2));
    }
}
