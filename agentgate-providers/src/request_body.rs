//! A request body as a list of chunks, so the large encodings a client
//! keeps across steps (see [`crate::encode_cache`]) go out as they are,
//! without being copied into a fresh buffer the size of the whole history
//! at every step.
//!
//! The body is serialised as usual (serde_json into a [`ChunkWriter`]);
//! the writer knows the memory of the kept encodings it was given
//! ([`ChunkWriter::new`]) and, when serde_json writes exactly one of
//! them (a raw value is written in one piece), it references that memory
//! as a chunk instead of copying it. Everything else is copied into the
//! chunk being built. The chunks are sent with their exact total length
//! (`content-length`, as for any other body).

use std::collections::HashMap;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use serde_json::value::RawValue;

/// Encodings smaller than this are copied: a chunk of their own would
/// cost more (an entry in the writev list) than the copy.
pub(crate) const SHARE_AT_LEAST: usize = 4096;

/// The bytes a client sends, in order.
#[derive(Debug)]
pub(crate) struct RequestBody {
    chunks: Vec<Bytes>,
    len: usize,
}

impl From<Vec<u8>> for RequestBody {
    fn from(bytes: Vec<u8>) -> Self {
        let len = bytes.len();
        RequestBody {
            chunks: vec![Bytes::from(bytes)],
            len,
        }
    }
}

impl RequestBody {
    /// The body's length in bytes.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The body in one buffer (tests compare it with the reference body).
    #[cfg(test)]
    pub(crate) fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        for chunk in &self.chunks {
            out.extend_from_slice(chunk);
        }
        out
    }

    /// The body for reqwest: one buffer as is, several as a stream with
    /// its exact length.
    pub(crate) fn into_reqwest(mut self) -> reqwest::Body {
        if self.chunks.len() == 1 {
            return reqwest::Body::from(self.chunks.remove(0));
        }
        reqwest::Body::wrap(Chunks {
            remaining: self.len as u64,
            chunks: self.chunks.into(),
        })
    }
}

/// A client that writes request bodies.
pub(crate) trait WritesBody {
    /// The bytes this client sends for `request`.
    fn request_chunks(&self, request: &agentgate_core::ModelRequest) -> RequestBody;

    /// [`request_chunks`](Self::request_chunks) in one buffer (tests
    /// compare it with the reference body).
    #[cfg(test)]
    fn request_bytes(&self, request: &agentgate_core::ModelRequest) -> Vec<u8> {
        self.request_chunks(request).to_vec()
    }
}

/// The chunks as an HTTP body of known length.
struct Chunks {
    chunks: VecDeque<Bytes>,
    remaining: u64,
}

impl http_body::Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        let next = self.chunks.pop_front();
        if let Some(chunk) = &next {
            self.remaining = self.remaining.saturating_sub(chunk.len() as u64);
        }
        Poll::Ready(next.map(|chunk| Ok(http_body::Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.remaining)
    }
}

/// Encodings that hold raw JSON values a body may reference.
pub(crate) trait RawParts: Send + Sync + 'static {
    /// The raw values, in order.
    fn raw_parts(&self) -> &[Box<RawValue>];
}

impl RawParts for Vec<Box<RawValue>> {
    fn raw_parts(&self) -> &[Box<RawValue>] {
        self
    }
}

/// One raw value of a kept encoding, kept alive by its `Arc` for as long
/// as the body references it.
struct RawPart<E> {
    encoding: Arc<E>,
    index: usize,
}

impl<E: RawParts> AsRef<[u8]> for RawPart<E> {
    fn as_ref(&self) -> &[u8] {
        self.encoding
            .raw_parts()
            .get(self.index)
            .map(|raw| raw.get().as_bytes())
            .unwrap_or_default()
    }
}

/// The raw values of `encodings` worth sending without a copy (at least
/// [`SHARE_AT_LEAST`] bytes), as chunks referencing their memory.
pub(crate) fn shareable<E: RawParts>(encodings: &[Arc<E>]) -> Vec<Bytes> {
    let mut out = Vec::new();
    for encoding in encodings {
        for (index, raw) in encoding.raw_parts().iter().enumerate() {
            if raw.get().len() >= SHARE_AT_LEAST {
                out.push(Bytes::from_owner(RawPart {
                    encoding: Arc::clone(encoding),
                    index,
                }));
            }
        }
    }
    out
}

