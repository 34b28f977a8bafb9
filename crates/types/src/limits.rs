//! Limits on client-supplied structure, so that no input can exhaust a thread's stack or
//! overflow a protocol field. Every recursive walk over something a client sends (statement
//! text, types, bound values) counts its depth against [`MAX_NESTING`].

/// How many levels terms, selectors, relations, types and values may nest. Cassandra has no
/// explicit limit: its parser and analysis overflow their stack (a `ServerError` carrying
/// `java.lang.StackOverflowError`) at about 150 to 500 levels, depending on the construct, and
/// accept 100 levels of parentheses. On a debug build, the costliest shape (parenthesised
/// selectors, about 8.5 KB of stack per level in the parser) first overflows a node's 2 MiB
/// worker stack at about 250 levels, so 100 leaves more than twice the room it needs; release
/// builds need several times less.
pub const MAX_NESTING: usize = 100;

/// The longest identifier (keyspace, table, column, field, type, function, alias or bind
/// marker name), in UTF-8 bytes: the native protocol writes names as `[string]`s, whose length
/// is an unsigned 16-bit number.
pub const MAX_IDENTIFIER_BYTES: usize = u16::MAX as usize;

/// The stack a tokio worker thread gets by default (2 MiB).
pub const WORKER_STACK_BYTES: usize = 2 << 20;

/// Runs `f` on a new thread with a tokio worker's default stack and returns its result. Tests
/// use it to prove that the deepest input the limits let through fits such a stack; a panic in
/// `f` is resumed on the calling thread.
pub fn on_worker_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    on_stack(WORKER_STACK_BYTES, f)
}

/// Runs `f` on a new thread with a stack of `bytes` and returns its result.
pub fn on_stack<T: Send>(bytes: usize, f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("limited-stack".into())
            .stack_size(bytes)
            .spawn_scoped(scope, f);
        match spawned.map(|handle| handle.join()) {
            Ok(Ok(value)) => value,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(e) => panic!("cannot start a thread: {e}"),
        }
    })
}
