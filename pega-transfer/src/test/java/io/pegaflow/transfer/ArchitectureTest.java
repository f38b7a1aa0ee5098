package io.pegaflow.transfer;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
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
import org.junit.jupiter.api.Timeout;

/**
 * The transfer module holds the transport and nothing else: of the engine it sees only the memory regions and the agent
 * package, it knows neither blocks nor leases, and the shared lane machinery knows no fabric.
 */
@Timeout(60)
class ArchitectureTest {
    private static JavaClasses transfer;

    @BeforeAll
    static void importTransfer() {
        transfer = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages("io.pegaflow.transfer");
    }

    @Test
    void shouldImportTheEngine() {
        assertThat(transfer.contain("io.pegaflow.transfer.lane.LaneEngine")).isTrue();
    }

    @Test
    void shouldNotDependOnTheEngine() {
        // the transfer engine stands on the kernel (agents, plans, region interfaces); the engine is a peer, not a
        // floor
        noClasses()
                .should()
                .dependOnClassesThat(resideInAPackage("io.pegaflow.core.."))
                .check(transfer);
    }

    @Test
    void shouldDetectAKernelDependencyItReallyHas() {
        // the rule above must be able to fail: the same check over a package the module does use
        assertThatThrownBy(() -> noClasses()
                        .should()
                        .dependOnClassesThat()
                        .resideInAPackage("io.pegaflow.kernel.memory..")
                        .check(transfer))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("MemoryRegionInfo");
    }

    @Test
    void shouldKeepFrameworksOut() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.springframework..", "io.grpc..", "com.google.protobuf..", "io.micrometer..")
                .check(transfer);
    }

    @Test
    void shouldKeepTheLaneMachineryFreeOfFabrics() {
        noClasses()
                .that()
                .resideInAnyPackage("io.pegaflow.transfer", "io.pegaflow.transfer.lane..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.pegaflow.transfer.ucx..", "io.pegaflow.transfer.loopback..", "org.openucx..")
                .check(transfer);
    }

    @Test
    void shouldKeepPackagesFreeOfCycles() {
        slices().matching("io.pegaflow.transfer.(*)..")
                .should()
                .beFreeOfCycles()
                .check(transfer);
    }

    @Test
    void shouldKeepEveryExactPackageFreeOfCyclesRootIncluded() {
        // the feature-slice rule above puts no root-package class in a slice and sees no cycle inside one feature;
        // one slice per exact package sees both (a facade in the root importing a subpackage that imports it back)
        slices().matching("io.pegaflow.(**)").should().beFreeOfCycles().check(transfer);
    }

    @Test
    void shouldKeepTheWireOut() {
        // peers exchange descriptors through the application's RPCs; the engine sees only bytes
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.pegaflow.proto..", "com.google.protobuf..", "io.grpc..")
                .check(transfer);
    }

    @Test
    void shouldLayerTheEnginesOverTheLanesOverTheApi() {
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                // a new package fails here until it is placed in a layer
                .ensureAllClassesAreContainedInArchitecture()
                .layer("engines")
                .definedBy("io.pegaflow.transfer.ucx..", "io.pegaflow.transfer.loopback..")
                .layer("lanes")
                .definedBy("io.pegaflow.transfer.lane..")
                .layer("api")
                .definedBy("io.pegaflow.transfer")
                .whereLayer("engines")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("lanes")
                .mayOnlyBeAccessedByLayers("engines")
                .check(transfer);
    }
}
