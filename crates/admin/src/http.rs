//! The HTTP/1.1 server: accepts connections on the admin listener, refuses requests the
//! [`Access`] checks reject, reads each request's body (at most [`MAX_BODY`] bytes), hands it
//! to the [`Api`], and stops gracefully.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE, WWW_AUTHENTICATE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;

use crate::access::Access;
use crate::error::ApiError;
use crate::node::AdminNode;
use crate::router::{error_reply, Api, Reply};

/// Largest request body accepted.
const MAX_BODY: usize = 64 * 1024;
/// How long shutdown waits for requests in flight.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves the admin API on `listener` until `shutdown` completes, requiring `token` (when
/// given) on every request.
pub async fn serve(
    listener: TcpListener,
    node: Arc<AdminNode>,
    token: Option<String>,
    shutdown: impl Future<Output = ()>,
) {
    let access = match listener.local_addr() {
        Ok(bound) => Arc::new(Access::new(bound, token)),
        Err(e) => {
            tracing::error!("admin API: cannot tell its address ({e}); not serving");
            return;
        }
    };
    if let Some(warning) = access.warnings() {
        tracing::warn!("{warning}");
    }
    let api = Arc::new(Api::new(node));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let (api, access) = (api.clone(), access.clone());
                    let service = service_fn(move |req| respond(api.clone(), access.clone(), req));
                    let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
                    let conn = graceful.watch(conn);
                    tokio::spawn(async move {
                        if let Err(e) = conn.await {
                            tracing::debug!("admin connection: {e}");
                        }
                    });
                }
                Err(e) => tracing::warn!("admin API accept failed: {e}"),
            },
            _ = &mut shutdown => break,
        }
    }
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("admin API requests still running at shutdown");
    }
}

async fn respond(
    api: Arc<Api>,
    access: Arc<Access>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = request.into_parts();
    if let Err(refused) = access.check(&parts.method, &parts.headers) {
        tracing::debug!(
            "admin API refused {} {}: {}",
            parts.method,
            parts.uri,
            refused.message
        );
        return Ok(to_response(error_reply(refused)));
    }
    let reply = match Limited::new(body, MAX_BODY).collect().await {
        Ok(body) => {
            api.handle(&parts.method, parts.uri.path(), &body.to_bytes())
                .await
        }
        Err(e) => error_reply(ApiError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            message: e.to_string(),
        }),
    };
    Ok(to_response(reply))
}

fn to_response(reply: Reply) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(reply.body));
    *response.status_mut() = reply.status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(reply.content_type));
    if reply.status == StatusCode::UNAUTHORIZED {
        headers.insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}
