//! Panics in request handling. A request runs inside [`catch`], which turns a panic into a
//! [`PanicReport`] for that request alone: the connection answers it with a ServerError and
//! carries on. The hook ([`install_hook`]) records where each panic happened and its backtrace:
//! for the request boundary when one is polling on the panicking thread; otherwise it logs the
//! panic at ERROR with its backtrace and hands it to the hook it replaced.

use std::any::Any;
use std::backtrace::Backtrace;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::{self, AssertUnwindSafe, PanicHookInfo};
use std::pin::Pin;
use std::sync::Once;
use std::task::{Context, Poll};

/// What a panic left behind.
#[derive(Debug)]
pub struct PanicReport {
    pub message: String,
    /// `file:line:column` of the panic, when the hook is installed.
    pub location: Option<String>,
    /// The backtrace captured when it panicked, when the hook is installed.
    pub backtrace: Option<String>,
}

thread_local! {
    /// Whether a request boundary is polling on this thread.
    static GUARDED: Cell<bool> = const { Cell::new(false) };
    /// Where the last guarded panic on this thread happened, and its backtrace.
    static RECORDED: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// Installs the panic hook (once per process; later calls do nothing).
pub fn install_hook() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !record_for_boundary(info) {
                log_unguarded(info);
                previous(info);
            }
        }));
    });
}

/// Keeps the place and backtrace of a panic under a request boundary; `false` elsewhere.
fn record_for_boundary(info: &PanicHookInfo<'_>) -> bool {
    if !GUARDED.get() {
        return false;
    }
    let backtrace = Backtrace::force_capture().to_string();
    RECORDED.set(Some((place(info), backtrace)));
    true
}

fn log_unguarded(info: &PanicHookInfo<'_>) {
    let thread = std::thread::current();
    tracing::error!(
        "Thread '{}' panicked at {}: {}\n{}",
        thread.name().unwrap_or("<unnamed>"),
        place(info),
        payload_message(info.payload()),
        Backtrace::force_capture()
    );
}

fn place(info: &PanicHookInfo<'_>) -> String {
    info.location().map(ToString::to_string).unwrap_or_default()
}

/// Runs `request` so that a panic while polling it becomes `Err(PanicReport)`.
pub fn catch<F: Future + Unpin>(request: F) -> CatchPanic<F> {
    CatchPanic { request }
}

/// The future [`catch`] returns.
pub struct CatchPanic<F> {
    request: F,
}

impl<F: Future + Unpin> Future for CatchPanic<F> {
    type Output = Result<F::Output, PanicReport>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let request = &mut self.request;
        let outer = GUARDED.replace(true);
        let polled = panic::catch_unwind(AssertUnwindSafe(|| Pin::new(request).poll(cx)));
        GUARDED.set(outer);
        match polled {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(report(payload.as_ref()))),
        }
    }
}

fn report(payload: &(dyn Any + Send)) -> PanicReport {
    let (location, backtrace) = RECORDED.take().unzip();
    PanicReport {
        message: payload_message(payload),
        location,
        backtrace,
    }
}

fn payload_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<F: Future + Unpin>(future: F) -> F::Output {
        let runtime = tokio::runtime::Builder::new_current_thread().build();
        runtime
            .map(|r| r.block_on(future))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[inline(never)]
    fn failing_request_step(n: u32) -> u32 {
        if n > 0 {
            panic!("request bug {n}");
        }
        n
    }

    #[test]
    fn a_panic_becomes_a_report_with_place_and_backtrace() {
        install_hook();
        let caught = run(catch(Box::pin(async { failing_request_step(7) })));
        let report = caught.expect_err("the request panicked");
        assert_eq!(report.message, "request bug 7");
        let location = report.location.unwrap_or_default();
        assert!(location.contains("panics.rs"), "{location}");
        let backtrace = report.backtrace.unwrap_or_default();
        assert!(backtrace.contains("failing_request_step"), "{backtrace}");
    }

    #[test]
    fn a_request_that_does_not_panic_passes_through() {
        assert_eq!(run(catch(Box::pin(async { 5 }))).ok(), Some(5));
        assert!(!GUARDED.get());
    }

    #[test]
    fn messages_of_every_payload_kind() {
        assert_eq!(payload_message(&"static"), "static");
        assert_eq!(payload_message(&String::from("owned")), "owned");
        assert_eq!(payload_message(&42u8), "a panic without a message");
    }
}
