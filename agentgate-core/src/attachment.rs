//! Files attached to a prompt ([`attach_file`]): an image becomes a
//! [`FilePart`] holding a `data:` URL; a text file becomes synthetic text
//! parts with its content, as opencode sends `--file` text files.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::message::{FilePart, Part};

/// Largest image [`attach_file`] reads (5 MiB, the per-image limit of
/// Anthropic's API; an image's `data:` URL is a third larger).
pub const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;
/// Largest text file [`attach_file`] reads (256 KiB).
pub const MAX_TEXT_BYTES: u64 = 256 * 1024;

/// Why a file could not be attached. The messages name the path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AttachmentError {
    /// No such file.
    #[error("{}: no such file", .0.display())]
    NotFound(PathBuf),
    /// A directory, device, FIFO or socket.
    #[error("{}: not a regular file", .0.display())]
    NotAFile(PathBuf),
    /// Over the size limit.
    #[error("{}: {size} bytes is over the {limit}-byte limit for {kind}", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
        /// `an image` or `a text file`.
        kind: &'static str,
    },
    /// Neither text nor a supported image.
    #[error(
        "{}: neither a text file nor a png, jpeg, gif or webp image", .0.display()
    )]
    Unsupported(PathBuf),
    /// Reading failed.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// The MIME type of an image the models accept (png, jpeg, gif, webp),
/// from its first bytes, or from the extension of `path` when the content
/// is not recognised and is not text either (a file named `.png` holding
/// text is text).
///
/// ```
/// use std::path::Path;
/// use agentgate_core::image_mime;
/// assert_eq!(image_mime(Path::new("x"), b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
/// assert_eq!(image_mime(Path::new("x.rs"), b"fn main() {}"), None);
/// ```
pub fn image_mime(path: &Path, bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some("image/png");
    }
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Some("image/jpeg");
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        return Some("image/gif");
    }
    if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        return Some("image/webp");
    }
    let text = !bytes.contains(&0)
        && std::str::from_utf8(bytes).map_or_else(|e| e.error_len().is_none(), |_| true);
    if text {
        return None;
    }
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    match extension.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        _ => None,
    }
}

/// Whether `parts` hold an image (a model without image input cannot take
/// them).
pub fn has_images(parts: &[Part]) -> bool {
    parts
        .iter()
        .any(|part| matches!(part, Part::File(file) if file.is_image()))
}

/// The parts that attach the file at `path` to a prompt (as opencode's
/// `run --file`):
///
/// - a png, jpeg, gif or webp image (by content, else by extension):
///   one [`Part::File`] with a base64 `data:` URL, at most
///   [`MAX_IMAGE_BYTES`];
/// - a text file (UTF-8, no NUL byte): two synthetic text parts — `Called
///   the Read tool with the following input: {"filePath":…}` and the
///   content as `N: line` lines — then a `text/plain` [`Part::File`]
///   recording the file (not sent to the model), at most
///   [`MAX_TEXT_BYTES`];
/// - anything else is an error, as are missing and over-large files.
///
/// ```no_run
/// # async fn demo(engine: agentgate_core::Engine, session_id: &str) -> Result<(), Box<dyn std::error::Error>> {
/// use agentgate_core::{attach_file, CancellationToken, Part};
/// let mut parts = vec![Part::text("What is wrong in this screenshot?")];
/// parts.extend(attach_file("screenshot.png".as_ref())?);
/// let turn = engine.prompt_with(session_id, parts, CancellationToken::new()).await?.into_result()?;
/// println!("{}", turn.text());
/// # Ok(()) }
/// ```
pub fn attach_file(path: &Path) -> Result<Vec<Part>, AttachmentError> {
    let fail = |source: std::io::Error| AttachmentError::Read {
        path: path.to_path_buf(),
        source,
    };
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(AttachmentError::NotFound(path.to_path_buf()));
        }
        Err(e) => return Err(fail(e)),
    };
    if !metadata.is_file() {
        return Err(AttachmentError::NotAFile(path.to_path_buf()));
    }
    let mut file = std::fs::File::open(path).map_err(fail)?;
    let mut head = Vec::with_capacity(16);
    (&mut file).take(16).read_to_end(&mut head).map_err(fail)?;
    let image = image_mime(path, &head);
    let (limit, kind) = match image {
        Some(_) => (MAX_IMAGE_BYTES, "an image"),
        None => (MAX_TEXT_BYTES, "a text file"),
    };
    let too_large = |size| AttachmentError::TooLarge {
        path: path.to_path_buf(),
        size,
        limit,
        kind,
    };
    if metadata.len() > limit {
        return Err(too_large(metadata.len()));
    }
    // At most `limit + 1` bytes, even if the file grows meanwhile.
    let mut bytes = head;
    file.take(limit + 1 - bytes.len() as u64)
        .read_to_end(&mut bytes)
        .map_err(fail)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    let name = path.to_string_lossy().into_owned();
    if let Some(mime) = image {
        return Ok(vec![Part::File(
            FilePart::data(mime, &bytes).with_filename(name),
        )]);
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => text,
        _ => return Err(AttachmentError::Unsupported(path.to_path_buf())),
    };
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let input = serde_json::json!({ "filePath": absolute.to_string_lossy() });
    let numbered: String = text
        .lines()
        .enumerate()
        .map(|(i, line)| format!("{}: {line}\n", i + 1))
        .collect();
    let record =
        FilePart::new("text/plain", format!("file://{}", absolute.display())).with_filename(name);
    Ok(vec![
        synthetic(format!(
            "Called the Read tool with the following input: {input}"
        )),
        synthetic(numbered),
        Part::File(record),
    ])
}

