package io.pegaflow.server.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.node.PegaNode;
import io.pegaflow.transfer.ucx.UcxSharedMemory;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

/**
 * {@link TransferRpcsTest}'s cases with UCX over shared memory, where the server's pool is allocated by the transfer
 * engine's UCX context ({@code pega.rdma.shm-pool}, decision 0019): the requester's gets copy straight out of the
 * owner's attached segments, byte for byte. The push engine is on too, over shared memory as well: one context can
 * allocate the pool, it is the transfer engine's, and the push engine runs on it.
 */
@TestPropertySource(
        properties = {"pega.rdma.transports=shm,self", "pega.pd.enabled=true", "pega.pd.transports=shm,self"})
class TransferRpcsShmTest extends TransferRpcsTest {

    @Autowired
    PegaNode node;

    @Test
    void shouldRunThePoolInSharedMemoryTheTransferContextAllocated() {
        UcxSharedMemory poolMemory = node.poolMemory().orElseThrow();
        int shards = node.engine().pool().regions().size();
        assertThat(poolMemory.outstanding()).isEqualTo(shards);
        assertThat(poolMemory.sharedOutstanding()).isEqualTo(shards);
        assertThat(poolMemory.borrowers())
                .as("the transfer engine and the push engine (same NICs and transports) run on the one context")
                .isEqualTo(2);
    }
}
