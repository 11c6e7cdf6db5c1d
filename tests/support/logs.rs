//! Every log line the process writes, captured: a test that asserts a
//! secret never reaches the logs reads them here. The subscriber is global
//! (the provider's controllers log from the runtime's threads), installed
//! once per test binary at `debug` for everything, so it holds the lines
//! of every test running alongside too. Hence the tests that read it are a
//! binary of their own (`tests/logged/`), whose tests each look for secret
//! values of their own: in `tests/integration/` the subscriber would log,
//! and keep, every line of every other test as well.

#![allow(dead_code)] // each test binary uses a different part of the support code

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

#[derive(Clone, Default)]
pub struct Logs(Arc<Mutex<Vec<u8>>>);

impl Logs {
    /// Everything logged since the capture began.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The process's captured logs, capture starting with the first call.
/// `None` when another subscriber was installed first (`TEST_LOG`).
pub fn capture() -> Option<Logs> {
    static LOGS: OnceLock<Option<Logs>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Logs::default();
        let writer = logs.clone();
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("debug"))
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .try_init()
            .ok()
            .map(|()| logs)
    })
    .clone()
}

/// A provider world (see [`super::provider::world`]) with the logs
/// captured from before it starts, and its CRDs guarded.
pub async fn logged_world(
    prefix: &str,
) -> Option<(super::provider::World, Logs, super::crd_guard::CrdGuard)> {
    let logs = capture().expect("no other log subscriber (TEST_LOG unset)");
    let world = super::provider::world(prefix).await?;
    let guard = super::crd_guard::CrdGuard::start(&world.kube);
    Some((world, logs, guard))
}
