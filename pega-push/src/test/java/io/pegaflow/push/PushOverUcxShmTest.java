package io.pegaflow.push;

/** The push contract over UCX shared memory (the single-host fast path). */
class PushOverUcxShmTest extends PushContract {
    @Override
    String transports() {
        return "shm,self";
    }
}
