package io.pegaflow.core.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class PreToucherTest {
    private static final long GIB = 1L << 30;
    private static final long PAGE = 4096;

    @Test
    void shouldUseOneThreadPerStartedGibUpToTheCores() {
        assertThat(PreToucher.threadCount(3 * GIB, PAGE, 0, 16)).isEqualTo(3);
        assertThat(PreToucher.threadCount(3 * GIB + 1, PAGE, 0, 16)).isEqualTo(4);
        assertThat(PreToucher.threadCount(100 * GIB, PAGE, 0, 16)).isEqualTo(16);
        assertThat(PreToucher.threadCount(1024 * 1024, PAGE, 0, 16)).isEqualTo(1);
    }

    @Test
    void shouldHonourAnExplicitCountButNeverExceedThePages() {
        assertThat(PreToucher.threadCount(GIB, PAGE, 6, 2)).isEqualTo(6);
        assertThat(PreToucher.threadCount(2 * PAGE, PAGE, 6, 2)).isEqualTo(2);
    }

    @Test
    void shouldTileTheRangeWithPageAlignedChunks() {
        long length = 10 * PAGE + 100;

        List<long[]> chunks = PreToucher.chunks(length, PAGE, 3);

        long expectedOffset = 0;
        for (long[] chunk : chunks) {
            assertThat(chunk[0]).isEqualTo(expectedOffset);
            assertThat(chunk[0] % PAGE).isZero();
            expectedOffset += chunk[1];
        }
        assertThat(expectedOffset).isEqualTo(length);
        assertThat(chunks).hasSize(3);
    }

    @Test
    void shouldGiveUpOnAStuckWriterWithAnErrorThatKeepsTheMappingInPlace() throws InterruptedException {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        Thread stuck = new Thread(
                () -> {
                    try {
                        release.await(20, java.util.concurrent.TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                "pega-test-pretouch-0");
        stuck.start();
        try {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> PreToucher.joinAll(List.of(stuck), 50))
                    .isInstanceOf(PreToucher.Stalled.class)
                    .hasMessageContaining("pega-test-pretouch-0 did not finish pre-touching in 50 ms")
                    .hasMessageContaining("left in place");
        } finally {
            release.countDown();
            stuck.join(10_000);
        }
        PreToucher.joinAll(List.of(stuck), 50); // a finished writer joins at once
    }
}
