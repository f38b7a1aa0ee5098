package io.pegaflow.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The docs stand alone: every relative Markdown link and every backticked path into the repository
 * ({@code `pega-server/src/...`}, {@code `scripts/release.sh`}) names a file or directory that exists, and no page
 * cites files that are not in the repository (private specs, a shared architecture file) or the tooling of the place
 * the project was written in. Build outputs ({@code .../target/...}) and patterns ({@code *}, {@code $VAR},
 * {@code <name>}) are not paths.
 */
@Timeout(60)
class DocsLinksIT {
    private static final Path REPO = Path.of(System.getProperty("pega.it.repo", ".."));
    private static final Pattern LINK = Pattern.compile("\\[[^\\]]*]\\(([^)\\s]+)\\)");
    private static final Pattern TICKED = Pattern.compile("`([^`\\s]+)`");
    private static final Pattern NOT_A_PATH = Pattern.compile("[*$<>{}|]|\\.\\.\\.|…|/target(/|$)");
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final List<Pattern> FOREIGN = List.of(
            Pattern.compile("\\bspec/[A-Za-z0-9_-]+\\.md"),
            Pattern.compile("\\bspec §"),
            Pattern.compile("\\.\\./shared\\b"),
            Pattern.compile("ARCHITECTURE\\.md"),
            Pattern.compile("\\bSTYLE(\\.md| §)"),
            Pattern.compile("\\.carry\\b"),
            Pattern.compile("\\$OUT\\b"),
            Pattern.compile("(?i)device machine"),
            // our own tracker is not public; upstream's issues are cited with the repository's name
            Pattern.compile("(?i)(?<!pegaflow` )\\bissues? #?\\d+"));

    /** README.md, gpu-tests/README.md and every page under docs/. */
    private static Map<String, String> pages() throws IOException {
        Map<String, String> pages = new LinkedHashMap<>();
        for (String top : List.of("README.md", "CHANGELOG.md", "gpu-tests/README.md")) {
            if (Files.exists(REPO.resolve(top))) {
                pages.put(top, Files.readString(REPO.resolve(top), StandardCharsets.UTF_8));
            }
        }
        try (Stream<Path> docs = Files.walk(REPO.resolve("docs"))) {
            for (Path p :
                    docs.filter(f -> f.toString().endsWith(".md")).sorted().toList()) {
                pages.put(REPO.relativize(p).toString(), Files.readString(p, StandardCharsets.UTF_8));
            }
        }
        return pages;
    }

    /** The repository's top-level directories a backticked path can start with: the modules and the rest. */
    private static Set<String> roots() throws IOException {
        Set<String> roots = new LinkedHashSet<>(List.of("docs", "scripts", "gpu-tests", "config", "python", ".ci"));
        Matcher modules = MODULE.matcher(Files.readString(REPO.resolve("pom.xml")));
        while (modules.find()) {
            roots.add(modules.group(1));
        }
        return roots;
    }

    @Test
    void shouldLinkOnlyToPathsThatExist() throws IOException {
        Set<String> roots = roots();
        List<String> missing = new ArrayList<>();
        int checked = 0;
        for (Map.Entry<String, String> page : pages().entrySet()) {
            Path dir = REPO.resolve(page.getKey()).getParent();
            Matcher link = LINK.matcher(page.getValue());
            while (link.find()) {
                String target = link.group(1);
                if (target.startsWith("#") || target.matches("[a-z]+:.*")) {
                    continue;
                }
                checked++;
                if (!Files.exists(dir.resolve(target.replaceFirst("#.*$", "")))) {
                    missing.add(page.getKey() + ": link " + target);
                }
            }
            Matcher ticked = TICKED.matcher(page.getValue());
            while (ticked.find()) {
                String path = ticked.group(1).replaceFirst("[.,:;]+$", "");
                int slash = path.indexOf('/');
                if (slash < 0
                        || !roots.contains(path.substring(0, slash))
                        || NOT_A_PATH.matcher(path).find()) {
                    continue;
                }
                checked++;
                if (!Files.exists(REPO.resolve(path.replaceFirst("(:\\d+(-\\d+)?|#.*)$", "")))) {
                    missing.add(page.getKey() + ": path `" + path + "`");
                }
            }
        }
        assertThat(checked).as("links and paths checked").isGreaterThan(100);
        assertThat(missing).as("links and backticked paths to nothing").isEmpty();
    }

    @Test
    void shouldCiteNothingOutsideTheRepositoryOrItsPublicUpstream() throws IOException {
        List<String> found = new ArrayList<>();
        for (Map.Entry<String, String> page : pages().entrySet()) {
            List<String> lines = page.getValue().lines().toList();
            for (int i = 0; i < lines.size(); i++) {
                for (Pattern p : FOREIGN) {
                    if (p.matcher(lines.get(i)).find()) {
                        found.add(page.getKey() + ":" + (i + 1) + ": "
                                + lines.get(i).strip());
                    }
                }
            }
        }
        assertThat(found).isEmpty();
    }
}
