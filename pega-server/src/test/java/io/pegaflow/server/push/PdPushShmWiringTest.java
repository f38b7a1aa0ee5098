package io.pegaflow.server.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.pegaflow.node.PegaNode;
import io.pegaflow.transfer.ucx.UcxSharedMemory;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

/**
 * {@link PdPushWiringTest} with the push engine over shared memory and P2P off: the push engine's UCX context
 * allocates the pool (decision 0019), so a decode server's pool is memory a prefill server on the same host attaches.
 */
@TestPropertySource(properties = "pega.pd.transports=shm,self")
class PdPushShmWiringTest extends PdPushWiringTest {

    @Autowired
    PegaNode node;

    @Test
    void shouldAllocateThePoolFromThePushEnginesContextInSharedMemory() {
        UcxSharedMemory poolMemory = node.poolMemory().orElseThrow();
        int shards = node.engine().pool().regions().size();
        assertThat(node.transfers()).as("P2P is off").isEmpty();
        assertThat(poolMemory.outstanding()).isEqualTo(shards);
        assertThat(poolMemory.sharedOutstanding()).isEqualTo(shards);
        assertThat(poolMemory.borrowers()).as("the push engine runs on it").isEqualTo(1);
    }
}
