package io.pegaflow.core;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The engine is plain Java: no framework, transport or metrics library reaches into it (STYLE §6.2, §6.4). */
@Timeout(60)
class ArchitectureTest {
    /** Only this module's main classes: DO_NOT_INCLUDE_JARS leaves out every dependency, test classes are excluded. */
    private static final String PACKAGE = "io.pegaflow.core";

    private static JavaClasses core;

    @BeforeAll
    static void importCore() {
        core = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages(PACKAGE);
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
