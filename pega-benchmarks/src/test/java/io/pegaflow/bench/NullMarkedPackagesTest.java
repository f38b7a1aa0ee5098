package io.pegaflow.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * NullAway checks only {@code @NullMarked} code (docs/java-quality.md), so a main package without the annotation
 * would silently escape it: every package of this module's main sources needs a {@code package-info.java} that
 * carries {@code @NullMarked}. (The same test sits in every module; copy it into a new one.)
 */
class NullMarkedPackagesTest {
    private static final Pattern MARKED = Pattern.compile("(?m)^@(org\\.jspecify\\.annotations\\.)?NullMarked\\s*$");

    @Test
    void shouldNullMarkEveryMainPackage() throws IOException {
        Path main = Path.of("src", "main", "java");
        assertThat(main).isDirectory();
        List<Path> packages;
        try (Stream<Path> files = Files.walk(main)) {
            packages = files.filter(f -> f.toString().endsWith(".java"))
                    .map(Path::getParent)
                    .distinct()
                    .sorted()
                    .toList();
        }
        assertThat(packages).isNotEmpty();
        for (Path dir : packages) {
            Path info = dir.resolve("package-info.java");
            assertThat(info)
                    .as("%s needs a package-info.java with @NullMarked", dir)
                    .exists();
            assertThat(MARKED.matcher(Files.readString(info, StandardCharsets.UTF_8))
                            .find())
                    .as("%s is @NullMarked", info)
                    .isTrue();
        }
    }
}
