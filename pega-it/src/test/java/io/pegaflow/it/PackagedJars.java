package io.pegaflow.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;

/** The applications this module tests, as packaged: the pom names each jar in a system property. */
public final class PackagedJars {
    private PackagedJars() {}

    /** The path of the jar named by {@code property} ({@code pega.it.serverJar}, ...), which must exist. */
    public static String path(String property) {
        String jar = System.getProperty(property);
        assertThat(jar).as("system property %s (set by the pom)", property).isNotNull();
        assertThat(Path.of(jar))
                .as("the packaged jar; build it with ./mvnw package")
                .exists();
        return jar;
    }
}
