package io.pegaflow.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.edge.metrics.CatalogDocs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** docs/metrics.md lists exactly the server's catalog: every series once, with its type, unit and labels. */
@Timeout(30)
class MetricsDocsTest {
    private static final Path PAGE = Path.of("..", "docs", "metrics.md");

    @Test
    void shouldListExactlyTheCatalog() throws IOException {
        String page = Files.readString(PAGE, StandardCharsets.UTF_8);

        assertThat(CatalogDocs.mismatches(page, "pega-server", List.of(ServerMetric.values())))
                .as("docs/metrics.md, section pega-server, against ServerMetric")
                .isEmpty();
    }

    @Test
    void shouldNoticeARowThatDrifted() throws IOException {
        // The check must be able to fail: the same page with one row's unit changed, one dropped and one added.
        String page = Files.readString(PAGE, StandardCharsets.UTF_8)
                .replace(
                        "| `pegaflow_pool_used_bytes` | gauge | bytes |",
                        "| `pegaflow_pool_used_bytes` | gauge | MiB |")
                .replaceAll("(?m)^\\| `pegaflow_sessions` .*\\n", "")
                .replace(
                        "\n## pega-metaserver",
                        "| `pegaflow_made_up` | gauge | bytes | – | no such meter |\n\n## pega-metaserver");

        assertThat(CatalogDocs.mismatches(page, "pega-server", List.of(ServerMetric.values())))
                .containsExactly(
                        "pegaflow_pool_used_bytes: docs say | gauge | MiB | – |, the catalog | gauge | bytes | – |",
                        "pegaflow_sessions is in the catalog but has no row (| gauge | sessions | – |)",
                        "pegaflow_made_up has a row but is not in the catalog");
    }
}
