package io.pegaflow.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(30)
class TransferConfigTest {

    @Test
    void shouldRefuseSettingsOutOfRangeNamingThem() {
        assertRefused(() -> TransferConfig.of("lo", 0), "pega.rdma.qps-per-peer: 0 (expected 1 to 64)");
        assertRefused(() -> TransferConfig.of("lo", 65), "pega.rdma.qps-per-peer: 65");
        assertRefused(() -> TransferConfig.of("", 2), "pega.rdma.nics: at least one NIC");
        assertRefused(() -> TransferConfig.of("lo", 2).withTransports("tcp;rm -rf"), "pega.rdma.transports");
    }

    @Test
    void shouldNameTheKeysTheSettingsWereReadFrom() {
        TransferKeys pd = new TransferKeys("x.enabled", "x.nics", "x.lanes", "x.transports");
        assertRefused(() -> TransferConfig.of("lo,,lo", 2, "", pd), "x.nics: empty NIC name at entry 2");
        assertRefused(() -> TransferConfig.of("", 2, "", pd), "x.nics: at least one NIC");
        assertRefused(() -> TransferConfig.of("lo", 65, "", pd), "x.lanes: 65 (expected 1 to 64)");
        assertRefused(() -> TransferConfig.of("lo", 2, "tcp;x", pd), "x.transports: 'tcp;x'");
        assertThat(TransferConfig.of("lo", 2, "tcp", pd).withTransports("shm").keys())
                .isEqualTo(pd);
        assertThat(TransferConfig.of("lo", 2).keys()).isEqualTo(TransferKeys.RDMA);
    }

    @Test
    void shouldNormaliseTheTransportList() {
        assertThat(new TransferConfig(List.of("lo"), 2, " TCP ").transports()).isEqualTo("tcp");
        assertThat(new TransferConfig(List.of("lo"), 2, null).transports()).isEmpty();
    }

    @Test
    void shouldShareAContextAcrossLaneCountsButNotAcrossNicsOrTransports() {
        TransferConfig shm = TransferConfig.of("lo", 2).withTransports("shm,self");
        assertThat(TransferConfig.of("lo", 4).withTransports(" SHM,self").sharesContextWith(shm))
                .isTrue();
        assertThat(TransferConfig.of("lo", 2).withTransports("tcp").sharesContextWith(shm))
                .isFalse();
        assertThat(TransferConfig.of("lo", 2).sharesContextWith(shm)).isFalse();
        assertThat(TransferConfig.of("lo eth0", 2).withTransports("shm,self").sharesContextWith(shm))
                .isFalse();
    }

    @ParameterizedTest(name = "[{0}] -> {1}")
    @CsvSource({
        "'',true",
        "tcp,true",
        "'rc,sm',true",
        "'shm,self',false",
        "'sm',false",
        "'posix,sysv,cma',false",
        "'^shm',true",
        "'ud,self',true"
    })
    void shouldAskForPeerErrorHandlingUnlessOnlySharedMemoryIsAllowed(String tls, boolean expected) {
        assertThat(TransferConfig.of("lo", 1).withTransports(tls).peerErrorHandling())
                .isEqualTo(expected);
    }

    @ParameterizedTest(name = "[{0}] -> {1}")
    @CsvSource({
        "'',true",
        "tcp,false",
        "'rc,sm,self',true",
        "'SHM,self',true",
        "'tcp,sysv',true",
        "'cma,tcp',false",
        "'^tcp',true",
        "'^shm',false",
        "'^posix,sysv',false",
        "'^posix',true",
        "all,true"
    })
    void shouldTellWhetherUcxMayUseSharedMemory(String tls, boolean expected) {
        assertThat(TransferConfig.allowsSharedMemory(tls)).isEqualTo(expected);
        assertThat(TransferConfig.of("lo", 1).withTransports(tls).allowsSharedMemory())
                .isEqualTo(expected);
    }

    private static void assertRefused(Runnable r, String message) {
        assertThatThrownBy(r::run)
                .isInstanceOfSatisfying(
                        TransferException.class,
                        e -> assertThat(e.kind()).isEqualTo(TransferException.Kind.INIT_FAILED))
                .hasMessageContaining(message);
    }
}
