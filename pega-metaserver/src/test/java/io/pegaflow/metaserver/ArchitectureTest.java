package io.pegaflow.metaserver;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The metaserver's packages form one stack: the gRPC and HTTP edges over the wiring, over the block-owner index, over
 * the node lifecycle, which knows nothing above it.
 */
@Timeout(60)
class ArchitectureTest {
    private static final String PACKAGE = "io.pegaflow.metaserver";

    private static JavaClasses metaserver;

    @BeforeAll
    static void importMetaserver() {
        metaserver = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages(PACKAGE);
    }

    @Test
    void shouldImportTheMetaserverClasses() {
        assertThat(metaserver.contain("io.pegaflow.metaserver.node.NodeRegistry"))
                .isTrue();
    }

    @Test
    void shouldKeepPackagesFreeOfCycles() {
        slices().matching("io.pegaflow.metaserver.(*)..")
                .should()
                .beFreeOfCycles()
                .check(metaserver);
    }

    @Test
    void shouldLayerEdgeOverConfigurationAndMetricsOverIndexOverNodes() {
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                // a new package fails here until it is placed in a layer
                .ensureAllClassesAreContainedInArchitecture()
                .layer("application")
                .definedBy("io.pegaflow.metaserver")
                .layer("edge")
                .definedBy(
                        "io.pegaflow.metaserver.grpc..",
                        "io.pegaflow.metaserver.web..",
                        "io.pegaflow.metaserver.admin..")
                .layer("config")
                .definedBy("io.pegaflow.metaserver.config..")
                .layer("metrics")
                .definedBy("io.pegaflow.metaserver.metrics..")
                .layer("index")
                .definedBy("io.pegaflow.metaserver.index..")
                .layer("node")
                .definedBy("io.pegaflow.metaserver.node..")
                .whereLayer("application")
                .mayOnlyBeAccessedByLayers("config")
                .whereLayer("edge")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("config")
                .mayOnlyBeAccessedByLayers("edge")
                .whereLayer("metrics")
                .mayOnlyBeAccessedByLayers("edge")
                .whereLayer("index")
                .mayOnlyBeAccessedByLayers("edge", "config", "metrics")
                .check(metaserver);
    }

    @Test
    void shouldDetectTheDependencyTheIndexReallyHas() {
        // The layer rule must be able to fail: the index does use the node lifecycle.
        assertThatThrownBy(() -> noClasses()
                        .that()
                        .resideInAPackage("io.pegaflow.metaserver.index..")
                        .should()
                        .dependOnClassesThat()
                        .resideInAPackage("io.pegaflow.metaserver.node..")
                        .check(metaserver))
                .isInstanceOf(AssertionError.class);
    }

    /** Meters come from the catalog only: {@code CatalogMeters} (pega-edge) is the one place that builds them. */
    @Test
    void shouldBuildMetersOnlyThroughTheCatalog() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .haveNameMatching("io\\.micrometer\\.core\\.instrument\\.[A-Za-z]+\\$Builder")
                .check(metaserver);
    }

    @Test
    void shouldKeepEveryExactPackageFreeOfCyclesRootIncluded() {
        // the feature-slice rule above puts no root-package class in a slice and sees no cycle inside one feature;
        // one slice per exact package sees both (a facade in the root importing a subpackage that imports it back)
        slices().matching("io.pegaflow.(**)").should().beFreeOfCycles().check(metaserver);
    }

    @Test
    void shouldKeepGeneratedWireTypesInTheGrpcAdapter() {
        noClasses()
                .that()
                .resideOutsideOfPackage("io.pegaflow.metaserver.grpc..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.pegaflow.proto..")
                .check(metaserver);
        // One exception, in the index only: it keys owners by protobuf's immutable ByteString, the very object the RPC
        // decoded, because a byte[] key would copy every hash of every announcement and query on the hot path. That
        // is a value type, not a message: no other protobuf class may appear outside the adapter.
        noClasses()
                .that()
                .resideOutsideOfPackages("io.pegaflow.metaserver.grpc..", "io.pegaflow.metaserver.index..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("com.google.protobuf..")
                .check(metaserver);
        noClasses()
                .that()
                .resideInAPackage("io.pegaflow.metaserver.index..")
                .should()
                .dependOnClassesThat(JavaClass.Predicates.resideInAPackage("com.google.protobuf..")
                        .and(DescribedPredicate.not(JavaClass.Predicates.simpleName("ByteString"))))
                .check(metaserver);
    }
}
