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
