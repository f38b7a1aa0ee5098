package io.pegaflow.core.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class HugePagesTest {

    @Test
    void shouldParseTheHugepagesizeLineInKibibytes() {
        String meminfo = "MemTotal:       65536 kB\nHugePages_Total:       0\nHugepagesize:       2048 kB\n";

        assertThat(HugePages.parseSizeBytes(meminfo)).hasValue(2L * 1024 * 1024);
        assertThat(HugePages.parseSizeBytes("Hugepagesize:    1048576 kB")).hasValue(1L << 30);
    }

    @Test
    void shouldReportNothingForAMissingOrMalformedLine() {
        assertThat(HugePages.parseSizeBytes("MemTotal: 1 kB\n")).isEmpty();
        assertThat(HugePages.parseSizeBytes("Hugepagesize: lots kB\n")).isEmpty();
        assertThat(HugePages.parseSizeBytes("Hugepagesize: 2048 MB\n")).isEmpty();
    }

    @Test
    void shouldReadAPowerOfTwoOfAtLeastTwoMibFromThisMachine() {
        assumeTrue(Files.isReadable(Path.of("/proc/meminfo")), "needs Linux /proc/meminfo");

        int bytes = HugePages.sizeBytesFromMeminfo();

        assertThat(bytes).isGreaterThanOrEqualTo(2 * 1024 * 1024);
        assertThat(Integer.bitCount(bytes)).isEqualTo(1);
    }

    @Test
    void shouldRoundUpToWholePages() {
        assertThat(HugePages.roundUp(1, 2048)).isEqualTo(2048);
        assertThat(HugePages.roundUp(2048, 2048)).isEqualTo(2048);
        assertThat(HugePages.roundUp(2049, 2048)).isEqualTo(4096);
    }

    @Test
    void shouldReportAtLeastOneCore() {
        assertThat(CpuTopology.availableCores()).isPositive();
    }
}
