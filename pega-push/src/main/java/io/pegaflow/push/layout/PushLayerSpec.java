package io.pegaflow.push.layout;

/**
 * One KV layer as a worker registers it for pushing, before anything is mapped or checked: the same values as a
 * {@code RegisterContext} layer. {@link PushLayerTable#register} validates it.
 *
 * @param wrapperBytes the device backend's handle of the layer memory; not copied
 * @param segments 1 or 2 (a split K/V layout)
 */
public record PushLayerSpec(
        String name, byte[] wrapperBytes, long numBlocks, long bytesPerBlock, long kvStrideBytes, int segments) {}
