//! What keeps the command-line runner honest: a closed output pipe ends it quietly, bad
//! command-line values are refused with their reason, and exit codes follow what happened.

/// Restores the default action of `SIGPIPE` (terminate), as C programs have it.
///
/// Rust ignores `SIGPIPE` at start-up, so writing into a closed pipe (`settee doc | head -1`)
/// returns `BrokenPipe` and `println!` panics on it. Handling `BrokenPipe` at every print would
/// have to cover every module that prints (and the parallel regression driver); the default
/// signal action ends the process quietly at the first write into a closed pipe, wherever it
/// happens, and the shell reports it the usual way (status 141), like `cat` or `grep`. Only the
/// binary calls this: a library must not change a process-wide signal disposition.
pub fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: `signal` with a valid signal number and `SIG_DFL` only changes the disposition of
    // SIGPIPE; it is called once at the start of `main`, before any thread is spawned.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
