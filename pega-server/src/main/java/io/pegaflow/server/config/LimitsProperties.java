package io.pegaflow.server.config;

import io.pegaflow.core.engine.EngineLimits;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Min;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * What one client may take from the server ({@code pega.limits.*}, decision 0011, defects 4 and 5); each bound refuses
 * with RESOURCE_EXHAUSTED naming its key before anything is mapped, started, evicted or allocated. See
 * {@link EngineLimits} and docs/configuration.md.
 *
 * @param requestPoolShare the largest fraction of the pinned pool one Save may need
 * @param instances live instances
 * @param mappedObjects layer mappings over all instances
 * @param devices device contexts over all instances
 * @param laneThreads copy-lane threads over all devices (two per device)
 * @param leasesPerInstance live query leases of one instance
 * @param prefetchesPerInstance backing-tier prefetch tasks of one instance
 */
@Validated
@ConfigurationProperties("pega.limits")
public record LimitsProperties(
        @DecimalMin(value = "0", inclusive = false) @DecimalMax("1") @DefaultValue("0.5")
        double requestPoolShare,

        @Min(1) @DefaultValue("256") int instances,
        @Min(1) @DefaultValue("16384") int mappedObjects,
        @Min(1) @DefaultValue("512") int devices,
        @Min(2) @DefaultValue("1024") int laneThreads,
        @Min(1) @DefaultValue("16384") int leasesPerInstance,
        @Min(1) @DefaultValue("1024") int prefetchesPerInstance) {

    public EngineLimits toEngineLimits() {
        return new EngineLimits(
                requestPoolShare,
                instances,
                mappedObjects,
                devices,
                laneThreads,
                leasesPerInstance,
                prefetchesPerInstance);
    }
}
