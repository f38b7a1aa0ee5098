package io.pegaflow.edge.metrics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The documentation side of a catalog: {@code docs/metrics.md} has one table row per entry,
 * {@code | `series` | type | unit | labels | meaning |}, under one {@code ## <app>} section per application. Each app's
 * {@code MetricsDocsTest} compares its section with its catalog through {@link #mismatches}, so the docs list exactly
 * the catalog.
 */
public final class CatalogDocs {

    /** What the docs call each type. */
    public static String typeName(MetricType type) {
        return switch (type) {
            case GAUGE -> "gauge";
            case COUNTER -> "counter";
            case TIMER -> "histogram";
        };
    }

    /** The labels cell: {@code `a`, `b`}, or {@code –} for none. */
    public static String labelsCell(List<String> labels) {
        return labels.isEmpty() ? "–" : labels.stream().map(l -> "`" + l + "`").collect(Collectors.joining(", "));
    }

    /**
     * The differences between a catalog and the {@code ## <section>} part of a metrics page: entries without a row,
     * rows without an entry, rows listed twice, and rows whose type, unit or labels differ. Empty when they agree.
     */
    public static List<String> mismatches(String page, String section, List<? extends MetricDescriptor> catalog) {
        Map<String, String> documented = new LinkedHashMap<>();
        List<String> problems = new ArrayList<>();
        for (String line : section(page, section).lines().toList()) {
            if (!line.startsWith("| `")) {
                continue;
            }
            String[] cells = line.split("\\|", -1);
            if (cells.length < 6) {
                problems.add("row without series, type, unit, labels and meaning: " + line);
                continue;
            }
            String series = cells[1].trim().replace("`", "");
            String columns = cells[2].trim() + " | " + cells[3].trim() + " | " + cells[4].trim();
            if (documented.put(series, columns) != null) {
                problems.add(series + " is listed twice");
            }
        }
        for (MetricDescriptor metric : catalog) {
            String expected = typeName(metric.type()) + " | " + metric.unit() + " | " + labelsCell(metric.labels());
            String actual = documented.remove(metric.seriesName());
            if (actual == null) {
                problems.add(metric.seriesName() + " is in the catalog but has no row (| " + expected + " |)");
            } else if (!actual.equals(expected)) {
                problems.add(metric.seriesName() + ": docs say | " + actual + " |, the catalog | " + expected + " |");
            }
        }
        documented.keySet().forEach(series -> problems.add(series + " has a row but is not in the catalog"));
        return problems;
    }

    /** From the {@code ## <title>} heading to the next level-2 heading. */
    private static String section(String page, String title) {
        String heading = "\n## " + title + "\n";
        int start = ("\n" + page).indexOf(heading);
        if (start < 0) {
            throw new IllegalArgumentException("no section '## " + title + "' in the metrics page");
        }
        int end = page.indexOf("\n## ", start + heading.length() - 1);
        return end < 0 ? page.substring(start) : page.substring(start, end);
    }

    private CatalogDocs() {}
}
