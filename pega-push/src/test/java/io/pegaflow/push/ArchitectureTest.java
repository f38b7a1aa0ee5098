package io.pegaflow.push;

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
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The push module's fences: its packages, the root package included, form no cycle (the facade package no longer
 * doubles as the kernel the sides import); it takes pool memory only through the engine's staging allocator and copies
 * only on the engine's device lanes; the agents and signals know nothing of gRPC; and it stays free of Spring and Micrometer.
 */
@Timeout(60)
class ArchitectureTest {
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

    /**
     * The push's own messages ({@code pegaflow.ext.push}: the handshake, layer and rank targets) still pass through
     * these classes of its domain. Named one by one so that no other class can start using the wire; the rework of the
     * push onto the engine's registration replaces them with domain types and empties this list.
     */
    private static final Set<String> WIRE_TYPED_DOMAIN = Set.of(
            "io.pegaflow.push.PushEngine",
            "io.pegaflow.push.decode.DecodeSide",
            "io.pegaflow.push.layout.HandshakeSeal",
            "io.pegaflow.push.layout.Handshakes",
            "io.pegaflow.push.layout.PushLayerTable",
            "io.pegaflow.push.prefill.PrefillSide",
            "io.pegaflow.push.prefill.Push",
            "io.pegaflow.push.prefill.PushAgent");

    @Test
    void shouldKeepGeneratedWireTypesInTheGrpcAdapter() {
        noClasses()
                .that()
                .resideOutsideOfPackage("io.pegaflow.push.grpc..")
                .and(DescribedPredicate.describe(
                        "are not listed in WIRE_TYPED_DOMAIN",
                        (JavaClass c) -> !WIRE_TYPED_DOMAIN.contains(c.getName().replaceFirst("\\$.*", ""))))
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.pegaflow.proto..", "com.google.protobuf..")
                .check(push);
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
