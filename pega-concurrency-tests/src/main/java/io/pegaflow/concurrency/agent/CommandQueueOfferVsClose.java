package io.pegaflow.concurrency.agent;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.pegaflow.kernel.agent.CommandQueue;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * Claim ({@code CommandQueue#close}): a producer's offer racing the owner's close is either accepted and then handed
 * back by {@code close()} (the owner releases it), or refused as CLOSED (the producer still owns it). A command is
 * never accepted and then lost, which is how a Save's slots leaked when it raced an engine shutdown behind a STOP
 * marker (review E3).
 *
 * <p>r1: the offer was accepted (1) or refused as closed (0); r2: commands {@code close()} handed back; r3: commands
 * still drainable afterwards.
 */
@JCStressTest
@Outcome(id = "1, 1, 0", expect = ACCEPTABLE, desc = "offer first: accepted, handed back by close")
@Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "close first: offer refused, producer keeps its command")
@Outcome(expect = FORBIDDEN, desc = "a command accepted and lost, duplicated, or accepted after close")
@State
public class CommandQueueOfferVsClose {
    sealed interface Command permits Job {}

    record Job() implements Command {}

    private final CommandQueue<Command> queue = new CommandQueue<>(Command.class, 4);

    @Actor
    public void producer(III_Result r) {
        r.r1 = queue.offer(new Job()) == CommandQueue.Offer.ACCEPTED ? 1 : 0;
    }

    @Actor
    public void owner(III_Result r) {
        r.r2 = queue.close().size();
    }

    @Arbiter
    public void arbiter(III_Result r) {
        r.r3 = queue.drain(c -> {}, 4);
    }
}
