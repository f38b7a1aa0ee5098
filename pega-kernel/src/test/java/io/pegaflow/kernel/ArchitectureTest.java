package io.pegaflow.kernel;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.properties.HasName;
import com.tngtech.archunit.core.domain.properties.HasOwner;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SlicesRuleDefinition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The ground floor stays bare: only the JDK, slf4j and JSpecify's annotations, no cycles, one clock, and the only
 * place in the house where threads are started on purpose (the agent runner).
 */
class ArchitectureTest {

    private static JavaClasses kernel;

    @BeforeAll
    static void importKernel() {
        kernel = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages("io.pegaflow.kernel");
    }

    @Test
    void shouldImportTheKernel() {
        assertThat(kernel.contain("io.pegaflow.kernel.agent.AgentRunner")).isTrue();
        assertThat(kernel.contain("io.pegaflow.kernel.plan.RangePlan")).isTrue();
    }

    @Test
    void shouldDependOnlyOnTheJdkAndLogging() {
        classes()
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage("io.pegaflow.kernel..", "java..", "org.slf4j..", "org.jspecify.annotations..")
                .check(kernel);
    }

    @Test
    void shouldKeepCopyPlansFreeOfEveryOtherPackage() {
        // the device copiers, the transfer engine and the push all build RangePlans: the package drags nothing in
        classes()
                .that()
                .resideInAPackage("io.pegaflow.kernel.plan..")
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage("io.pegaflow.kernel.plan..", "java..", "org.jspecify.annotations..")
                .check(kernel);
    }

    @Test
    void shouldBeFreeOfCyclesIncludingTheRootPackage() {
        SlicesRuleDefinition.slices()
                .matching("io.pegaflow.kernel.(**)")
                .should()
                .beFreeOfCycles()
                .check(kernel);
    }

    @Test
    void shouldReadTheSystemClockOnlyInNanoClock() {
        noClasses()
                .that()
                .doNotHaveFullyQualifiedName("io.pegaflow.kernel.agent.NanoClock")
                .should()
                .accessTargetWhere(JavaAccess.Predicates.target(
                                HasOwner.Predicates.With.owner(JavaClass.Predicates.equivalentTo(System.class)))
                        .and(JavaAccess.Predicates.target(
                                HasName.Predicates.nameMatching("nanoTime|currentTimeMillis"))))
                .check(kernel);
    }

    @Test
    void shouldDetectTheClockRead() {
        // the rule above must be able to fail: the clock itself does read System.nanoTime
        assertThatThrownBy(() -> noClasses()
                        .should()
                        .accessTargetWhere(JavaAccess.Predicates.target(
                                HasName.Predicates.nameMatching("nanoTime|currentTimeMillis")))
                        .check(kernel))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("NanoClock");
    }

    @Test
    void shouldStartThreadsOnlyInTheAgentPackage() {
        noClasses()
                .that()
                .resideOutsideOfPackage("io.pegaflow.kernel.agent..")
                .should()
                .callConstructorWhere(DescribedPredicate.describe(
                        "a Thread constructor",
                        access -> access.getTargetOwner().isAssignableTo(Thread.class)))
                .check(kernel);
    }

    @Test
    void shouldKeepItsThreePartsIndependent() {
        // the wire is out already: the kernel depends on nothing but the JDK and logging (above)
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                // a new package fails here until it is placed in a layer
                .ensureAllClassesAreContainedInArchitecture()
                .layer("agents")
                .definedBy("io.pegaflow.kernel.agent..")
                .layer("plans")
                .definedBy("io.pegaflow.kernel.plan..")
                .layer("memory")
                .definedBy("io.pegaflow.kernel.memory..")
                .layer("annotations")
                .definedBy("io.pegaflow.kernel")
                .whereLayer("agents")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("plans")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("memory")
                .mayNotBeAccessedByAnyLayer()
                .check(kernel);
    }
}
