package io.pegaflow.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(30)
class NicListTest {

    @ParameterizedTest(name = "[{0}]")
    @ValueSource(
            strings = {"mlx5_0,mlx5_1", "mlx5_0 mlx5_1", "mlx5_0, mlx5_1", "  mlx5_0 ,\tmlx5_1  ", "mlx5_0  mlx5_1"})
    void shouldAcceptCommasBlanksOrBoth(String raw) {
        assertThat(NicList.parse(raw, "pega.rdma.nics")).containsExactly("mlx5_0", "mlx5_1");
    }

    @Test
    void shouldKeepPortsAndOrder() {
        assertThat(NicList.parse("mlx5_3:1 eth0,mlx5_0:2", "pega.rdma.nics"))
                .containsExactly("mlx5_3:1", "eth0", "mlx5_0:2");
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {"   ", "\t"})
    void shouldReadABlankValueAsNoNics(String raw) {
        assertThat(NicList.parse(raw, "pega.rdma.nics")).isEmpty();
    }

    @ParameterizedTest(name = "[{0}]")
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '"',
            value = {
                "mlx5_0,,mlx5_1   | empty NIC name at entry 2 of 'mlx5_0,,mlx5_1'",
                "mlx5_0,          | empty NIC name at entry 2",
                ",mlx5_0          | empty NIC name at entry 1",
                "mlx5_0, ,mlx5_1  | empty NIC name at entry 2",
                "mlx5_0 mlx5_0    | 'mlx5_0' is listed twice",
                "mlx5_0;mlx5_1    | 'mlx5_0;mlx5_1' is not a device name",
                "../etc           | '../etc' is not a device name",
                "mlx5_0:port      | 'mlx5_0:port' is not a device name",
            })
    void shouldRefuseABadEntryNamingIt(String raw, String message) {
        assertThatThrownBy(() -> NicList.parse(raw, "pega.rdma.nics"))
                .isInstanceOfSatisfying(
                        TransferException.class,
                        e -> assertThat(e.kind()).isEqualTo(TransferException.Kind.INIT_FAILED))
                .hasMessageStartingWith("pega.rdma.nics: ")
                .hasMessageContaining(message);
    }
}