fn synthetic(text: String) -> Part {
    Part::Text {
        id: crate::ids::ascending("prt"),
        text,
        synthetic: true,
        provider_metadata: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str, bytes: &[u8]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("agentgate-attach-{}", crate::ids::now_ms()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn images_are_found_by_content_then_extension() {
        let webp = b"RIFF\0\0\0\0WEBPVP8 ";
        assert_eq!(image_mime(Path::new("a.bin"), webp), Some("image/webp"));
        assert_eq!(
            image_mime(Path::new("a.txt"), b"GIF89a.."),
            Some("image/gif")
        );
        assert_eq!(
            image_mime(Path::new("a"), &[0xFF, 0xD8, 0xFF, 0xE0]),
            Some("image/jpeg")
        );
        assert_eq!(
            image_mime(Path::new("photo.JPG"), b"\0\x01"),
            Some("image/jpeg")
        );
        assert_eq!(image_mime(Path::new("fake.png"), b"just text"), None);
        assert_eq!(image_mime(Path::new("a.svg"), b"<svg/>"), None);
    }

    #[test]
    fn an_image_is_a_data_url_and_text_is_inlined() {
        let png = temp("dot.png", b"\x89PNG\r\n\x1a\nrest");
        let parts = attach_file(&png).unwrap();
        let [Part::File(file)] = parts.as_slice() else {
            panic!("{parts:?}");
        };
        assert_eq!(file.mime, "image/png");
        assert_eq!(file.url, "data:image/png;base64,iVBORw0KGgpyZXN0");
        assert!(has_images(&parts));

        let notes = temp("notes.md", b"alpha\nbeta\n");
        let parts = attach_file(&notes).unwrap();
        assert_eq!(parts.len(), 3);
        assert!(matches!(&parts[0], Part::Text { text, synthetic: true, .. }
            if text.starts_with("Called the Read tool") && text.contains("notes.md")));
        assert!(matches!(&parts[1], Part::Text { text, .. } if text == "1: alpha\n2: beta\n"));
        assert!(matches!(&parts[2], Part::File(f) if f.mime == "text/plain" && !f.is_sent()));
        assert!(!has_images(&parts));
    }

    #[test]
    fn missing_binary_and_large_files_are_errors_naming_the_path() {
        let missing = std::env::temp_dir().join("agentgate-no-such-file");
        let error = attach_file(&missing).unwrap_err();
        assert!(matches!(error, AttachmentError::NotFound(_)));
        assert!(error.to_string().contains("agentgate-no-such-file"));

        let binary = temp("blob", b"ab\0cd");
        assert!(matches!(
            attach_file(&binary),
            Err(AttachmentError::Unsupported(_))
        ));

        let big = temp("big.txt", &vec![b'a'; MAX_TEXT_BYTES as usize + 1]);
        let error = attach_file(&big).unwrap_err();
        assert!(
            error.to_string().contains("over the 262144-byte limit"),
            "{error}"
        );
    }
}
