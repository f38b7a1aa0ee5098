package io.pegaflow.server;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The adapters translate and delegate to the engine facade; pool memory is the engine's business. */
@Timeout(60)
class ArchitectureTest {
    /** Only this module's main classes: DO_NOT_INCLUDE_JARS leaves out every dependency, test classes are excluded. */
    private static final String PACKAGE = "io.pegaflow.server";

    private static JavaClasses server;

    @BeforeAll
    static void importServer() {
        server = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages(PACKAGE);
    }

    @Test
    void shouldImportTheGrpcAdapters() {
        assertThat(server.contain("io.pegaflow.server.grpc.EngineGrpcService")).isTrue();
    }

    @Test
    void shouldDetectTheEngineDependencyTheAdaptersReallyHave() {
        // The rules below must be able to fail: the same rule against the engine facade package fails.
        assertThatThrownBy(() -> noClasses()
                        .that()
                        .resideInAPackage("io.pegaflow.server.grpc..")
                        .should()
                        .dependOnClassesThat()
                        .resideInAPackage("io.pegaflow.core.engine..")
                        .check(server))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("PegaEngine");
    }

    @Test
    void shouldKeepGrpcAdaptersAwayFromPoolMemory() {
        noClasses()
                .that()
                .resideInAPackage("io.pegaflow.server.grpc..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.pegaflow.core.memory..")
                .check(server);
    }

    @Test
    void shouldKeepHttpAdaptersAwayFromPoolMemory() {
        noClasses()
                .that()
                .resideInAPackage("io.pegaflow.server.web..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.pegaflow.core.memory..")
                .check(server);
    }

    @Test
    void shouldKeepPackagesFreeOfCycles() {
        slices().matching("io.pegaflow.server.(*)..").should().beFreeOfCycles().check(server);
    }

    @Test
    void shouldLayerEdgeOverFeaturesOverConfiguration() {
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                // a new package fails here until it is placed in a layer
                .ensureAllClassesAreContainedInArchitecture()
                .layer("application")
                .definedBy("io.pegaflow.server", "io.pegaflow.server.startup..")
                .layer("edge")
                .definedBy(
                        "io.pegaflow.server.grpc..",
                        "io.pegaflow.server.web..",
                        "io.pegaflow.server.admin..",
                        "io.pegaflow.server.push..")
                .layer("feature")
                .definedBy(
                        "io.pegaflow.server.internode..",
                        "io.pegaflow.server.ssd..",
                        "io.pegaflow.server.metrics..",
                        "io.pegaflow.server.transfer..",
                        "io.pegaflow.server.state..")
                .layer("config")
                .definedBy("io.pegaflow.server.config..")
                .whereLayer("application")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("edge")
                .mayOnlyBeAccessedByLayers("application")
                .whereLayer("feature")
                .mayOnlyBeAccessedByLayers("application", "edge", "feature")
                // the one-line startup failure every check throws; the journal's check in state throws it too
                .ignoreDependency(
                        JavaClass.Predicates.resideInAPackage("io.pegaflow.server.state.."),
                        JavaClass.Predicates.simpleName("StartupCheckException"))
                .check(server);
    }

    /** Wire types stop at the adapters: the gRPC services and the calls to peers and the metaserver. */
    @Test
    void shouldKeepGeneratedWireTypesInTheAdapterPackages() {
        noClasses()
                .that()
                .resideOutsideOfPackages("io.pegaflow.server.grpc..", "io.pegaflow.server.internode..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.pegaflow.proto..", "com.google.protobuf..")
                .check(server);
    }

    @Test
    void shouldDetectTheWireTypesTheAdaptersReallyUse() {
        // the rule above must be able to fail: the same rule without the internode exception does
        assertThatThrownBy(() -> noClasses()
                        .that()
                        .resideOutsideOfPackages("io.pegaflow.server.grpc..")
                        .should()
                        .dependOnClassesThat()
                        .resideInAnyPackage("io.pegaflow.proto..")
                        .check(server))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("GrpcPeerBlocks");
    }

    /** Meters come from the catalog only: {@code CatalogMeters} (pega-edge) is the one place that builds them. */
    @Test
    void shouldBuildMetersOnlyThroughTheCatalog() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .haveNameMatching("io\\.micrometer\\.core\\.instrument\\.[A-Za-z]+\\$Builder")
                .check(server);
    }

    @Test
    void shouldKeepEveryExactPackageFreeOfCyclesRootIncluded() {
        // the feature-slice rule above puts no root-package class in a slice and sees no cycle inside one feature;
        // one slice per exact package sees both (a facade in the root importing a subpackage that imports it back)
        slices().matching("io.pegaflow.(**)").should().beFreeOfCycles().check(server);
    }
}
