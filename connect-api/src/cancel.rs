//! A runtime-agnostic cancellation signal and a sleep facility supplied by the runtime.
//!
//! `connect-api` must not depend on an async runtime, so it cannot use `tokio_util`'s token or
//! `tokio::time`. The runtime creates a [`CancellationToken`] per connector/task, hands a clone
//! to the context, and cancels it on stop; tasks await [`CancellationToken::cancelled`] (or check
//! [`CancellationToken::is_cancelled`]) inside long waits and return early.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// A boxed, sendable future, as the runtime-supplied traits return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Cloneable cancellation flag; every clone observes the same cancellation.
#[derive(Clone, Default)]
pub struct CancellationToken {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    cancelled: AtomicBool,
    wakers: Mutex<Vec<Waker>>,
}

impl std::fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancellationToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl CancellationToken {
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks the token cancelled and wakes every waiter. Idempotent.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        let wakers = std::mem::take(&mut *lock(&self.inner.wakers));
        for waker in wakers {
            waker.wake();
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Completes once the token is cancelled.
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled { token: self }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding this lock cannot leave the waker list inconsistent.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Future returned by [`CancellationToken::cancelled`].
pub struct Cancelled<'a> {
    token: &'a CancellationToken,
}

impl Future for Cancelled<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.token.is_cancelled() {
            return Poll::Ready(());
        }
        let mut wakers = lock(&self.token.inner.wakers);
        // Re-check under the lock: `cancel` sets the flag before taking the list.
        if self.token.is_cancelled() {
            return Poll::Ready(());
        }
        if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// Timers come from the runtime (tokio in the worker, anything in tests).
pub trait Timer: Send + Sync {
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
}

/// Sleeps for `duration` unless `token` is cancelled first. Returns `true` if cancelled.
pub async fn sleep_or_cancel(
    timer: &dyn Timer,
    token: &CancellationToken,
    duration: Duration,
) -> bool {
    let sleep = timer.sleep(duration);
    let cancelled = token.cancelled();
    Race {
        first: sleep,
        second: Box::pin(cancelled),
    }
    .await
}

/// Polls two futures; yields `false` if the first finished first, `true` for the second.
struct Race<'a> {
    first: BoxFuture<'static, ()>,
    second: Pin<Box<Cancelled<'a>>>,
}

impl Future for Race<'_> {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        if self.second.as_mut().poll(cx).is_ready() {
            return Poll::Ready(true);
        }
        if self.first.as_mut().poll(cx).is_ready() {
            return Poll::Ready(false);
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag() {
        let t = CancellationToken::new();
        let c = t.clone();
        assert!(!c.is_cancelled());
        t.cancel();
        assert!(c.is_cancelled());
    }
}
