package io.pegaflow.core;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.properties.HasName;
import com.tngtech.archunit.core.domain.properties.HasOwner;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The engine is plain Java: no framework, transport or metrics library reaches into it, and its feature packages form a
 * one-way stack (docs/decisions/0005-core-redesign.md):
 *
 * <pre>
 *   engine, ssd  →  tier  →  lease, cache, instance, load  →  device, block  →  memory, metrics  →  error, agent, plan
 * </pre>
 */
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
                .resideInAnyPackage("io.grpc..", "com.google.protobuf..", "io.pegaflow.proto..")
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

    @Test
    void shouldKeepFeaturePackagesFreeOfCycles() {
        slices().matching("io.pegaflow.core.(*)..").should().beFreeOfCycles().check(core);
    }

    @Test
    void shouldLayerFeaturePackagesOneWay() {
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                // a new package fails here until it is placed in a layer
                .ensureAllClassesAreContainedInArchitecture()
                .layer("facade")
                .definedBy("io.pegaflow.core.engine..", "io.pegaflow.core.ssd..", "io.pegaflow.core.journal..")
                .layer("tier")
                .definedBy("io.pegaflow.core.tier..")
                .layer("state")
                .definedBy(
                        "io.pegaflow.core.lease..",
                        "io.pegaflow.core.cache..",
                        "io.pegaflow.core.instance..",
                        "io.pegaflow.core.load..")
                .layer("model")
                .definedBy("io.pegaflow.core.device..", "io.pegaflow.core.block..")
                .layer("memory")
                .definedBy("io.pegaflow.core.memory..", "io.pegaflow.core.metrics..")
                .layer("ground")
                .definedBy("io.pegaflow.core.error..")
                .whereLayer("facade")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("tier")
                .mayOnlyBeAccessedByLayers("facade")
                .whereLayer("state")
                .mayOnlyBeAccessedByLayers("facade", "tier")
                .whereLayer("model")
                .mayOnlyBeAccessedByLayers("facade", "tier", "state")
                .whereLayer("memory")
                .mayOnlyBeAccessedByLayers("facade", "tier", "state", "model")
                .check(core);
    }

    /** Every time read goes through the injected clock; only the clock itself reads the system's. */
    private static final ArchRule NO_SYSTEM_CLOCK = noClasses()
            .that()
            .resideInAPackage("io.pegaflow.core..")
            .should()
            .accessTargetWhere(JavaAccess.Predicates.target(
                            HasOwner.Predicates.With.owner(JavaClass.Predicates.equivalentTo(System.class)))
                    .and(JavaAccess.Predicates.target(HasName.Predicates.nameMatching("nanoTime|currentTimeMillis"))))
            .as("no class in core reads System.nanoTime or System.currentTimeMillis outside NanoClock");

    @Test
    void shouldReadTimeOnlyThroughTheInjectedClock() {
        NO_SYSTEM_CLOCK.check(core);
    }

    @Test
    void shouldDetectASystemClockRead() {
        // The clock rule must be able to fail: NanoClock itself does read System.nanoTime.
        JavaClasses clock = new ClassFileImporter().importClasses(io.pegaflow.kernel.agent.NanoClock.class);
        assertThatThrownBy(() -> noClasses()
                        .should()
                        .accessTargetWhere(JavaAccess.Predicates.target(
                                HasName.Predicates.nameMatching("nanoTime|currentTimeMillis")))
                        .check(clock))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("nanoTime");
    }

    @Test
    void shouldStartThreadsOnlyInTheAgentPackage() {
        // Threads are the kernel's AgentRunners (and the pool's one-shot pre-touch, and the cuda lanes' batch
        // submitters, which
        // issue a slice of the lane's own plan while the lane thread waits: decision 0015), never ad-hoc executors or
        // threads.
        noClasses()
                .that()
                .resideInAPackage("io.pegaflow.core..")
                .and()
                .doNotHaveFullyQualifiedName("io.pegaflow.core.memory.PreToucher")
                .and()
                .doNotHaveFullyQualifiedName("io.pegaflow.core.device.cuda.CudaCopier$Lane")
                .should()
                .callConstructor(Thread.class, Runnable.class, String.class)
                .orShould()
                .dependOnClassesThat()
                .haveFullyQualifiedName("java.util.concurrent.Executors")
                .orShould()
                .dependOnClassesThat()
                .haveFullyQualifiedName("java.util.concurrent.ThreadPoolExecutor")
                .check(core);
    }

    @Test
    void shouldDetectAnUpwardDependency() {
        // The layer rule must be able to fail: the facade does depend on the state packages.
        assertThatThrownBy(() -> noClasses()
                        .that()
                        .resideInAPackage("io.pegaflow.core.engine..")
                        .should()
                        .dependOnClassesThat()
                        .resideInAnyPackage("io.pegaflow.core.lease..")
                        .check(core))
                .isInstanceOf(AssertionError.class);
    }

    @Test
    void shouldKeepEveryExactPackageFreeOfCyclesRootIncluded() {
        // the feature-slice rule above puts no root-package class in a slice and sees no cycle inside one feature;
        // one slice per exact package sees both (a facade in the root importing a subpackage that imports it back)
        slices().matching("io.pegaflow.(**)").should().beFreeOfCycles().check(core);
    }
}
