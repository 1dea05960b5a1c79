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

static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes Ctrl-C (SIGINT), SIGTERM and SIGHUP ask the run to stop instead of killing the process:
/// the stepping loop ([`crate::run::simulate`]) ends after the current step and closes every
/// output, so that a long run stopped by hand keeps complete dumps, series and pages. A second
/// signal quits at once (status 130). Only the binary calls this, once, for `run` and `view`.
pub fn stop_on_signals() {
    use std::sync::atomic::Ordering;
    let installed = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        eprintln!("\nsettee: stopping after the current step (signal again to quit at once)");
    });
    if let Err(e) = installed {
        // The run still works; a signal then ends it the default way.
        eprintln!("warning: cannot catch Ctrl-C ({e}); an interrupted run will leave its outputs unfinished");
    }
}

/// True once a signal asked the run to stop (see [`stop_on_signals`]).
pub fn stop_requested() -> bool {
    STOP.load(std::sync::atomic::Ordering::SeqCst)
}
