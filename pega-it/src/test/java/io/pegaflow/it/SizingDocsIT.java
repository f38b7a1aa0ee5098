package io.pegaflow.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * docs/sizing.md's worked examples, recomputed from each row's model columns with the page's own formulas: a changed
 * formula or a mistyped figure fails here.
 */
@Timeout(30)
class SizingDocsIT {
    private static final Path PAGE =
            Path.of(System.getProperty("pega.it.repo", "..")).resolve("docs/sizing.md");

    /** The page's formulas. */
    record Model(long layers, long kvHeads, long headDim, long elementBytes, long kvFactor, long tp, long blockTokens) {
        long perTokenLayerRank() {
            return kvFactor * Math.max(1, kvHeads / tp) * headDim * elementBytes;
        }

        long slot() {
            return blockTokens * perTokenLayerRank();
        }

        long block() {
            return layers * tp * slot();
        }

        long perTokenOnNode() {
            return block() / blockTokens;
        }

        long ssdEntry() {
            return (512 + block() + 4095) / 4096 * 4096;
        }
    }

    /** The cells of every table row whose first cell starts with one of the examples' names. */
    private static List<String[]> rows() throws IOException {
        List<String[]> rows = new ArrayList<>();
        for (String line : Files.readAllLines(PAGE, StandardCharsets.UTF_8)) {
            if (line.startsWith("| dense 8B") || line.startsWith("| 70B") || line.startsWith("| MLA")) {
                rows.add(Arrays.stream(line.substring(1, line.length() - 1).split("\\|", -1))
                        .map(String::strip)
                        .toArray(String[]::new));
            }
        }
        return rows;
    }

    private static long bytes(String size) {
        String s = size.toUpperCase(Locale.ROOT);
        for (String[] unit : new String[][] {{"TIB", "40"}, {"GIB", "30"}, {"MIB", "20"}}) {
            if (s.endsWith(unit[0])) {
                return Long.parseLong(s.substring(0, s.length() - unit[0].length())) << Integer.parseInt(unit[1]);
            }
        }
        return Long.parseLong(s);
    }

    @Test
    void shouldMatchThePagesFormulasInEveryWorkedExample() throws IOException {
        List<Model> models = new ArrayList<>();
        int capacities = 0;
        for (String[] c : rows()) {
            if (c.length == 13) {
                Model m = new Model(
                        Long.parseLong(c[1]),
                        Long.parseLong(c[2]),
                        Long.parseLong(c[3]),
                        Long.parseLong(c[4]),
                        Long.parseLong(c[5]),
                        Long.parseLong(c[6]),
                        Long.parseLong(c[7]));
                models.add(m);
                assertThat(new long[] {
                            Long.parseLong(c[8]),
                            Long.parseLong(c[9]),
                            Long.parseLong(c[10]),
                            Long.parseLong(c[11]),
                            Long.parseLong(c[12])
                        })
                        .as(c[0])
                        .containsExactly(m.perTokenLayerRank(), m.slot(), m.block(), m.perTokenOnNode(), m.ssdEntry());
            } else {
                assertThat(c).as("a capacity row: %s", String.join(" | ", c)).hasSize(7);
                Model m = models.get(capacities++);
                long poolBlocks = bytes(c[1]) / m.block();
                long ssdBlocks = bytes(c[4]) / m.ssdEntry();
                assertThat(new long[] {
                            Long.parseLong(c[2]), Long.parseLong(c[3]), Long.parseLong(c[5]), Long.parseLong(c[6])
                        })
                        .as(c[0])
                        .containsExactly(
                                poolBlocks, poolBlocks * m.blockTokens(), ssdBlocks, ssdBlocks * m.blockTokens());
            }
        }
        assertThat(models).as("the three worked models").hasSize(3);
        assertThat(capacities).as("a capacity row per model").isEqualTo(3);
        // The prose figures: 128 KiB per token for the 8B, 5 MiB per block at 70B TP=4.
        assertThat(models.get(0).perTokenOnNode()).isEqualTo(128 * 1024);
        assertThat(models.get(1).block()).isEqualTo(5L << 20);
    }
}
