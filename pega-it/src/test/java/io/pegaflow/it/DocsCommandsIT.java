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
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every command in README.md and docs/ works from a fresh clone as written: each Maven command that selects modules
 * builds what they depend on, nothing needs an installed snapshot or a local repository (offline), the README's
 * build command makes every jar the pages run, and the README's load-generator command runs. Cheap: the Maven
 * commands are checked against the poms, not run; only the jar commands run.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DocsCommandsIT {
    private static final Path REPO = Path.of(System.getProperty("pega.it.repo", ".."));
    private static final Pattern MVNW = Pattern.compile("\\./mvnw\\b[^`&|;\\n]*");
    private static final Pattern JAR = Pattern.compile("(pega-[a-z-]+)/target/([A-Za-z0-9._-]+\\.jar)");
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern DEPENDENCY = Pattern.compile("<artifactId>(pega-[a-z-]+)</artifactId>");

    /** Every page: README.md and docs/**.md, each with its text, continuation lines joined. */
    private static Map<String, String> pages() throws IOException {
        Map<String, String> pages = new LinkedHashMap<>();
        pages.put("README.md", joined(REPO.resolve("README.md")));
        try (Stream<Path> docs = Files.walk(REPO.resolve("docs"))) {
            for (Path p :
                    docs.filter(f -> f.toString().endsWith(".md")).sorted().toList()) {
                pages.put(REPO.relativize(p).toString(), joined(p));
            }
        }
        return pages;
    }

    private static String joined(Path page) throws IOException {
        return Files.readString(page, StandardCharsets.UTF_8).replaceAll("\\\\\\n\\s*", " ");
    }

    /** Module name to the reactor modules it depends on directly, from the poms. */
    private static Map<String, Set<String>> reactor() throws IOException {
        Map<String, Set<String>> deps = new LinkedHashMap<>();
        Matcher modules = MODULE.matcher(Files.readString(REPO.resolve("pom.xml")));
        while (modules.find()) {
            String module = modules.group(1);
            String pom = Files.readString(REPO.resolve(module).resolve("pom.xml"));
            String dependencies = pom.contains("<dependencies>")
                    ? pom.substring(pom.indexOf("<dependencies>"), pom.lastIndexOf("</dependencies>"))
                    : "";
            Set<String> direct = new LinkedHashSet<>();
            Matcher d = DEPENDENCY.matcher(dependencies);
            while (d.find()) {
                direct.add(d.group(1));
            }
            deps.put(module, direct);
        }
        return deps;
    }

    /** The modules a command builds: its -pl list plus, with -am, everything they need; all without -pl. */
    private static Set<String> built(String command, Map<String, Set<String>> reactor) {
        List<String> args = List.of(command.trim().split("\\s+"));
        int pl = args.indexOf("-pl");
        if (pl < 0) {
            return reactor.keySet();
        }
        Set<String> modules = new LinkedHashSet<>(List.of(args.get(pl + 1).split(",")));
        if (args.contains("-am") || args.contains("--also-make")) {
            List<String> todo = new ArrayList<>(modules);
            while (!todo.isEmpty()) {
                for (String dep : reactor.getOrDefault(todo.remove(0), Set.of())) {
                    if (modules.add(dep)) {
                        todo.add(dep);
                    }
                }
            }
        }
        return modules;
    }

    @Test
    void shouldBuildEveryMavenCommandFromAFreshClone() throws IOException {
        Map<String, Set<String>> reactor = reactor();
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Map.Entry<String, String> page : pages().entrySet()) {
            Matcher m = MVNW.matcher(page.getValue());
            while (m.find()) {
                checked++;
                String command = m.group().trim();
                List<String> args = List.of(command.split("\\s+"));
                String where = page.getKey() + ": " + command;
                if (args.contains("install")) {
                    problems.add(where + ": install writes snapshots into ~/.m2; build a reactor slice instead");
                }
                if (args.contains("-o") || args.contains("--offline")) {
                    problems.add(where + ": -o fails on a machine whose ~/.m2 is empty");
                }
                Set<String> modules = built(command, reactor);
                for (String module : modules) {
                    if (!reactor.containsKey(module)) {
                        problems.add(where + ": no module " + module);
                        continue;
                    }
                    for (String dep : reactor.get(module)) {
                        if (!modules.contains(dep)) {
                            problems.add(where + ": " + module + " needs " + dep + ", which only -am builds");
                        }
                    }
                }
            }
        }
        assertThat(checked).as("Maven commands in the docs").isGreaterThan(5);
        assertThat(problems).isEmpty();
    }

    @Test
    void shouldMakeEveryJarThePagesRunWithTheReadmesBuildCommandOrTheirOwn() throws IOException {
        Map<String, Set<String>> reactor = reactor();
        Map<String, String> pages = pages();
        Matcher build = MVNW.matcher(pages.get("README.md"));
        assertThat(build.find()).as("the README's build command").isTrue();
        assertThat(build.group()).contains("package");
        Set<String> readmeBuilds = built(build.group(), reactor);
        assertThat(readmeBuilds)
                .as("the README's build command makes the server, the metaserver and the load generator")
                .contains("pega-server", "pega-metaserver", "pega-benchmarks");
        Set<String> jars = new LinkedHashSet<>();
        for (Map.Entry<String, String> page : pages.entrySet()) {
            Set<String> builds = new LinkedHashSet<>(readmeBuilds);
            Matcher own = MVNW.matcher(page.getValue());
            while (own.find()) {
                if (List.of(own.group().split("\\s+")).contains("package")) {
                    builds.addAll(built(own.group(), reactor));
                }
            }
            Matcher jar = JAR.matcher(page.getValue());
            while (jar.find()) {
                jars.add(jar.group());
                assertThat(builds)
                        .as(
                                "%s: the module of %s, built by the README or a command on the page",
                                page.getKey(), jar.group())
                        .contains(jar.group(1));
            }
        }
        // The failsafe run comes after `package` of the whole reactor: the jars the pages run exist.
        for (String jar : jars) {
            assertThat(REPO.resolve(jar)).as("%s, named in the docs", jar).isRegularFile();
        }
    }

    @Test
    void shouldRunTheReadmesLoadGeneratorHelpCommand() throws Exception {
        Matcher m = Pattern.compile("`(java -cp pega-benchmarks/target/benchmarks.jar [^`]*--help)`")
                .matcher(pages().get("README.md"));
        assertThat(m.find()).as("the load generator's --help in the README").isTrue();
        List<String> command = new ArrayList<>(List.of(m.group(1).split("\\s+")));
        command.set(0, Path.of(System.getProperty("java.home"), "bin", "java").toString());
        Process p = new ProcessBuilder(command)
                .directory(REPO.toFile())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out)
                .contains("--target=HOST:PORT")
                .contains("127.0.0.1:50055")
                .doesNotContain(":9090");
    }
}
