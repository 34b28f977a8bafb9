//! Answers of several replicas taken as they come.
use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::Poll;

type Waiting<'a, N, A> = (N, Pin<Box<dyn Future<Output = A> + Send + 'a>>);

/// Requests in flight to several replicas. Every request is polled at the first
/// [`Gather::next`], so each is sent even if the caller stops at a quorum.
pub(crate) struct Gather<'a, N, A> {
    waiting: Vec<Option<Waiting<'a, N, A>>>,
    ready: VecDeque<(N, A)>,
}

impl<'a, N, A> Gather<'a, N, A> {
    pub(crate) fn new() -> Self {
        Gather {
            waiting: Vec::new(),
            ready: VecDeque::new(),
        }
    }

    pub(crate) fn push(&mut self, node: N, answer: impl Future<Output = A> + Send + 'a) {
        self.waiting.push(Some((node, Box::pin(answer))));
    }

    /// The next answer to arrive, with its replica; `None` once all have.
    pub(crate) async fn next(&mut self) -> Option<(N, A)> {
        poll_fn(|cx| {
            for slot in self.waiting.iter_mut() {
                let Some((_, answer)) = slot else { continue };
                if let Poll::Ready(answer) = answer.as_mut().poll(cx) {
                    if let Some((node, _)) = slot.take() {
                        self.ready.push_back((node, answer));
                    }
                }
            }
            match self.ready.pop_front() {
                Some(answer) => Poll::Ready(Some(answer)),
                None if self.waiting.iter().all(Option::is_none) => Poll::Ready(None),
                None => Poll::Pending,
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::pin;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Waker};

    /// Ready at its `polls`-th poll; counts every poll in `seen`.
    struct After {
        polls: usize,
        seen: Arc<AtomicUsize>,
    }

    impl Future for After {
        type Output = usize;

        fn poll(mut self: Pin<&mut Self>, _cx: &mut std::task::Context<'_>) -> Poll<usize> {
            self.seen.fetch_add(1, Ordering::SeqCst);
            self.polls -= 1;
            match self.polls {
                0 => Poll::Ready(self.seen.load(Ordering::SeqCst)),
                _ => Poll::Pending,
            }
        }
    }

    #[test]
    fn answers_come_as_they_are_ready_and_every_request_is_polled_at_once() {
        let seen: Vec<Arc<AtomicUsize>> = (0..3).map(|_| Arc::default()).collect();
        let mut gather = Gather::new();
        for (i, (node, polls)) in [("a", 3), ("b", 1), ("c", 2)].into_iter().enumerate() {
            let seen = seen[i].clone();
            gather.push(node, After { polls, seen });
        }
        let mut cx = Context::from_waker(Waker::noop());
        let mut order = Vec::new();
        loop {
            let next = pin!(gather.next()).poll(&mut cx);
            match next {
                Poll::Ready(Some((node, _))) => order.push(node),
                Poll::Ready(None) => break,
                Poll::Pending => {}
            }
            // After the first call every request has been polled, including those behind
            // the first to be ready.
            assert!(seen.iter().all(|s| s.load(Ordering::SeqCst) >= 1));
        }
        assert_eq!(order, ["b", "c", "a"]);
    }
}
