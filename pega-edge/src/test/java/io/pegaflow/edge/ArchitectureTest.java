package io.pegaflow.edge;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The shared edge knows neither app's domain, and its packages form no cycle (docs/decisions/0007). */
@Timeout(60)
class ArchitectureTest {
    private static JavaClasses edge;

    @BeforeAll
    static void importEdge() {
        edge = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages("io.pegaflow.edge");
    }

    @Test
    void shouldImportTheEdgeClasses() {
        assertThat(edge.contain("io.pegaflow.edge.access.AdminAccess")).isTrue();
    }

    @Test
    void shouldKnowNeitherTheEngineNorEitherApp() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "io.pegaflow.core..",
                        "io.pegaflow.sys..",
                        "io.pegaflow.server..",
                        "io.pegaflow.metaserver..",
                        "io.pegaflow.proto..")
                .check(edge);
    }

    @Test
    void shouldKeepPackagesFreeOfCycles() {
        slices().matching("io.pegaflow.edge.(*)..").should().beFreeOfCycles().check(edge);
    }

    @Test
    void shouldKeepEveryExactPackageFreeOfCyclesRootIncluded() {
        // the feature-slice rule above puts no root-package class in a slice and sees no cycle inside one feature;
        // one slice per exact package sees both (a facade in the root importing a subpackage that imports it back)
        slices().matching("io.pegaflow.(**)").should().beFreeOfCycles().check(edge);
    }

    @Test
    void shouldKeepGeneratedWireTypesOut() {
        // the RPC edge works on calls and statuses, never on the apps' messages
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.pegaflow.proto..", "com.google.protobuf..")
                .check(edge);
    }

    @Test
    void shouldLayerTheConfigurationOverAccessOverTheRpcEdgeOverTheSupport() {
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                // a new package fails here until it is placed in a layer
                .ensureAllClassesAreContainedInArchitecture()
                .layer("configuration")
                .definedBy("io.pegaflow.edge")
                .layer("access")
                .definedBy("io.pegaflow.edge.access..")
                .layer("rpc")
                .definedBy("io.pegaflow.edge.rpc..")
                .layer("support")
                .definedBy("io.pegaflow.edge.log..", "io.pegaflow.edge.metrics..", "io.pegaflow.edge.lifecycle..")
                .whereLayer("configuration")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("access")
                .mayOnlyBeAccessedByLayers("configuration")
                .whereLayer("rpc")
                .mayOnlyBeAccessedByLayers("configuration", "access")
                .check(edge);
    }
}
