package io.pegaflow.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The configuration reference cannot drift from the code: every {@code pega.*} key in the configuration metadata of
 * the shipped jars (written by spring-boot-configuration-processor from the properties records) has a row in docs/,
 * and where the metadata knows a default, the row's default column says the same.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConfigurationDocsIT {
    private static final Path DOCS = Path.of(System.getProperty("pega.it.docs", "../docs"));
    // The Boot repackager lifts the application's META-INF to the jar's root.
    private static final String METADATA = "META-INF/spring-configuration-metadata.json";
    private static final Pattern ROW = Pattern.compile("(?m)^\\| `([^`]+)` \\| ([^|]*) \\|");
    private static final String METASERVER_SECTION = "## Configuration (`pega.metaserver.*`)";

    @Test
    void shouldDocumentEveryServerKeyWithItsDefault() throws IOException {
        // The server's keys are spelled out in full: the engine's in configuration.md, the tiers' on their own pages.
        Map<String, String> rows = rows(read("configuration.md") + read("ssd.md") + read("metaserver.md"));
        List<String> problems = check(metadata("pega.it.serverJar"), "", rows);
        assertThat(problems)
                .as("docs/ against pega-server.jar's configuration metadata")
                .isEmpty();
    }

    @Test
    void shouldDocumentEveryMetaserverKeyWithItsDefault() throws IOException {
        // The metaserver's own table lists keys relative to pega.metaserver.
        String page = read("metaserver.md");
        String section = page.substring(page.indexOf(METASERVER_SECTION));
        section = section.substring(0, section.indexOf("\n## ", METASERVER_SECTION.length()));
        List<String> problems = check(metadata("pega.it.metaserverJar"), "pega.metaserver.", rows(section));
        assertThat(problems)
                .as("docs/metaserver.md against pega-metaserver.jar's configuration metadata")
                .isEmpty();
    }

    private static List<String> check(List<Map<String, Object>> properties, String prefix, Map<String, String> rows) {
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Map<String, Object> p : properties) {
            String name = (String) p.get("name");
            if (!name.startsWith("pega.")) {
                continue;
            }
            checked++;
            String key = name.substring(prefix.length());
            String cell = rows.get(key);
            if (cell == null) {
                problems.add(name + ": no table row");
                continue;
            }
            String expected = render(p.get("defaultValue"));
            if (expected != null && !cell.equals(expected)) {
                problems.add(name + ": docs say " + cell + ", the code " + expected);
            }
        }
        assertThat(checked).as("pega.* keys in the metadata").isPositive();
        return problems;
    }

    /** A default as the docs write it: {@code `value`}, and "empty" for the empty string. */
    private static String render(Object value) {
        if (value == null) {
            return null;
        }
        String text = String.valueOf(value);
        return text.isEmpty() ? "empty" : "`" + text + "`";
    }

    /** Markdown table rows whose first cell is a code span: key to second cell (the first row wins). */
    private static Map<String, String> rows(String markdown) {
        Map<String, String> rows = new LinkedHashMap<>();
        Matcher m = ROW.matcher(markdown);
        while (m.find()) {
            rows.putIfAbsent(m.group(1), m.group(2).trim());
        }
        return rows;
    }

    private static String read(String page) throws IOException {
        return Files.readString(DOCS.resolve(page));
    }

    private static List<Map<String, Object>> metadata(String jarProperty) throws IOException {
        String jar = System.getProperty(jarProperty);
        assertThat(jar).as("system property %s (set by the pom)", jarProperty).isNotNull();
        try (ZipFile zip = new ZipFile(jar)) {
            ZipEntry entry = zip.getEntry(METADATA);
            assertThat(entry).as("%s in %s", METADATA, jar).isNotNull();
            try (InputStream in = zip.getInputStream(entry)) {
                return JsonPath.read(new String(in.readAllBytes(), StandardCharsets.UTF_8), "$.properties[*]");
            }
        }
    }
}
