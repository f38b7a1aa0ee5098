package io.pegaflow.testkit;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.pegaflow.proto.EngineGrpc;
import io.pegaflow.proto.LoadResponse;
import io.pegaflow.proto.compat.GroupedLeaseLoad;
import io.pegaflow.proto.compat.GroupedLoadRequest;
import io.pegaflow.proto.compat.LoadBlockIds;
import io.pegaflow.proto.compat.LoadBlockTarget;
import io.pegaflow.proto.compat.LoadGroup;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The Load of pegaflow-llm 0.23.7 and later (upstream #421) as such a connector sends it: the same RPC path as
 * v0.22.4's Load, with layer groups in field 5 and, per lease, one target list per group in field 2.
 */
public final class GroupedLoads {
    /** {@code pegaflow.Engine/Load} with the grouped request schema. */
    static final MethodDescriptor<GroupedLoadRequest, LoadResponse> LOAD = EngineGrpc.getLoadMethod().toBuilder(
                    ProtoUtils.marshaller(GroupedLoadRequest.getDefaultInstance()),
                    ProtoUtils.marshaller(LoadResponse.getDefaultInstance()))
            .build();

    private GroupedLoads() {}

    /** One group of {@code layerNames}; an empty group is legal and loads nothing. */
    public static LoadGroup group(List<String> layerNames) {
        return LoadGroup.newBuilder().addAllLayerNames(layerNames).build();
    }

    /** One group's targets, in lease order; null is an absent target ({@code 0A 00}), 0 is block 0. */
    public static LoadBlockIds targets(List<@Nullable Integer> blockIds) {
        LoadBlockIds.Builder out = LoadBlockIds.newBuilder();
        for (Integer id : blockIds) {
            out.addTargets(
                    id == null
                            ? LoadBlockTarget.getDefaultInstance()
                            : LoadBlockTarget.newBuilder().setBlockId(id).build());
        }
        return out.build();
    }

    /** One lease with one target list per group. */
    public static GroupedLeaseLoad lease(ByteString lease, List<LoadBlockIds> byGroup) {
        return GroupedLeaseLoad.newBuilder()
                .setLease(lease)
                .addAllBlockIdsByGroup(byGroup)
                .build();
    }

    static LoadResponse call(ManagedChannel channel, GroupedLoadRequest request, Duration timeout) {
        return ClientCalls.blockingUnaryCall(
                channel, LOAD, CallOptions.DEFAULT.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS), request);
    }
}
