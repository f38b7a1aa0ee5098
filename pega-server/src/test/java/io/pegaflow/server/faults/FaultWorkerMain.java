package io.pegaflow.server.faults;

import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import java.time.Duration;

/**
 * A vLLM worker as a process of its own, to be SIGKILLed by {@link WorkerKillTest}: {@code save} saves batch after
 * batch and prints {@code ACK b} once the server acknowledged batch {@code b}; {@code load} saves one batch, then loads
 * it again and again, printing {@code LOADED n}. It never ends by itself before the test kills it (at most a minute).
 */
public final class FaultWorkerMain {
    private FaultWorkerMain() {}

    public static void main(String[] args) throws InterruptedException {
        int port = Integer.parseInt(args[0]);
        String instanceId = args[1];
        boolean save = args[2].equals("save");
        try (MockScheduler scheduler = MockScheduler.connect("127.0.0.1", port);
                MockVllmWorker worker = FaultWorkers.worker(port, instanceId).build()) {
            // a killed process cannot unlink its objects: the test removes exactly these for it
            worker.layers().stream()
                    .map(l -> l.memory().name())
                    .distinct()
                    .forEach(n -> System.out.println("SHM " + n));
            worker.register();
            System.out.println("REGISTERED");
            if (save) {
                for (int b = 0; b < FaultWorkers.BATCHES; b++) {
                    worker.fillBlocks(FaultWorkers.ids(b), FaultWorkers.pattern(b));
                    worker.save(FaultWorkers.ids(b), FaultWorkers.hashes(b));
                    System.out.println("ACK " + b);
                }
            } else {
                worker.fillBlocks(FaultWorkers.ids(0), FaultWorkers.pattern(0));
                worker.save(FaultWorkers.ids(0), FaultWorkers.hashes(0));
                scheduler.awaitHits(
                        instanceId, FaultWorkers.hashes(0), FaultWorkers.BLOCKS_PER_BATCH, Duration.ofSeconds(20));
                System.out.println("SAVED");
                for (int n = 0; n < 100_000; n++) {
                    var ready = scheduler.queryUntilReady(
                            instanceId, FaultWorkers.hashes(0), "r" + n, Duration.ofSeconds(20));
                    worker.load(ready.getLease(), FaultWorkers.ids(0));
                    System.out.println("LOADED " + n);
                }
            }
            Thread.sleep(60_000);
        }
    }
}
