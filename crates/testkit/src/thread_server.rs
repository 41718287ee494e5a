//! A stand-in server on a loopback port, served from a thread of its own so synchronous
//! tests (which run the binary as a child) and async ones alike can use it. Every mock of
//! this crate that is not tied to the caller's runtime starts this way.

use std::future::Future;
use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::error::TestkitError;

/// Binds `addr` on the caller's thread (so a bind error is reported at once), ready for
/// tokio; returns the address it got (port 0 picks one).
pub(crate) fn bind(addr: SocketAddr) -> Result<(std::net::TcpListener, SocketAddr), TestkitError> {
    let listener = std::net::TcpListener::bind(addr)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|source| TestkitError::Bind { addr, source })?;
    let addr = listener
        .local_addr()
        .map_err(|source| TestkitError::Bind { addr, source })?;
    Ok((listener, addr))
}

/// Runs `serve(listener)` on a current-thread runtime in a thread named `name` until the
/// returned sender fires or is dropped.
pub(crate) fn serve_on_thread<F, Fut>(
    name: &str,
    listener: std::net::TcpListener,
    serve: F,
) -> Result<(oneshot::Sender<()>, std::thread::JoinHandle<()>), TestkitError>
where
    F: FnOnce(TcpListener) -> Fut + Send + 'static,
    Fut: Future<Output = ()>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(TestkitError::Runtime)?;
    let (stop, stopped) = oneshot::channel();
    let thread = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = TcpListener::from_std(listener) else {
                    return;
                };
                tokio::select! {
                    () = serve(listener) => {}
                    _ = stopped => {}
                }
            });
        })
        .map_err(TestkitError::Runtime)?;
    Ok((stop, thread))
}
