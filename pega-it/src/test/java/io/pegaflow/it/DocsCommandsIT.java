package io.pegaflow.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.testkit.ChildJvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
import org.junit.jupiter.api.io.TempDir;

/**
 * Every command in README.md and docs/ works from a fresh clone as written: each Maven command that selects modules
 * builds what they depend on, nothing needs an installed snapshot or a local repository (offline), the README's
 * build command makes every jar the pages run, the README's load-generator command runs, the README's curl commands
 * answer a server started as the README starts it (its admin token included), and the end-to-end benchmark command
 * runs with its token. Cheap: the Maven commands are checked against the poms, not run; only the jar commands run,
 * with small pools and few repetitions.
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

    /** The scripts run Maven as the docs do: online unless the caller asks otherwise (MAVEN_ARGS=-o). */
    @Test
    void shouldNeverRunMavenOfflineInTheScripts() throws IOException {
        List<Path> scripts = new ArrayList<>();
        for (String dir : List.of("scripts", "gpu-tests", ".ci")) {
            try (Stream<Path> files = Files.list(REPO.resolve(dir))) {
                files.filter(f -> f.toString().endsWith(".sh")
                                || f.getFileName().toString().equals("run"))
                        .sorted()
                        .forEach(scripts::add);
            }
        }
        List<String> offline = new ArrayList<>();
        int checked = 0;
        for (Path script : scripts) {
            Matcher m = MVNW.matcher(Files.readString(script));
            while (m.find()) {
                checked++;
                List<String> args = List.of(m.group().trim().split("\\s+"));
                if (args.contains("-o") || args.contains("--offline")) {
                    offline.add(REPO.relativize(script) + ": " + m.group().trim());
                }
            }
        }
        assertThat(checked).as("Maven commands in the scripts").isGreaterThan(3);
        assertThat(offline)
                .as("-o fails on a machine whose Maven cache never resolved a plugin")
                .isEmpty();
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

    /** The fenced bash block of {@code page} that contains {@code marker}, continuation lines joined. */
    private static List<String> bashBlock(String page, String marker) throws IOException {
        Matcher block = Pattern.compile("```bash\\n(.*?)```", Pattern.DOTALL).matcher(pages().get(page));
        while (block.find()) {
            if (block.group(1).contains(marker)) {
                return block.group(1).lines().map(String::trim).toList();
            }
        }
        throw new AssertionError(page + " has no bash block with " + marker);
    }

    /** The value the page's {@code export PEGA_ADMIN_TOKEN=...} line gives, run by bash as a reader would. */
    private static String exportedToken(List<String> block) throws Exception {
        String export = block.stream()
                .filter(l -> l.startsWith("export PEGA_ADMIN_TOKEN="))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no export PEGA_ADMIN_TOKEN= line in " + block));
        // A newline, not ';': the line may end in a comment.
        String token = bash(Map.of(), export + "\nprintf %s \"$PEGA_ADMIN_TOKEN\"");
        assertThat(token).as("the exported token").matches("[0-9a-f]{32}");
        return token;
    }

    /** Runs {@code line} with {@code bash -o pipefail}; its output, or a failure naming the line and the output. */
    private static String bash(Map<String, String> env, String line) throws Exception {
        ProcessBuilder builder = new ProcessBuilder("bash", "-o", "pipefail", "-c", line).redirectErrorStream(true);
        builder.environment().putAll(env);
        Process p = builder.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(90, TimeUnit.SECONDS)).as(line).isTrue();
        assertThat(p.exitValue()).as("%s%n%s", line, out).isZero();
        return out;
    }

    /** The words of a {@code java ...} line of a page, with the jar made absolute. */
    private static List<String> javaArgs(List<String> block, String start) {
        String line = block.stream()
                .filter(l -> l.startsWith(start))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no line starting " + start + " in " + block));
        List<String> words =
                new ArrayList<>(List.of(line.replaceAll("\\s*&$", "").split("\\s+")));
        words.remove(0); // java: ChildJvm runs this JVM's
        words.replaceAll(w -> w.matches("pega-[a-z-]+/target/.+\\.jar")
                ? REPO.resolve(w).toAbsolutePath().normalize().toString()
                : w);
        return words;
    }

    @Test
    void shouldAnswerTheReadmesCurlCommandsWithTheReadmesTokenOnAFreshServer(@TempDir Path dir) throws Exception {
        List<String> start = bashBlock("README.md", "java -jar pega-server/target/pega-server.jar");
        String token = exportedToken(start);
        List<String> curls = bashBlock("README.md", "curl -s localhost:9091/health").stream()
                .filter(l -> l.startsWith("curl "))
                .toList();
        assertThat(curls).as("the README's curl commands").hasSizeGreaterThan(3);
        assertThat(curls).anyMatch(l -> l.contains("-XPOST"));
        int[] ports = ChildJvm.freePorts(2);
        // The README's server, on free ports and a small pool: what the curls need is its default access rule.
        List<String> args = List.of(
                "-jar",
                JarMetadata.jar("pega.it.serverJar"),
                "--server.port=" + ports[1],
                "--spring.grpc.server.port=" + ports[0],
                "--pega.pool.size=64MB");
        try (ChildJvm server = ChildJvm.start(
                "readme server",
                dir,
                List.of(),
                Map.of("PEGA_ADMIN_TOKEN", token),
                args,
                ChildJvm.pegaServerReady(ports[1]))) {
            for (String curl : curls) {
                // --fail-with-body: a 403 (or any 4xx/5xx) fails the command, as a reader would notice it.
                String line = curl.replace("localhost:9091", "localhost:" + ports[1])
                        .replaceFirst("^curl ", "curl --fail-with-body ");
                bash(Map.of("PEGA_ADMIN_TOKEN", token), line);
            }
            assertThat(bash(Map.of(), curls.get(0).replace("localhost:9091", "localhost:" + ports[1])))
                    .isEqualTo("ok");
            String withoutToken = bash(
                    Map.of("PEGA_ADMIN_TOKEN", ""),
                    curls.stream()
                                    .filter(l -> l.contains("-XPOST"))
                                    .findFirst()
                                    .orElseThrow()
                                    .replace("localhost:9091", "localhost:" + ports[1])
                            + " -o /dev/null -w '%{http_code}'");
            assertThat(withoutToken).as("the same POST without the token").isEqualTo("403");
            assertThat(server.process().isAlive()).isTrue();
        }
    }

    @Test
    void shouldRunTheEndToEndBenchmarkCommandAsWrittenWithFewerRepetitions(@TempDir Path dir) throws Exception {
        List<String> block = bashBlock("docs/benchmarks.md", "--scenario e2e");
        String token = exportedToken(block);
        int[] ports = ChildJvm.freePorts(2);
        List<String> server = javaArgs(block, "java -jar pega-server/target/pega-server.jar");
        server.replaceAll(w -> w.replace("50155", Integer.toString(ports[0]))
                .replace("19191", Integer.toString(ports[1]))
                .replaceFirst("^--pega.pool.size=.*", "--pega.pool.size=64MB"));
        List<String> loadgen = javaArgs(block, "java -cp pega-benchmarks/target/benchmarks.jar");
        loadgen.replaceAll(
                w -> w.replace("50155", Integer.toString(ports[0])).replace("19191", Integer.toString(ports[1])));
        // The page's figures take 22 repetitions of 512 MiB; the command's shape (the cleanup and its token) is the
        // same with one small repetition.
        loadgen.set(loadgen.indexOf("--e2e-reps") + 1, "1");
        loadgen.addAll(List.of("--e2e-save-blocks", "32", "--e2e-query-blocks", "64", "--no-progress"));
        try (ChildJvm s = ChildJvm.start(
                        "e2e server",
                        dir,
                        List.of(),
                        Map.of("PEGA_ADMIN_TOKEN", token),
                        server,
                        ChildJvm.pegaServerReady(ports[1]));
                ChildJvm run = ChildJvm.start(
                        "e2e loadgen", dir, List.of(), Map.of("PEGA_ADMIN_TOKEN", token), loadgen, () -> true)) {
            assertThat(run.awaitExit(Duration.ofSeconds(90))).as(run.logText()).isZero();
            assertThat(run.logText()).contains("PegaFlow end-to-end over gRPC");
            assertThat(dir.resolve("e2e.json")).isRegularFile();
            assertThat(s.process().isAlive()).isTrue();
        }
    }
}
