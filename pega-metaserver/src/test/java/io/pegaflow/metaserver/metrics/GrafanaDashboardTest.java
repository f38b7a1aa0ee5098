package io.pegaflow.metaserver.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** docs/grafana/pegaflow-metaserver.json queries only series of the metaserver's catalog, and charts the main ones. */
class GrafanaDashboardTest {
    private static final Path DASHBOARD = Path.of("..", "docs", "grafana", "pegaflow-metaserver.json");
    private static final Pattern SERIES = Pattern.compile("pegaflow_[a-z0-9_]+");

    static List<String> expressions(JsonNode node) {
        List<String> out = new ArrayList<>();
        if (node.isObject()) {
            // PromQL sits in every target's "expr" and in the "query" of a query variable
            boolean queryVariable =
                    node.has("type") && node.get("type").asString().equals("query");
            node.properties().forEach(e -> {
                if (e.getKey().equals("expr") || (queryVariable && e.getKey().equals("query"))) {
                    out.add(e.getValue().asString());
                } else {
                    out.addAll(expressions(e.getValue()));
                }
            });
        } else if (node.isArray()) {
            node.forEach(child -> out.addAll(expressions(child)));
        }
        return out;
    }

    @Test
    void shouldNameOnlyMetricsOfTheCatalog() throws IOException {
        JsonNode dashboard = JsonMapper.builder().build().readTree(Files.readString(DASHBOARD));
        Set<String> catalog = Stream.of(MetaserverMetric.values())
                .flatMap(m -> m.sampleNames().stream())
                .collect(Collectors.toSet());
        Set<String> named = new TreeSet<>();
        List<String> queries = expressions(dashboard);
        for (String query : queries) {
            Matcher m = SERIES.matcher(query);
            boolean any = false;
            while (m.find()) {
                named.add(m.group());
                any = true;
            }
            assertThat(any).as("query names no pegaflow series: %s", query).isTrue();
        }

        assertThat(queries).hasSizeGreaterThan(5);
        assertThat(named).as("series outside MetaserverMetric").isSubsetOf(catalog);
        assertThat(named)
                .contains(
                        "pegaflow_metaserver_nodes",
                        "pegaflow_metaserver_store_entries",
                        "pegaflow_metaserver_epoch",
                        "pegaflow_metaserver_rpc_requests_total");
        assertThat(dashboard.get("uid").asString()).isEqualTo("pegaflow-metaserver");
    }
}
