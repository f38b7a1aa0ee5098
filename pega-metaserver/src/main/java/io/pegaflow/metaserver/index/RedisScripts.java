package io.pegaflow.metaserver.index;

/**
 * The Lua scripts of the Redis index. Each touches one key (a block's hash of owners), so it runs on the shard that
 * owns the key in a Redis Cluster, atomically, without cross-slot transactions. An owner record is the field
 * {@code <node address>} of the block's hash; its value is the writer's node_id (16 bytes) followed by the
 * registration time of that session in decimal milliseconds, the session's fencing token: a session registered later
 * on the same address (a takeover) is never overwritten by an earlier one that some instance still believes current.
 */
final class RedisScripts {

    private RedisScripts() {}

    /**
     * KEYS[1] block, ARGV[1] address, ARGV[2] record, ARGV[3] TTL in ms. Returns {1} for a new record, {0} when this
     * session already held it, {-1} when a newer session of the address holds it (nothing written), or {2, old}
     * when it replaced an older session's record {@code old}.
     */
    static final String INSERT = """
            local old = redis.call('HGET', KEYS[1], ARGV[1])
            if old == ARGV[2] then
              redis.call('PEXPIRE', KEYS[1], ARGV[3])
              return {0}
            end
            if old and tonumber(string.sub(old, 17)) > tonumber(string.sub(ARGV[2], 17)) then
              return {-1}
            end
            redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
            redis.call('PEXPIRE', KEYS[1], ARGV[3])
            if old then
              return {2, old}
            end
            return {1}
            """;

    /**
     * KEYS[1] block, ARGV[1] address, ARGV[2] node_id (16 bytes). Removes the address's record only when that
     * node_id wrote it. Returns 0 (nothing removed), 1 (removed) or 2 (removed, and the block had no other owner).
     */
    static final String REMOVE = """
            local old = redis.call('HGET', KEYS[1], ARGV[1])
            if old and string.sub(old, 1, 16) == ARGV[2] then
              redis.call('HDEL', KEYS[1], ARGV[1])
              if redis.call('EXISTS', KEYS[1]) == 0 then
                return 2
              end
              return 1
            end
            return 0
            """;
}
