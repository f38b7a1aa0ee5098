package io.pegaflow.core.instance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The one slot formula: dense, one slot per (layer, rank), and checked instead of wrapping. */
class SlotFormulaTest {

    @Test
    void shouldPlaceRanksOfOneLayerNextToEachOther() {
        assertThat(SlotFormula.slotIndex(0, 1, 0)).isZero();
        assertThat(SlotFormula.slotIndex(3, 4, 2)).isEqualTo(14);
        assertThat(SlotFormula.slotIndex(3, 4, 3) + 1).isEqualTo(SlotFormula.slotIndex(4, 4, 0));
    }

    @Test
    void shouldMapEveryLayerAndRankToADistinctSlotBelowTheCount() {
        int layers = 61;
        int tp = 8;
        int count = SlotFormula.slotCount(layers, tp);
        Set<Integer> seen = new HashSet<>();
        for (int layer = 0; layer < layers; layer++) {
            for (int rank = 0; rank < tp; rank++) {
                int slot = SlotFormula.slotIndex(layer, tp, rank);
                assertThat(slot).isBetween(0, count - 1);
                assertThat(seen.add(slot))
                        .as("slot %d of layer %d rank %d", slot, layer, rank)
                        .isTrue();
            }
        }
        assertThat(seen).hasSize(count);
    }

    @Test
    void shouldRefuseOperandsWithoutASlot() {
        assertThatThrownBy(() -> SlotFormula.slotIndex(0, 2, 2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("no slot for layer_id 0, tp_rank 2 of tp_size 2");
        assertThatThrownBy(() -> SlotFormula.slotIndex(0, 2, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SlotFormula.slotIndex(-1, 2, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SlotFormula.slotIndex(0, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SlotFormula.slotCount(-1, 2)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldFailInsteadOfWrappingIntoAnotherSlot() {
        // (2^30) * 2 + 1 would wrap to a negative int; unchecked it would alias another layer's slot.
        assertThatThrownBy(() -> SlotFormula.slotIndex(1 << 30, 2, 1)).isInstanceOf(ArithmeticException.class);
        assertThatThrownBy(() -> SlotFormula.slotIndex(Integer.MAX_VALUE, 1 << 16, 0))
                .isInstanceOf(ArithmeticException.class);
        assertThat(SlotFormula.slotIndex((1 << 30) - 1, 2, 1)).isEqualTo(Integer.MAX_VALUE);
        assertThatThrownBy(() -> SlotFormula.slotCount(1 << 16, 1 << 16)).isInstanceOf(ArithmeticException.class);
    }
}
