package io.pegaflow.core.tier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pegaflow.core.metrics.EngineMetrics;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code ram + Σ tiers + miss == requested}, checked where an attribution is built. */
@Timeout(10)
class TierAttributionTest {

    @Test
    void shouldSplitARamOnlyAnswerIntoHitsAndMisses() {
        TierAttribution a = TierAttribution.ramOnly(10, 7);
        assertThat(a.ram()).isEqualTo(7);
        assertThat(a.miss()).isEqualTo(3);
        assertThat(a.byTier()).isEmpty();
    }

    @Test
    void shouldAttributeAFetchToEachTierInChainOrder() {
        TierAttribution a = TierAttribution.fetched(10, 2, List.of("ssd", "rdma"), new int[] {5, 1});
        assertThat(a.byTier()).containsExactly(Map.entry("ssd", 5), Map.entry("rdma", 1));
        assertThat(a.miss()).isEqualTo(2);
        assertThat(a.fromTier("rdma")).isEqualTo(1);
        assertThat(a.fromTier("elsewhere")).isZero();
    }

    @Test
    void shouldRefuseCountsThatDoNotAddUp() {
        assertThatThrownBy(() -> new TierAttribution(10, 3, Map.of("ssd", 4), 2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("tier attribution: ram 3 + tiers {ssd=4} + miss 2 = 9 (expected: the 10 blocks requested)");
    }

    @Test
    void shouldRefuseNegativeCounts() {
        assertThatThrownBy(() -> TierAttribution.ramOnly(3, 4)).hasMessageContaining("miss -1");
        assertThatThrownBy(() -> new TierAttribution(1, 2, Map.of("ssd", -1), 0))
                .hasMessageContaining("ssd -1");
    }

    @Test
    void shouldRecordEveryShareOnceByName() {
        EngineMetrics metrics = new EngineMetrics();
        TierAttribution.fetched(6, 1, List.of("ssd", "rdma"), new int[] {2, 2}).recordInto(metrics);
        TierAttribution.ramOnly(3, 3).recordInto(metrics);
        assertThat(metrics.tierRequests("ram")).isEqualTo(4);
        assertThat(metrics.tierRequests("ssd")).isEqualTo(2);
        assertThat(metrics.tierRequests("rdma")).isEqualTo(2);
        assertThat(metrics.tierRequests("miss")).isEqualTo(1);
    }
}
