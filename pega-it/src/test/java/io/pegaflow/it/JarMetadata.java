package io.pegaflow.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/** The configuration metadata inside a packaged jar: the keys its properties records bind. */
final class JarMetadata {
    // The Boot repackager lifts the application's META-INF to the jar's root.
    static final String METADATA = "META-INF/spring-configuration-metadata.json";

    private JarMetadata() {}

    /** The path of the jar named by a system property the pom sets. */
    static String jar(String property) {
        String jar = System.getProperty(property);
        assertThat(jar).as("system property %s (set by the pom)", property).isNotNull();
        return jar;
    }

    static List<Map<String, Object>> properties(String jarProperty) throws IOException {
        String jar = jar(jarProperty);
        try (ZipFile zip = new ZipFile(jar)) {
            ZipEntry entry = zip.getEntry(METADATA);
            assertThat(entry).as("%s in %s", METADATA, jar).isNotNull();
            try (InputStream in = zip.getInputStream(entry)) {
                return JsonPath.read(new String(in.readAllBytes(), StandardCharsets.UTF_8), "$.properties[*]");
            }
        }
    }

    /** Every {@code pega.*} key of the jar, in Spring's uniform form (no dots, dashes or underscores, lower case). */
    static Set<String> uniformPegaKeys(String jarProperty) throws IOException {
        return properties(jarProperty).stream()
                .map(p -> (String) p.get("name"))
                .filter(n -> n.startsWith("pega."))
                .map(JarMetadata::uniform)
                .collect(Collectors.toSet());
    }

    /** {@code pega.pool.size}, {@code PEGA_POOL_SIZE} and {@code pega.pool.Size} all become {@code pegapoolsize}. */
    static String uniform(String name) {
        return name.replaceAll("\\[\\d+]", "").replaceAll("[._-]", "").toLowerCase(Locale.ROOT);
    }

    /** Whether the jar's class path holds {@code entry} (its classes live under BOOT-INF/classes). */
    static boolean containsClassPathEntry(String jarProperty, String entry) throws IOException {
        try (ZipFile zip = new ZipFile(jar(jarProperty))) {
            return zip.getEntry("BOOT-INF/classes/" + entry) != null;
        }
    }
}
