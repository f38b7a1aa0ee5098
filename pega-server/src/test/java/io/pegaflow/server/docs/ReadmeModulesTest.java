package io.pegaflow.server.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's module table names exactly the modules of the root pom, so a new module cannot land undocumented and a
 * removed one cannot linger (the table lacked two modules for a week before this test).
 */
class ReadmeModulesTest {
    private static final Path ROOT = Path.of("..");
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern ROW = Pattern.compile("(?m)^\\| `(pega-[a-z-]+)` \\|");

    static Set<String> matches(Pattern p, String text) {
        Set<String> out = new LinkedHashSet<>();
        Matcher m = p.matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    @Test
    void shouldListEveryModuleOfTheRootPomInTheReadmeTable() throws IOException {
        Set<String> modules = matches(MODULE, Files.readString(ROOT.resolve("pom.xml")));
        Set<String> rows = matches(ROW, Files.readString(ROOT.resolve("README.md")));

        assertThat(modules).as("modules of the root pom").isNotEmpty();
        assertThat(rows).as("rows of the README's module table").containsExactlyInAnyOrderElementsOf(modules);
    }
}
