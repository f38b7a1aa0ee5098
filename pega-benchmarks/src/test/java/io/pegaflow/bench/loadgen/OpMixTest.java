package io.pegaflow.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class OpMixTest {

    @Test
    void shouldDrawOperationsInProportionToTheirWeights() {
        OpMix mix = OpMix.parse("save=1,query=3,load=0,request=0");
        SplittableRandom random = new SplittableRandom(1);
        Map<OpMix.Op, Integer> counts = new EnumMap<>(OpMix.Op.class);
        for (int i = 0; i < 40_000; i++) {
            counts.merge(mix.next(random), 1, Integer::sum);
        }

        assertThat(counts).containsOnlyKeys(OpMix.Op.SAVE, OpMix.Op.QUERY);
        assertThat(counts.get(OpMix.Op.QUERY) / (double) counts.get(OpMix.Op.SAVE))
                .isBetween(2.8, 3.2);
        assertThat(mix).hasToString("save=1,query=3");
    }
}
