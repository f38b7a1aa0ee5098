package io.pegaflow.push;

import static io.pegaflow.push.PushFixture.LAYERS;
import static org.awaitility.Awaitility.await;

import io.pegaflow.proto.ext.push.PrepareReceiveResponse;
import io.pegaflow.testkit.LayerReadyShm;
import io.pegaflow.testkit.LoadStateShm;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.PushClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One rank pushed from a prefill server to a decode server and caught in the middle: both workers registered, the
 * receive prepared, the push started with ten-minute deadlines, and layer 0 of {@link PushFixture#LAYERS} arrived byte
 * for byte; the rest never comes. What the failure tests then do to a server is theirs. Closes what it opened.
 */
final class MidPush implements AutoCloseable {
    static final Duration DEADLINE = Duration.ofMinutes(10);
    private static final Duration RPC = Duration.ofSeconds(10);
    private static final Duration ARRIVAL = Duration.ofSeconds(60);
    private static final List<Long> FROM = PushFixture.blocks(1, 2, 3, 8);
    private static final List<Long> TO = PushFixture.blocks(5, 6, 7, 12);

    final PushClient decodeClient;
    final LoadStateShm loadState;
    final LoadStateShm pushState;
    private final MockVllmWorker prefill;
    private final MockVllmWorker decode;
    private final PushClient prefillClient;
    private final LayerReadyShm ready;
    /** What this opened, newest first: closed in that order, also when the constructor fails half-way. */
    private final List<AutoCloseable> opened = new ArrayList<>();

    /** {@code tag} names the request's keys; {@code salt} the bytes of layer 0. */
    MidPush(int prefillPort, int decodePort, String tag, long salt) {
        try {
            prefill = own(PushFixture.worker("prefill-0", 0, 1, prefillPort));
            decode = own(PushFixture.worker("decode-0", 0, 1, decodePort));
            prefillClient = own(PushClient.connect("127.0.0.1", prefillPort, RPC));
            decodeClient = own(PushClient.connect("127.0.0.1", decodePort, RPC));
            loadState = own(LoadStateShm.create());
            pushState = own(LoadStateShm.create());
            ready = own(LayerReadyShm.create(LAYERS));
            start(salt, tag);
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    private <T extends AutoCloseable> T own(T resource) {
        opened.add(0, resource);
        return resource;
    }

    private void start(long salt, String tag) {
        prefillClient.registerLayers(prefill);
        decodeClient.registerLayers(decode);
        PrepareReceiveResponse prepared =
                decodeClient.prepareReceive("decode-0", tag + "-d", TO, List.of(loadState.name()), DEADLINE);
        prefillClient.startPush("prefill-0", 0, tag + "-p", prepared.getHandshake(), FROM, ready, pushState, DEADLINE);
        PushFixture.writeLayer(prefill, 0, FROM, salt);
        ready.markReady(1);
        await().atMost(ARRIVAL)
                .until(() ->
                        PushFixture.layerMismatch(prefill, decode, 0, FROM, TO).isEmpty());
    }

    static PushConfig longDeadlines() {
        return PushConfig.defaults().withTimeouts(DEADLINE, DEADLINE);
    }

    @Override
    public void close() {
        for (AutoCloseable c : opened) {
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing " + c, e);
            }
        }
        opened.clear();
    }
}
