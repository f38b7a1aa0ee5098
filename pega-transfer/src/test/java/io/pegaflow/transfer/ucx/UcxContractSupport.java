package io.pegaflow.transfer.ucx;

import io.pegaflow.kernel.memory.MemoryRegionInfo;
import io.pegaflow.transfer.HandshakeDescriptor;
import io.pegaflow.transfer.RegisteredRegion;
import io.pegaflow.transfer.TransferEngineContract;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;

/**
 * A bare UCX peer: a context, one worker (every lane of the descriptor names it) and registered memory, progressed by a
 * thread of its own until {@link TransferEngineContract.Stoppable#stop()}, after which nobody drives it, as a process
 * stopped with SIGSTOP looks from the network. Over TCP its operations then never complete (the target must progress);
 * over shared memory they would complete anyway, because the requester's CPU does the copy.
 */
final class UcxContractSupport {
    private UcxContractSupport() {}

    static TransferEngineContract.Stoppable stoppablePeer(
            String devices, String transports, int lanes, List<MemoryRegionInfo> regions) {
        UcpContext context = new UcpContext(new UcpParams()
                .requestRmaFeature()
                .setConfig("NET_DEVICES", devices)
                .setConfig("TLS", transports));
        UcpWorker worker = context.newWorker(new UcpWorkerParams());
        List<UcpMemory> memories = new ArrayList<>();
        List<RegisteredRegion> table = new ArrayList<>();
        for (MemoryRegionInfo r : regions) {
            UcpMemory m = context.memoryMap(
                    new UcpMemMapParams().setAddress(r.address()).setLength(r.lengthBytes()));
            memories.add(m);
            table.add(new RegisteredRegion(r.address(), r.lengthBytes(), bytes(m.getRemoteKeyBuffer())));
        }
        byte[] address = bytes(worker.getAddress());
        HandshakeDescriptor descriptor = new HandshakeDescriptor(
                HandshakeDescriptor.Fabric.UCX, 42, Collections.nCopies(lanes, address), 1, table);
        Progress progress = new Progress(worker);
        Thread thread = new Thread(progress, "stoppable-ucx-peer");
        thread.setDaemon(true);
        thread.start();
        return new TransferEngineContract.Stoppable() {
            @Override
            public HandshakeDescriptor descriptor() {
                return descriptor;
            }

            @Override
            public void stop() {
                progress.running = false;
                join(thread);
            }

            @Override
            public void close() {
                stop();
                worker.close();
                memories.forEach(UcpMemory::deregister);
                context.close();
            }
        };
    }

    private static final class Progress implements Runnable {
        private final UcpWorker worker;
        volatile boolean running = true;

        Progress(UcpWorker worker) {
            this.worker = worker;
        }

        @Override
        public void run() {
            try {
                while (running) {
                    worker.progress();
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static void join(Thread t) {
        try {
            t.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }
}
