package io.pegaflow.node;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The node is plain Java over the libraries: no framework, no wire format, no cycles (root package included). */
class ArchitectureTest {
    private static JavaClasses node;

    @BeforeAll
    static void importNode() {
        node = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages("io.pegaflow.node");
    }

    @Test
    void shouldImportTheNode() {
        assertThat(node.contain("io.pegaflow.node.PegaNode")).isTrue();
    }

    @Test
    void shouldKeepFrameworksAndTheWireOut() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.springframework..",
                        "io.micrometer..",
                        "io.grpc..",
                        "com.google.protobuf..",
                        "io.pegaflow.proto..",
                        "io.pegaflow.server..")
                .check(node);
    }

    @Test
    void shouldDetectALibraryDependencyItReallyHas() {
        // the rule above must be able to fail: the same check over a package the node does use
        assertThatThrownBy(() -> noClasses()
                        .should()
                        .dependOnClassesThat()
                        .resideInAnyPackage("io.pegaflow.transfer.ucx..")
                        .check(node))
                .isInstanceOf(AssertionError.class);
    }

    @Test
    void shouldLayerTheAssemblyOverTheRemoteTier() {
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                // a new package fails here until it is placed in a layer
                .ensureAllClassesAreContainedInArchitecture()
                .layer("assembly")
                .definedBy("io.pegaflow.node")
                .layer("remote")
                .definedBy("io.pegaflow.node.remote..")
                .whereLayer("assembly")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("remote")
                .mayOnlyBeAccessedByLayers("assembly")
                .check(node);
    }

    @Test
    void shouldBeFreeOfCyclesIncludingTheRootPackage() {
        slices().matching("io.pegaflow.(**)").should().beFreeOfCycles().check(node);
    }
}
