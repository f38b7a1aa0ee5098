package io.pegaflow.server.conformance;

import static io.pegaflow.testkit.ReferenceHarness.blockIds;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.pegaflow.core.engine.PegaEngine;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.LeaseLoad;
import io.pegaflow.proto.LoadRequest;
import io.pegaflow.proto.QueryRequest;
import io.pegaflow.proto.RegisterContextRequest;
import io.pegaflow.proto.ReleaseRequest;
import io.pegaflow.proto.SaveLayer;
import io.pegaflow.proto.SaveRequest;
import io.pegaflow.proto.UnregisterRequest;
import io.pegaflow.server.PegaServerApplication;
import io.pegaflow.server.grpc.GrpcPort;
import io.pegaflow.testkit.BlockPattern;
import io.pegaflow.testkit.MockScheduler;
import io.pegaflow.testkit.MockVllmWorker;
import io.pegaflow.testkit.ReferenceHarness;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterTry;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Property-based hostile input over real gRPC (issue #10): arbitrary values in every field of RegisterContextBatch,
 * Save, Load, QueryPrefetch, Release and UnregisterContext — negative, zero, huge and overflowing numbers, empty, long
 * and control-character strings, random bytes for descriptors, hashes and leases, mismatched list lengths. Each call
 * ends with one of the codes its RPC documents (an INTERNAL only as a {@code storage error:} text), the server stays
 * up, and a victim tenant's device bytes, cached blocks and Load stay byte-exact. At the end nothing is outstanding.
 */
class HostileRpcPropertiesTest {
    private static final BlockPattern PATTERN = BlockPattern.perByte(77);
    private static final List<ByteString> VICTIM_HASHES = BlockPattern.hashes(4242, 4);
    private static ConfigurableApplicationContext context;
    private static PegaEngine engine;
    private static MockScheduler client;
    private static MockVllmWorker victim;

    @BeforeContainer
    static void startServer() {
        context = new SpringApplicationBuilder(PegaServerApplication.class)
                .run(
                        "--spring.grpc.server.port=0",
                        "--server.port=0",
                        "--server.address=127.0.0.1",
                        "--pega.pool.size=16MB",
                        "--pega.device.backend=host",
                        "--logging.level.root=WARN");
        engine = context.getBean(PegaEngine.class);
        int port = context.getBean(GrpcPort.class).port();
        client = MockScheduler.connect("127.0.0.1", port);
        victim = ReferenceHarness.worker("127.0.0.1", port).instanceId("victim").build();
        victim.register();
        victim.fillBlocks(blockIds(4), PATTERN);
        victim.save(blockIds(4), VICTIM_HASHES);
        client.awaitHits("victim", VICTIM_HASHES, 4, Duration.ofSeconds(10));
    }

    @AfterContainer
    static void stopServer() {
        try {
            victim.zeroBlocks(blockIds(4));
            var ready = client.queryUntilReady("victim", VICTIM_HASHES, "final", Duration.ofSeconds(10));
            assertThat(ready.getNumHitBlocks()).isEqualTo(4);
            assertThat(victim.load(ready.getLease(), blockIds(4)).succeeded()).isTrue();
            victim.verifyBlocks(blockIds(4), PATTERN);
            victim.close();
            client.close();
            engine.cleanupInstances(null);
            engine.flushSeals();
            engine.cleanupMemory();
            assertThat(engine.activeLeases()).as("leases").isZero();
            assertThat(engine.pool().outstandingAllocations())
                    .as("pool allocations")
                    .isZero();
            assertThat(engine.mappedObjectCount()).as("mappings").isZero();
        } finally {
            context.close();
        }
    }

    /** After every try: the server answers, the victim's memory is untouched and its instance still registered. */
    @AfterTry
    void victimUntouched() {
        assertThat(client.health().getStatus().getOk()).isTrue();
        victim.verifyBlocks(blockIds(4), PATTERN);
        assertThat(engine.instanceIds()).contains("victim");
    }

    private static EngineGrpc.EngineBlockingStub stub() {
        return client.stub().withDeadlineAfter(20, TimeUnit.SECONDS);
    }

    /** Runs the call and checks its code is one the RPC documents; an INTERNAL must be a storage error text. */
    private static void expect(Set<Status.Code> allowed, Supplier<?> call) {
        Status status = Status.OK;
        try {
            assertThat((Object) call.get()).as("reply").isNotNull();
        } catch (StatusRuntimeException e) {
            status = e.getStatus();
        }
        if (status.getCode() == Status.Code.INTERNAL) {
            assertThat(status.getDescription()).as("INTERNAL text").startsWith("storage error: ");
        } else {
            assertThat(status.getCode()).as("status %s", status).isIn(allowed);
        }
        assertThat(String.valueOf(status.getDescription()).length())
                .as("description size")
                .isLessThan(1000);
    }

    private static final Set<Status.Code> REFUSALS =
            Set.of(Status.Code.INVALID_ARGUMENT, Status.Code.FAILED_PRECONDITION, Status.Code.RESOURCE_EXHAUSTED);

    @Property(tries = 150)
    void registerWithAnyFields(
            @ForAll @StringLength(max = 40) String instanceId,
            @ForAll int tpRank,
            @ForAll int tpSize,
            @ForAll int worldSize,
            @ForAll int deviceId,
            @ForAll int numLayers,
            @ForAll @Size(max = 4) List<@StringLength(max = 20) String> layerNames,
            @ForAll @Size(max = 4) List<byte[]> wrappers,
            @ForAll @Size(max = 4) List<Long> numBlocks,
            @ForAll @Size(max = 4) List<Long> bytesPerBlock,
            @ForAll @Size(max = 4) List<Long> kvStride,
            @ForAll @Size(max = 4) List<Integer> segments) {
        RegisterContextRequest.Builder r = RegisterContextRequest.newBuilder()
                .setInstanceId(instanceId)
                .setNamespace("hostile")
                .setTpRank(tpRank)
                .setTpSize(tpSize)
                .setWorldSize(worldSize)
                .setDeviceId(deviceId)
                .setNumLayers(numLayers)
                .addAllLayerNames(layerNames)
                .addAllNumBlocks(numBlocks)
                .addAllBytesPerBlock(bytesPerBlock)
                .addAllKvStrideBytes(kvStride)
                .addAllSegments(segments);
        wrappers.forEach(w -> r.addWrapperBytes(ByteString.copyFrom(w)));
        expect(REFUSALS, () -> stub().registerContextBatch(r.build()));
        for (String id : engine.instanceIds()) {
            if (!id.equals("victim")) {
                engine.cleanupInstances(id);
            }
        }
    }

    @Property(tries = 150)
    void saveWithAnyFields(
            @ForAll boolean victimId,
            @ForAll int tpRank,
            @ForAll int ppRank,
            @ForAll int deviceId,
            @ForAll @StringLength(max = 20) String layerName,
            @ForAll @Size(max = 16) List<Integer> blockIds,
            @ForAll @Size(max = 16) List<byte[]> hashes) {
        SaveLayer.Builder layer = SaveLayer.newBuilder().setLayerName(layerName).addAllBlockIds(blockIds);
        hashes.forEach(h -> layer.addBlockHashes(ByteString.copyFrom(h)));
        SaveRequest r = SaveRequest.newBuilder()
                .setInstanceId(victimId ? "victim" : "nobody")
                .setTpRank(tpRank)
                .setPpRank(ppRank)
                .setDeviceId(deviceId)
                .addSaves(layer)
                .build();
        Set<Status.Code> allowed = Set.of(
                Status.Code.OK,
                Status.Code.INVALID_ARGUMENT,
                Status.Code.FAILED_PRECONDITION,
                Status.Code.RESOURCE_EXHAUSTED);
        expect(allowed, () -> stub().save(r));
    }

    @Property(tries = 150)
    void loadWithAnyFields(
            @ForAll boolean victimId,
            @ForAll int tpRank,
            @ForAll int deviceId,
            @ForAll @StringLength(max = 64) String loadStateShm,
            @ForAll @Size(max = 3) List<@StringLength(max = 20) String> layerNames,
            @ForAll byte[] lease,
            @ForAll @Size(max = 16) List<Integer> blockIds) {
        LoadRequest r = LoadRequest.newBuilder()
                .setInstanceId(victimId ? "victim" : "nobody")
                .setTpRank(tpRank)
                .setDeviceId(deviceId)
                .setLoadStateShm(loadStateShm)
                .addAllLayerNames(layerNames)
                .addLoads(LeaseLoad.newBuilder()
                        .setLease(ByteString.copyFrom(lease))
                        .addAllBlockIds(blockIds))
                .build();
        expect(Set.of(Status.Code.INVALID_ARGUMENT, Status.Code.FAILED_PRECONDITION), () -> stub().load(r));
    }

    @Property(tries = 150)
    void queryAndReleaseWithAnyFields(
            @ForAll boolean victimId,
            @ForAll @Size(max = 16) List<byte[]> hashes,
            @ForAll @StringLength(max = 40) String reqId,
            @ForAll byte[] lease) {
        QueryRequest.Builder q = QueryRequest.newBuilder()
                .setInstanceId(victimId ? "victim" : "nobody")
                .setReqId(reqId);
        hashes.forEach(h -> q.addBlockHashes(ByteString.copyFrom(h)));
        Set<Status.Code> allowed =
                Set.of(Status.Code.OK, Status.Code.INVALID_ARGUMENT, Status.Code.FAILED_PRECONDITION);
        try {
            var answer = stub().queryPrefetch(q.build());
            if (answer.hasReady() && !answer.getReady().getLease().isEmpty()) {
                stub().release(ReleaseRequest.newBuilder()
                        .setLease(answer.getReady().getLease())
                        .build());
            }
        } catch (StatusRuntimeException e) {
            expect(allowed, () -> {
                throw e;
            });
        }
        expect(
                allowed,
                () -> stub().release(ReleaseRequest.newBuilder()
                        .setLease(ByteString.copyFrom(lease))
                        .build()));
        expect(
                Set.of(Status.Code.FAILED_PRECONDITION, Status.Code.INVALID_ARGUMENT),
                () -> stub().unregisterContext(UnregisterRequest.newBuilder()
                        .setInstanceId("nobody-" + reqId)
                        .build()));
    }
}
