package io.pegaflow.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a release needs besides the code: the licence the poms declare, a changelog kept by release, a release script
 * that refuses what cannot be released, and upgrade notes that name the on-disk formats the code writes now.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReleaseFilesIT {
    private static final Path REPO = Path.of(System.getProperty("pega.it.repo", ".."));
    private static final Pattern RELEASE =
            Pattern.compile("(?m)^## \\[(\\d+)\\.(\\d+)\\.(\\d+)] - \\d{4}-\\d{2}-\\d{2}$");

    private static String read(String path) throws IOException {
        return Files.readString(REPO.resolve(path), StandardCharsets.UTF_8);
    }

    @Test
    void shouldShipTheApacheLicenceTheParentPomDeclares() throws IOException {
        assertThat(read("LICENSE"))
                .contains("Apache License")
                .contains("Version 2.0, January 2004")
                .contains("TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION");
        assertThat(read("pom.xml")).containsPattern("<licenses>\\s*<license>\\s*<name>Apache-2.0</name>");
    }

    @Test
    void shouldKeepAChangelogWithAnUnreleasedSectionAndReleasesNewestFirst() throws IOException {
        String changelog = read("CHANGELOG.md");
        assertThat(changelog).containsPattern("(?m)^## \\[Unreleased]$");
        int unreleased = changelog.indexOf("## [Unreleased]");
        Matcher m = RELEASE.matcher(changelog);
        List<int[]> versions = new ArrayList<>();
        while (m.find()) {
            assertThat(m.start()).as("releases come after Unreleased").isGreaterThan(unreleased);
            versions.add(
                    new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3))
                    });
        }
        for (int i = 1; i < versions.size(); i++) {
            int[] newer = versions.get(i - 1);
            int[] older = versions.get(i);
            assertThat(java.util.Arrays.compare(newer, older))
                    .as("releases newest first")
                    .isPositive();
        }
    }

    @Test
    void shouldRefuseAQualifiedVersionBeforeTouchingAnything() throws Exception {
        for (String version : List.of("0.1.0-SNAPSHOT", "1.0", "v1.0.0")) {
            Process p = new ProcessBuilder("bash", "scripts/release.sh", version)
                    .directory(REPO.toFile())
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(out).isEqualTo(2);
            assertThat(out).contains("VERSION must be MAJOR.MINOR.PATCH without a qualifier");
        }
        assertThat(read("scripts/release.sh"))
                .contains("git clone -q --branch \"v$version\"")
                .contains("cyclonedx-maven-plugin")
                .contains("SHA256SUMS");
    }

    /** The upgrade notes name each format version the code writes, so a format change cannot skip them. */
    @Test
    void shouldNameTheFormatVersionsTheCodeWritesInTheUpgradeNotes() throws IOException {
        String upgrading = read("docs/upgrading.md");
        String core = "pega-core/src/main/java/io/pegaflow/core/";
        assertThat(upgrading)
                .contains("`PGFLJRNL`, version **" + constant(core + "journal/JournalFormat.java", "VERSION") + "**")
                .contains(
                        "`PEGASSD1`, version **" + constant(core + "ssd/ShardLayoutDescriptor.java", "VERSION") + "**")
                .contains("`PGE1`, version **" + constant(core + "ssd/EntryDescriptor.java", "VERSION") + "**");
        try (var migrations = Files.list(REPO.resolve("pega-metaserver/src/main/resources/db/migration"))) {
            String newest = migrations
                    .map(p -> p.getFileName().toString().replaceFirst("__.*", ""))
                    .max((a, b) -> Integer.compare(Integer.parseInt(a.substring(1)), Integer.parseInt(b.substring(1))))
                    .orElseThrow();
            assertThat(upgrading).contains("**`" + newest + "`**");
        }
    }

    private static String constant(String source, String name) throws IOException {
        Matcher m = Pattern.compile("static final int " + name + " = (\\d+);").matcher(read(source));
        assertThat(m.find()).as("%s in %s", name, source).isTrue();
        return m.group(1);
    }
}
