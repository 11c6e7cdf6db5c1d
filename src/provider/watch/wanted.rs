//! Watches started only once something needs them. Crossplane v2's
//! provider role grants no Namespaces, Deployments or Jobs: a provider that
//! never provisions a proxy, and whose instances admit tenants by name,
//! must not list or watch them at all (each denied list would be retried
//! for good). So the Namespace watch starts with the first label selector
//! that needs a namespace's labels, and the workload watches with the
//! first provisioned instance.

use futures::{Stream, StreamExt};
use tokio::sync::watch;

/// Whether a watch is wanted yet; clones share it.
#[derive(Clone, Debug)]
pub struct Wanted(watch::Sender<bool>);

impl Default for Wanted {
    fn default() -> Self {
        Self(watch::channel(false).0)
    }
}

impl Wanted {
    /// From now on (once is enough).
    pub fn want(&self) {
        self.0
            .send_if_modified(|wanted| !std::mem::replace(wanted, true));
    }

    pub fn is_wanted(&self) -> bool {
        *self.0.borrow()
    }

    /// `make()`'s stream, made and polled only once [`Wanted::want`] was
    /// called; never, if it never is.
    pub fn stream<S, F>(&self, make: F) -> impl Stream<Item = S::Item> + Send + 'static
    where
        F: FnOnce() -> S + Send + 'static,
        S: Stream + Send + 'static,
    {
        let mut wanted = self.0.subscribe();
        futures::stream::once(async move {
            // Never wanted (the sender is kept by the controllers for as
            // long as they run): nothing is made.
            wanted.wait_for(|w| *w).await.is_ok().then(make)
        })
        .filter_map(std::future::ready)
        .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stream_starts_only_once_wanted() {
        let wanted = Wanted::default();
        let made = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = made.clone();
        let mut stream = Box::pin(wanted.stream(move || {
            seen.store(true, std::sync::atomic::Ordering::SeqCst);
            futures::stream::iter([1, 2])
        }));
        let early = tokio::time::timeout(std::time::Duration::from_millis(50), stream.next()).await;
        assert!(early.is_err(), "nothing before it is wanted");
        assert!(
            !made.load(std::sync::atomic::Ordering::SeqCst),
            "not even made"
        );
        wanted.want();
        wanted.want();
        assert!(wanted.is_wanted());
        assert_eq!(stream.next().await, Some(1));
        assert_eq!(stream.next().await, Some(2));
        assert_eq!(stream.next().await, None);
    }
}
