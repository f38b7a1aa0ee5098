package io.pegaflow.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every file of the repository stands alone: no source, script, build file or page cites notes a reader of the
 * repository cannot open (a private spec, a shared architecture or style file next to the checkout). A citation names
 * the public upstream by repository and tag, or one of the project's own docs; our own issue tracker is not public
 * either. {@link DocsLinksIT} checks the pages for more (links, the workplace's tooling); this test covers every
 * tracked file, Java comments and scripts included.
 */
@Timeout(120)
class PrivateNotesIT {
    private static final Path REPO = Path.of(System.getProperty("pega.it.repo", ".."));
    private static final Set<String> NOT_SOURCES = Set.of("target", ".git", "node_modules", "__pycache__", ".venv");
    private static final long LARGEST = 4L << 20;

    // Built from pieces, so this file does not cite what it looks for.
    private static final String SPEC = "spec";
    private static final String MD = "\\.md";
    private static final List<Pattern> PRIVATE = List.of(
            Pattern.compile("\\b" + SPEC + "[/ ][A-Za-z0-9_-]+" + MD),
            Pattern.compile("\\b" + SPEC + " §"),
            Pattern.compile("\\.\\." + "/shared\\b"),
            Pattern.compile("ARCHITECTURE" + "(" + MD + "| §)"),
            Pattern.compile("\\bSTYLE" + "(" + MD + "| §)"),
            Pattern.compile("\\bdesign/" + "redesign" + MD),
            // our own tracker is not public either; upstream's issues are cited with the repository's name
            Pattern.compile("(?i)(?<!pegaflow`? )\\b" + "issues?" + " #?\\d+"));

    @Test
    void shouldCiteNoPrivateNotesInAnyFile() throws IOException, InterruptedException {
        List<Path> files = files();
        List<String> found = new ArrayList<>();
        int scanned = 0;
        for (Path file : files) {
            if (!Files.isRegularFile(file) || Files.size(file) > LARGEST) {
                continue;
            }
            byte[] bytes = Files.readAllBytes(file);
            if (isBinary(bytes)) {
                continue;
            }
            scanned++;
            List<String> lines =
                    new String(bytes, StandardCharsets.UTF_8).lines().toList();
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i);
                if (cites(line)) {
                    found.add(REPO.relativize(file) + ":" + (i + 1) + ": " + line.strip());
                }
            }
        }
        assertThat(scanned).as("text files scanned").isGreaterThan(500);
        assertThat(found).as("citations of notes outside the repository").isEmpty();
    }

    @Test
    void shouldTellPrivateNotesFromTheProjectsOwnDocs() {
        assertThat(List.of(
                        "(" + SPEC + "/engine-api.md §5.2)",
                        SPEC + "/cluster.md §3.1",
                        "(" + SPEC + " storage.md §1.3)",
                        "as the " + SPEC + " §3.4 says",
                        "see .." + "/shared/notes.txt",
                        "(ARCHITECTURE" + ".md §4)",
                        "(ARCHITECTURE" + " §3)",
                        "(STYLE" + " §6.4)",
                        "design/" + "redesign.md §5.1",
                        "(" + "issue" + " #10, defect 6)",
                        "Issue" + " 13: restart"))
                .allMatch(PrivateNotesIT::cites);
        assertThat(List.of(
                        "docs/architecture.md",
                        "docs/design/pd-push.md §2",
                        "decision 0016 §2",
                        "${PROCESSOR_ARCHITECTURE-}",
                        "(novitalabs/pegaflow v0.22.4, python/pegaflow/connector/worker.py)",
                        "the specification of the layout",
                        "(`novitalabs/pegaflow` issues #225 and #273)",
                        "decision 0011, defect 6"))
                .noneMatch(PrivateNotesIT::cites);
    }

    private static boolean cites(String line) {
        return PRIVATE.stream().anyMatch(p -> p.matcher(line).find());
    }

    /** The tracked files, or every file outside build outputs where the checkout is not a git work tree. */
    private static List<Path> files() throws IOException, InterruptedException {
        List<Path> tracked = tracked();
        if (!tracked.isEmpty()) {
            return tracked;
        }
        try (Stream<Path> walk = Files.walk(REPO)) {
            return walk.filter(p -> {
                        for (Path part : REPO.relativize(p)) {
                            if (NOT_SOURCES.contains(part.toString())) {
                                return false;
                            }
                        }
                        return true;
                    })
                    .sorted()
                    .toList();
        }
    }

    private static List<Path> tracked() throws IOException, InterruptedException {
        Process git;
        try {
            git = new ProcessBuilder("git", "ls-files", "-z")
                    .directory(REPO.toFile())
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (IOException noGit) {
            return List.of();
        }
        byte[] out = git.getInputStream().readAllBytes();
        if (!git.waitFor(30, TimeUnit.SECONDS)) {
            git.destroyForcibly();
            return List.of();
        }
        if (git.exitValue() != 0) {
            return List.of();
        }
        List<Path> files = new ArrayList<>();
        String names = new String(out, StandardCharsets.UTF_8);
        int from = 0;
        while (from < names.length()) {
            int end = names.indexOf('\0', from);
            if (end < 0) {
                end = names.length();
            }
            if (end > from) {
                files.add(REPO.resolve(names.substring(from, end)));
            }
            from = end + 1;
        }
        return files;
    }

    private static boolean isBinary(byte[] bytes) {
        for (int i = 0; i < Math.min(bytes.length, 8192); i++) {
            if (bytes[i] == 0) {
                return true;
            }
        }
        return false;
    }
}
