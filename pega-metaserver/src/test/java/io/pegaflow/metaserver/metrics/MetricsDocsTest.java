package io.pegaflow.metaserver.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.edge.metrics.CatalogDocs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** docs/metrics.md lists exactly the metaserver's catalog: every series once, with its type, unit and labels. */
@Timeout(30)
class MetricsDocsTest {

    @Test
    void shouldListExactlyTheCatalog() throws IOException {
        String page = Files.readString(Path.of("..", "docs", "metrics.md"), StandardCharsets.UTF_8);

        assertThat(CatalogDocs.mismatches(page, "pega-metaserver", List.of(MetaserverMetric.values())))
                .as("docs/metrics.md, section pega-metaserver, against MetaserverMetric")
                .isEmpty();
    }
}
