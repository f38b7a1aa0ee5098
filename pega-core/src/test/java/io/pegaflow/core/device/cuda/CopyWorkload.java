package io.pegaflow.core.device.cuda;

import io.pegaflow.kernel.plan.RangePlan;
import java.util.Random;

/**
 * The plans a Save or Load of one request makes for a model's KV cache: {@code layers} layer tensors, {@code blocks}
 * blocks at scattered slots out of twice as many, one range per block and plane, host side packed per layer and
 * plane as the save path allocates it. Qwen3-8B (36 layers, 8 KV heads of 128, bf16) gives 32 KiB per plane of a
 * 16-token block.
 *
 * @param name what the report calls it
 * @param layers layer tensors
 * @param blocks blocks in the request
 * @param planes 2 for the kv-first (split) layout, 1 when a block's K and V are one range (blocks-first)
 * @param fragment bytes of one range
 */
record CopyWorkload(String name, int layers, int blocks, int planes, long fragment) {
    static final long KIB = 1024;

    static CopyWorkload[] qwen3_8b() {
        return new CopyWorkload[] {
            new CopyWorkload("kv-first, 2-token blocks (4 KiB)", 36, 4096, 2, 4 * KIB),
            new CopyWorkload("kv-first, 8-token blocks (16 KiB)", 36, 1024, 2, 16 * KIB),
            new CopyWorkload("kv-first, 16-token blocks (32 KiB)", 36, 1024, 2, 32 * KIB),
            new CopyWorkload("blocks-first, 16-token blocks (64 KiB)", 36, 1024, 1, 64 * KIB),
            new CopyWorkload("kv-first, 128-token blocks (256 KiB)", 36, 128, 2, 256 * KIB),
            new CopyWorkload("kv-first, 1024-token blocks (2 MiB)", 36, 16, 2, 2048 * KIB),
        };
    }

    long bytes() {
        return (long) layers * blocks * planes * fragment;
    }

    /** Device bytes the layer tensors take: twice the request's blocks per layer. */
    long deviceBytes() {
        return 2 * bytes();
    }

    int ranges() {
        return layers * blocks * planes;
    }

    /**
     * The plan between device tensors at {@code device} and pool memory at {@code host}; {@code seed} picks the
     * scattered slots (the same for every layer, as one request's block ids are).
     */
    RangePlan plan(long device, long host, long seed) {
        int slots = 2 * blocks;
        int[] slot = shuffled(slots, new Random(seed));
        long layerDevice = (long) slots * planes * fragment;
        long planeDevice = (long) slots * fragment;
        RangePlan p = new RangePlan(ranges());
        long h = host;
        for (int l = 0; l < layers; l++) {
            for (int s = 0; s < planes; s++) {
                for (int b = 0; b < blocks; b++) {
                    p.add(device + l * layerDevice + s * planeDevice + slot[b] * fragment, h, fragment);
                    h += fragment;
                }
            }
        }
        return p;
    }

    private static int[] shuffled(int n, Random r) {
        int[] s = new int[n];
        for (int i = 0; i < n; i++) {
            s[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            int t = s[i];
            s[i] = s[j];
            s[j] = t;
        }
        return s;
    }
}
