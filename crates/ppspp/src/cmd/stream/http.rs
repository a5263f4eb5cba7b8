//! The HTTP/1.1 side of the gateway: `GET`/`HEAD /<swarm-id>` serves the
//! content with byte ranges (RFC 7233), `GET /<swarm-id>/stats` the live
//! status as JSON.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use ppspp_http::range::{self, Answer};
use ppspp_http::target::{Resource, Target};
use tokio::sync::mpsc;

use super::conns::Busy;
use super::gateway::Gateway;
use super::stats;

/// Pieces buffered between a response's pump and its connection: the
/// pump waits (and the playhead stays put) while the player does not read.
/// One is enough to keep the connection busy (the pump makes the next
/// while hyper writes this one), and a client that reads nothing holds
/// only it and what hyper queued (issue 21, item 4).
const PIECES_IN_FLIGHT: usize = 1;

/// A response body: fixed bytes, or pieces streamed as chunks verify.
#[derive(Debug)]
pub enum Body {
    /// All of it at once (possibly nothing).
    Full(Option<Bytes>),
    /// Pieces from a pump; the end of the channel ends the body.
    Stream(mpsc::Receiver<Bytes>),
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Body::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Body::Stream(rx) => rx.poll_recv(cx).map(|p| p.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Body::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Full(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Body::Stream(_) => SizeHint::default(),
        }
    }
}

impl Body {
    /// This body, counted as a response in progress on its connection
    /// until it is dropped (sent, or the connection gone).
    pub fn tracked(self, busy: Busy) -> Tracked {
        Tracked {
            body: self,
            _busy: busy,
        }
    }
}

/// A [`Body`] that keeps its connection marked busy.
#[derive(Debug)]
pub struct Tracked {
    body: Body,
    _busy: Busy,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

pub fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(Body::Full(Some(Bytes::from(format!("{text}\n")))));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

impl super::server::Site for Gateway {
    fn route(
        self: Arc<Self>,
        req: Request<Incoming>,
    ) -> Pin<Box<dyn std::future::Future<Output = Response<Body>> + Send>> {
        Box::pin(route(self, req))
    }
}

/// `405` for anything but GET and HEAD, the only methods served.
pub fn refuse_method<B>(req: &Request<B>) -> Option<Response<Body>> {
    if req.method() == Method::GET || req.method() == Method::HEAD {
        return None;
    }
    let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD");
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    Some(r)
}

/// The answer to one request.
pub async fn route(gw: Arc<Gateway>, req: Request<Incoming>) -> Response<Body> {
    let resource = match Target::parse(req.uri().path()) {
        Some(t) if t.swarm.eq_ignore_ascii_case(&gw.id) => t.resource,
        _ => return plain(StatusCode::NOT_FOUND, "no such swarm here"),
    };
    if let Some(refusal) = refuse_method(&req) {
        return refusal;
    }
    if resource == Resource::Stats {
        return match stats::document(&gw).await {
            Some(doc) => {
                let mut r = Response::new(Body::Full(Some(Bytes::from(doc.to_string()))));
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                r.headers_mut()
                    .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
                r
            }
            None => plain(StatusCode::SERVICE_UNAVAILABLE, "the node has stopped"),
        };
    }
    if resource != Resource::Content {
        return plain(StatusCode::NOT_FOUND, "not a live stream: no playlist here");
    }
    content(gw, &req).await
}

/// The content, whole or one range of it.
async fn content(gw: Arc<Gateway>, req: &Request<Incoming>) -> Response<Body> {
    // The length goes in Content-Length and Content-Range before any byte,
    // so a request waits until it is known.
    let Some(len) = gw.content_len().await else {
        return plain(StatusCode::SERVICE_UNAVAILABLE, "the node has stopped");
    };
    // RFC 7233 §3.1: Range applies to GET only; a HEAD gets the whole
    // representation's headers.
    let header = (req.method() == Method::GET)
        .then(|| req.headers().get(header::RANGE))
        .flatten()
        .map(HeaderValue::as_bytes);
    let (status, first, last) = match range::answer(header, len) {
        Answer::Full => (StatusCode::OK, 0, len - 1),
        Answer::Partial { first, last } => (StatusCode::PARTIAL_CONTENT, first, last),
        Answer::Unsatisfiable => {
            // RFC 7233 §4.4: say the current length in an unsatisfied
            // Content-Range.
            let mut r = plain(StatusCode::RANGE_NOT_SATISFIABLE, "range not satisfiable");
            if let Ok(v) = HeaderValue::from_str(&range::unsatisfied_range(len)) {
                r.headers_mut().insert(header::CONTENT_RANGE, v);
            }
            r.headers_mut()
                .insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
            return r;
        }
    };
    let body = if req.method() == Method::HEAD {
        // A HEAD says nothing about where playback is: the playhead stays.
        Body::Full(None)
    } else {
        let seq = gw.begin(first);
        let (tx, rx) = mpsc::channel(PIECES_IN_FLIGHT);
        tokio::spawn(gw.clone().pump(seq, first, last, tx));
        Body::Stream(rx)
    };
    let mut r = Response::new(body);
    *r.status_mut() = status;
    let h = r.headers_mut();
    // RFC 7233 §2.3: tell players they may seek with ranges.
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(last - first + 1));
    if status == StatusCode::PARTIAL_CONTENT {
        if let Ok(v) = HeaderValue::from_str(&range::content_range(first, last, len)) {
            h.insert(header::CONTENT_RANGE, v);
        }
    }
    r
}
