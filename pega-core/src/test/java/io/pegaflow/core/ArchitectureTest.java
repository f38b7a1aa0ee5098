package io.pegaflow.core;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.pegaflow.core.engine.PegaEngine;
import java.net.URISyntaxException;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The engine is plain Java: no framework, transport or metrics library reaches into it (STYLE §6.2, §6.4). */
@Timeout(60)
class ArchitectureTest {
    private static JavaClasses core;

    @BeforeAll
    static void importCore() {
        core = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPath(mainClasses());
    }

    /** The module's own compiled main classes (target/classes), not the whole classpath. */
    private static Path mainClasses() {
        try {
            return Path.of(PegaEngine.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void shouldImportTheEngineClasses() {
        assertThat(core.contain("io.pegaflow.core.engine.PegaEngine")).isTrue();
        assertThat(core.size()).isGreaterThan(30);
    }

    @Test
    void shouldDetectDependenciesOnLibrariesCoreReallyUses() {
        // The rules below must be able to fail: the same rule over a library core does use (slf4j) fails.
        assertThatThrownBy(() -> noClasses()
                        .that()
                        .resideInAPackage("io.pegaflow.core..")
                        .should()
                        .dependOnClassesThat()
                        .resideInAnyPackage("org.slf4j..")
                        .check(core))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("org.slf4j.Logger");
    }

    @Test
    void shouldKeepCoreFreeOfSpring() {
        noClasses()
                .that()
                .resideInAPackage("io.pegaflow.core..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.springframework..")
                .check(core);
    }

    @Test
    void shouldKeepCoreFreeOfGrpcAndProtobuf() {
        noClasses()
                .that()
                .resideInAPackage("io.pegaflow.core..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.grpc..", "com.google.protobuf..")
                .check(core);
    }

    @Test
    void shouldKeepCoreFreeOfMicrometer() {
        noClasses()
                .that()
                .resideInAPackage("io.pegaflow.core..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.micrometer..")
                .check(core);
    }
}
