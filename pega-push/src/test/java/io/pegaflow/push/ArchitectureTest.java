package io.pegaflow.push;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The push module's fences: its packages, the root package included, form no cycle (the facade package no longer
 * doubles as the kernel the sides import); it takes pool memory only through the engine's staging allocator and copies
 * only on the engine's device lanes; the agents and signals know nothing of gRPC; protobuf (the generated messages and
 * their runtime) stays in the gRPC adapter; and it stays free of Spring and Micrometer.
 */
@Timeout(60)
class ArchitectureTest {
    /** The generated messages and the protobuf runtime: only the gRPC adapter may see them. */
    private static final String[] WIRE_PACKAGES = {"io.pegaflow.proto..", "com.google.protobuf.."};

    private static JavaClasses push;

    @BeforeAll
    static void importPush() {
        push = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages("io.pegaflow.push");
    }

    @Test
    void shouldImportTheEngine() {
        assertThat(push.contain("io.pegaflow.push.PushEngine")).isTrue();
    }

    @Test
    void shouldKeepEveryPackageTheRootIncludedFreeOfCycles() {
        // one slice per exact package: "io.pegaflow.push.(*).." would leave the root package out of every slice
        slices().assignedFrom(new SliceAssignment() {
                    @Override
                    public SliceIdentifier getIdentifierOf(JavaClass c) {
                        return c.getPackageName().startsWith("io.pegaflow.push")
                                ? SliceIdentifier.of(c.getPackageName())
                                : SliceIdentifier.ignore();
                    }

                    @Override
                    public String getDescription() {
                        return "every package of io.pegaflow.push, the root included";
                    }
                })
                .should()
                .beFreeOfCycles()
                .check(push);
    }

    @Test
    void shouldDetectADependencyItReallyHas() {
        // the rules must be able to fail: the gRPC adapter does call the engine
        assertThatThrownBy(() -> noClasses()
                        .that()
                        .resideInAPackage("io.pegaflow.push.grpc..")
                        .should()
                        .dependOnClassesThat()
                        .resideInAPackage("io.pegaflow.push")
                        .check(push))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("PushEngine");
    }

    @Test
    void shouldTakePoolMemoryOnlyThroughTheEnginesStagingAllocator() {
        noClasses()
                .should()
                .callMethod(io.pegaflow.core.memory.PinnedMemoryPool.class, "allocate", long.class)
                .check(push);
    }

    @Test
    void shouldCopyOnlyOnTheEnginesDeviceLanes() {
        // one owner schedules every copy on a GPU: the push neither opens a copier nor holds the backend
        noClasses()
                .should()
                .dependOnClassesThat()
                .belongToAnyOf(io.pegaflow.core.device.DeviceBackend.class, io.pegaflow.core.device.DeviceCopier.class)
                .check(push);
    }

    @Test
    void shouldKeepGrpcOutOfTheAgentsAndSignals() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        "io.pegaflow.push.prefill..", "io.pegaflow.push.decode..", "io.pegaflow.push.signal..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.grpc..")
                .check(push);
    }

    @Test
    void shouldKeepFrameworksOut() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.springframework..", "io.micrometer..")
                .check(push);
    }

    @Test
    void shouldKeepGeneratedWireTypesInTheGrpcAdapter() {
        noClasses()
                .that()
                .resideOutsideOfPackage("io.pegaflow.push.grpc..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(WIRE_PACKAGES)
                .check(push);
    }

    @Test
    void shouldSeeTheWireTypesTheAdapterReallyUses() {
        // the rule above must be able to fail: the adapter's conversions do use the generated messages
        assertThatThrownBy(() -> noClasses()
                        .should()
                        .dependOnClassesThat()
                        .resideInAnyPackage(WIRE_PACKAGES)
                        .check(push))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("io.pegaflow.push.grpc.PushWire")
                .hasMessageContaining("io.pegaflow.proto.ext.push.PushHandshake");
    }

    @Test
    void shouldLayerTheAdapterOverTheEngineOverTheSidesOverTheModel() {
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                // a new package fails here until it is placed in a layer
                .ensureAllClassesAreContainedInArchitecture()
                .layer("adapter")
                .definedBy("io.pegaflow.push.grpc..")
                .layer("engine")
                .definedBy("io.pegaflow.push")
                .layer("sides")
                .definedBy("io.pegaflow.push.prefill..", "io.pegaflow.push.decode..")
                .layer("model")
                .definedBy("io.pegaflow.push.layout..", "io.pegaflow.push.signal..", "io.pegaflow.push.view..")
                .whereLayer("adapter")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("engine")
                .mayOnlyBeAccessedByLayers("adapter")
                .whereLayer("sides")
                .mayOnlyBeAccessedByLayers("adapter", "engine")
                .check(push);
    }
}