/// An `io::Write` that builds a [`RequestBody`]: it copies what it is
/// given, except a write of exactly the memory of a shared chunk, which
/// becomes a chunk of its own.
pub(crate) struct ChunkWriter {
    done: Vec<Bytes>,
    current: Vec<u8>,
    shared: HashMap<(usize, usize), Bytes>,
    /// The length of the shortest of `shared` (`usize::MAX` for none).
    shortest_shared: usize,
    len: usize,
    copied: usize,
}

impl ChunkWriter {
    /// A writer that references `shared` when they are written, and
    /// starts its copies with room for `capacity` bytes.
    pub(crate) fn new(shared: Vec<Bytes>, capacity: usize) -> Self {
        let shortest_shared = shared.iter().map(Bytes::len).min().unwrap_or(usize::MAX);
        let shared = shared
            .into_iter()
            .map(|chunk| ((chunk.as_ptr() as usize, chunk.len()), chunk))
            .collect();
        ChunkWriter {
            done: Vec::new(),
            current: Vec::with_capacity(capacity),
            shared,
            shortest_shared,
            len: 0,
            copied: 0,
        }
    }

    /// How many bytes were copied (the next body's copies start so big).
    pub(crate) fn copied(&self) -> usize {
        self.copied
    }

    /// The body written.
    pub(crate) fn finish(mut self) -> RequestBody {
        if !self.current.is_empty() || self.done.is_empty() {
            self.done
                .push(Bytes::from(std::mem::take(&mut self.current)));
        }
        RequestBody {
            chunks: self.done,
            len: self.len,
        }
    }
}

impl std::io::Write for ChunkWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.len += buf.len();
        // serde_json writes many small pieces; only one as long as a
        // shared chunk can be one (no hashing for the others).
        let shared = if buf.len() >= self.shortest_shared {
            self.shared.get(&(buf.as_ptr() as usize, buf.len()))
        } else {
            None
        };
        match shared {
            Some(chunk) if !buf.is_empty() => {
                if !self.current.is_empty() {
                    let copied = std::mem::take(&mut self.current);
                    self.done.push(Bytes::from(copied));
                }
                self.done.push(chunk.clone());
            }
            _ => {
                self.copied += buf.len();
                self.current.extend_from_slice(buf);
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn raw(text: &str) -> Box<RawValue> {
        serde_json::value::to_raw_value(text).unwrap()
    }

    #[test]
    fn kept_encodings_are_referenced_and_the_rest_copied() {
        let big = "x".repeat(SHARE_AT_LEAST * 2);
        let encoding: Arc<Vec<Box<RawValue>>> = Arc::new(vec![raw("small"), raw(&big)]);
        let shared = shareable(std::slice::from_ref(&encoding));
        assert_eq!(shared.len(), 1, "only the large value is shared");
        let mut writer = ChunkWriter::new(shared, 64);
        let values: Vec<&RawValue> = encoding.iter().map(|r| &**r).collect();
        serde_json::to_writer(&mut writer, &serde_json::json!({"a": 1})).unwrap();
        serde_json::to_writer(&mut writer, &values).unwrap();
        writer.flush().unwrap();
        let body = writer.finish();
        let mut expected = b"{\"a\":1}".to_vec();
        expected.extend(serde_json::to_vec(&values).unwrap());
        assert_eq!(body.to_vec(), expected);
        assert_eq!(body.len(), expected.len());
        // The large value went out as the kept memory itself.
        let kept = encoding[1].get().as_ptr();
        assert!(body.chunks.iter().any(|c| c.as_ptr() == kept));
    }

    #[test]
    fn a_body_without_shared_chunks_is_one_buffer() {
        let mut writer = ChunkWriter::new(Vec::new(), 0);
        writer.write_all(b"{}").unwrap();
        let body = writer.finish();
        assert_eq!(body.chunks.len(), 1);
        assert_eq!(body.to_vec(), b"{}");
        let empty = ChunkWriter::new(Vec::new(), 0).finish();
        assert_eq!(empty.to_vec(), b"");
    }
}
