package io.pegaflow.bench.loadgen;

import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The shared prefix universe: prefix k is a chain of {@code length} blocks whose hashes and contents come from
 * {@link BlockContent}. Hash lists are built on first use and shared by all workers (thread-safe, lock-free).
 */
final class Prefixes {
    private final BlockContent content;
    private final int length;
    private final AtomicReferenceArray<List<ByteString>> hashes;

    Prefixes(BlockContent content, int count, int length) {
        this.content = content;
        this.length = length;
        this.hashes = new AtomicReferenceArray<>(count);
    }

    int length() {
        return length;
    }

    BlockContent content() {
        return content;
    }

    /** The block hashes of prefix {@code k}, immutable. */
    List<ByteString> hashes(int k) {
        List<ByteString> h = hashes.get(k);
        if (h == null) {
            List<ByteString> built = new ArrayList<>(length);
            for (int j = 0; j < length; j++) {
                built.add(ByteString.copyFrom(content.hash(k, j)));
            }
            h = Collections.unmodifiableList(built);
            if (!hashes.compareAndSet(k, null, h)) {
                h = hashes.get(k);
            }
        }
        return h;
    }
}
