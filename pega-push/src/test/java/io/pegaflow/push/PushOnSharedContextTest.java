package io.pegaflow.push;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The push contract over UCX shared memory with each server's pool allocated by its UCX context, and the push engine
 * on that context beside a P2P transfer engine, as pega-server runs with P2P and the push both on (decision 0019):
 * the prefill server's puts are copies into the decode server's attached segments.
 */
class PushOnSharedContextTest extends PushContract {
    @Override
    String transports() {
        return "shm,self";
    }

    @Override
    PushNode startNode() {
        PushNode node = PushNode.onSharedContext(transports(), config());
        assertThat(node.poolContext().borrowers()).isEqualTo(2);
        assertThat(node.poolContext().sharedOutstanding())
                .isEqualTo(node.pool.regions().size());
        return node;
    }

    @Override
    void afterServersStopped() {
        assertThat(prefillNode.poolContext().outstanding()).isZero();
        assertThat(prefillNode.poolContext().borrowers()).isZero();
        assertThat(decodeNode.poolContext().outstanding()).isZero();
        assertThat(decodeNode.poolContext().borrowers()).isZero();
        assertThat(decodeNode.poolContext().sharedOutstanding()).isZero();
    }
}
