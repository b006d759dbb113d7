//! Images the model sees: a file's bytes checked and carried as base64
//! with their media type, for `read_file` of an image, prompt images and
//! MCP image results alike.
//!
//! An image is known by its magic bytes, never by its name: a PNG called
//! `shot.txt` is an image, an SVG is XML text. What reaches a provider has
//! passed [`Image::from_bytes`]: one of the four formats every image-taking
//! API reads (PNG, JPEG, GIF, WebP), whole (a cut-off file is refused, not
//! sent to fail at the API with a 400 that ends the run), within
//! [`MAX_IMAGE_BYTES`] and [`MAX_IMAGE_SIDE`]. Each refusal is one plain
//! sentence for the model (or the user) saying what to do instead.

use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// The largest image sent, in bytes before encoding. Anthropic's Messages
/// API refuses an image whose base64 is over 5 MB (5,242,880 bytes);
/// 3,750,000 bytes encode to 5,000,000. OpenAI's limits are wider (50 MB a
/// request), so this one cap serves every provider.
pub const MAX_IMAGE_BYTES: u64 = 3_750_000;

/// The longest side, in pixels, Anthropic's API takes (8000 px).
pub const MAX_IMAGE_SIDE: u32 = 8000;

/// What one image costs in the context, in tokens, for the estimates:
/// Anthropic bills about width × height / 750 and scales an image down to
/// about 1.15 megapixels (1,600 tokens) before the model sees it.
pub const IMAGE_TOKENS: u64 = 1_600;

/// An image as the conversation carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The file's bytes, base64 (standard alphabet, padded).
    pub data: String,
}

/// The image formats the model APIs read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Png,
    Jpeg,
    Gif,
    WebP,
}

impl Format {
    /// The format the first bytes say, if they say one of the four.
    pub fn sniff(bytes: &[u8]) -> Option<Format> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Format::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(Format::Jpeg)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(Format::Gif)
        } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
            Some(Format::WebP)
        } else {
            None
        }
    }

    pub fn media_type(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Gif => "image/gif",
            Format::WebP => "image/webp",
        }
    }

    /// The format's name in a sentence.
    pub fn name(self) -> &'static str {
        match self {
            Format::Png => "PNG",
            Format::Jpeg => "JPEG",
            Format::Gif => "GIF",
            Format::WebP => "WebP",
        }
    }
}

impl Image {
    /// The image in `bytes`, checked; `name` is how the sentence of a
    /// refusal names it (a path, "the pasted image"). `Err` is that
    /// sentence: not an image of the four formats, cut off or damaged, too
    /// many bytes, too many pixels.
    pub fn from_bytes(bytes: &[u8], name: &str) -> Result<Image, String> {
        let Some(format) = Format::sniff(bytes) else {
            return Err(format!("{name} is not a PNG, JPEG, GIF or WebP image (the only image formats sent to the model)."));
        };
        if bytes.len() as u64 > MAX_IMAGE_BYTES {
            return Err(too_large(name, format, bytes.len() as u64));
        }
        let (width, height) = dimensions(format, bytes)
            .map_err(|damage| format!("{name} is a {} image whose data is cut off or damaged ({damage}), so it cannot be shown.", format.name()))?;
        if width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE {
            return Err(format!(
                "{name} is a {width}x{height}-pixel {} image, over the {MAX_IMAGE_SIDE}-pixel side the model APIs take. Make a smaller copy (for example `magick {name} -resize 1568x1568 smaller.png`) and use that.",
                format.name()
            ));
        }
        Ok(Image { media_type: format.media_type().to_string(), data: base64::engine::general_purpose::STANDARD.encode(bytes) })
    }

    /// An image a client sent as base64 (an ACP image block, the editor's
    /// pasted screenshot), checked as a file's bytes are; one over the
    /// limit is refused before it is decoded.
    pub fn from_base64(data: &str, name: &str) -> Result<Image, String> {
        if data.len() as u64 > MAX_IMAGE_BYTES / 3 * 4 + 4 {
            return Err(format!("{name} is over the {MAX_IMAGE_BYTES}-byte limit for an image sent to the model: attach a smaller copy."));
        }
        let bytes = base64::engine::general_purpose::STANDARD.decode(data.trim()).map_err(|e| format!("{name}: its data is not base64 ({e})."))?;
        Image::from_bytes(&bytes, name)
    }

    /// `data:image/png;base64,…`, as the OpenAI APIs take an image.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }

    /// The decoded size, in bytes.
    pub fn byte_len(&self) -> usize {
        self.data.len() / 4 * 3 - self.data.bytes().rev().take_while(|b| *b == b'=').count()
    }

    /// What stands in for the image where it is not sent: the media type,
    /// the size, and why (`because`).
    pub fn placeholder(&self, because: &str) -> String {
        format!("[image {}, {} KB: {because}]", self.media_type, self.byte_len().div_ceil(1024))
    }
}

/// The image in the regular file at `path` (called `name` in messages),
/// when its first bytes say it is one: `Ok(None)` for any other file,
/// `Err` the sentence saying why an image cannot be sent. One over
/// [`MAX_IMAGE_BYTES`] is refused before it is read.
pub fn read_file(path: &std::path::Path, name: &str) -> Result<Option<Image>, String> {
    use std::io::Read as _;
    let Ok(file) = std::fs::File::open(path) else { return Ok(None) };
    let Ok(meta) = file.metadata() else { return Ok(None) };
    if !meta.is_file() {
        return Ok(None);
    }
    let mut data = Vec::with_capacity(12);
    let mut file = file;
    if (&mut file).take(12).read_to_end(&mut data).is_err() {
        return Ok(None);
    }
    let Some(format) = Format::sniff(&data) else { return Ok(None) };
    if meta.len() > MAX_IMAGE_BYTES {
        return Err(too_large(name, format, meta.len()));
    }
    file.take(MAX_IMAGE_BYTES).read_to_end(&mut data).map_err(|e| format!("cannot read {name}: {e}"))?;
    Image::from_bytes(&data, name).map(Some)
}

/// The size in pixels of the image in `bytes`, when it is a whole one.
pub fn pixel_size(bytes: &[u8]) -> Option<(u32, u32)> {
    dimensions(Format::sniff(bytes)?, bytes).ok()
}

/// The refusal of an image over [`MAX_IMAGE_BYTES`] (also said before a
/// big file is read at all).
pub fn too_large(name: &str, format: Format, bytes: u64) -> String {
    format!(
        "{name} is a {bytes}-byte {} image, over the {MAX_IMAGE_BYTES}-byte limit for an image sent to the model. Make a smaller copy (for example `magick {name} -resize 1568x1568 smaller.png`, or save it as JPEG) and use that.",
        format.name()
    )
}

/// The image's size in pixels, from its header, after checking that the
/// file is whole: `Err` says what is missing or wrong.
fn dimensions(format: Format, bytes: &[u8]) -> Result<(u32, u32), &'static str> {
    match format {
        Format::Png => png(bytes),
        Format::Jpeg => jpeg(bytes),
        Format::Gif => gif(bytes),
        Format::WebP => webp(bytes),
    }
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn le16(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?)))
}

fn le24(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at + 3)?;
    Some(u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16)
}

/// Walk the chunks from the signature to `IEND`: a file cut anywhere ends
/// inside a chunk or before `IEND`.
fn png(bytes: &[u8]) -> Result<(u32, u32), &'static str> {
    if bytes.get(12..16) != Some(b"IHDR") {
        return Err("no IHDR header");
    }
    let (width, height) = (be32(bytes, 16).ok_or("the header is cut off")?, be32(bytes, 20).ok_or("the header is cut off")?);
    let mut at = 8usize;
    loop {
        let length = be32(bytes, at).ok_or("it ends before the IEND chunk")? as usize;
        let kind = bytes.get(at + 4..at + 8).ok_or("it ends before the IEND chunk")?;
        let end = at.checked_add(12).and_then(|n| n.checked_add(length)).ok_or("a chunk length is impossible")?;
        if end > bytes.len() {
            return Err("it ends inside a chunk");
        }
        if kind == b"IEND" {
            return Ok((width, height));
        }
        at = end;
    }
}

/// Walk the segments to the start of the scan for the frame's size; the
/// file must end with the end-of-image marker.
fn jpeg(bytes: &[u8]) -> Result<(u32, u32), &'static str> {
    // Some writers pad after the marker.
    let trimmed = &bytes[..bytes.len() - bytes.iter().rev().take_while(|b| **b == 0).count()];
    if !trimmed.ends_with(&[0xFF, 0xD9]) {
        return Err("no end-of-image marker");
    }
    let mut at = 2usize;
    let mut size = None;
    while at + 4 <= bytes.len() {
        if bytes[at] != 0xFF {
            return Err("a segment marker is missing");
        }
        let marker = bytes[at + 1];
        // Fill bytes and markers without a length.
        if marker == 0xFF {
            at += 1;
            continue;
        }
        if (0xD0..=0xD9).contains(&marker) || marker == 0x01 {
            at += 2;
            continue;
        }
        let length = usize::from(u16::from_be_bytes([bytes[at + 2], bytes[at + 3]]));
        if at + 2 + length > bytes.len() {
            return Err("it ends inside a segment");
        }
        // SOF0..SOF15, less DHT (C4), JPG (C8) and DAC (CC).
        if (0xC0..=0xCF).contains(&marker) && ![0xC4, 0xC8, 0xCC].contains(&marker) {
            let h = bytes.get(at + 5..at + 7).ok_or("the frame header is cut off")?;
            let w = bytes.get(at + 7..at + 9).ok_or("the frame header is cut off")?;
            size = Some((u32::from(u16::from_be_bytes([w[0], w[1]])), u32::from(u16::from_be_bytes([h[0], h[1]]))));
        }
        if marker == 0xDA {
            break;
        }
        at += 2 + length;
    }
    size.ok_or("no frame header before the image data")
}

fn gif(bytes: &[u8]) -> Result<(u32, u32), &'static str> {
    let size = (le16(bytes, 6).ok_or("the header is cut off")?, le16(bytes, 8).ok_or("the header is cut off")?);
    if bytes.last() != Some(&0x3B) {
        return Err("no trailer byte at the end");
    }
    Ok(size)
}

/// The RIFF header's length must cover the file; the size is in the first
/// chunk (`VP8X`, `VP8L` or `VP8 `).
fn webp(bytes: &[u8]) -> Result<(u32, u32), &'static str> {
    let riff = u32::from_le_bytes(bytes.get(4..8).ok_or("the header is cut off")?.try_into().map_err(|_| "the header is cut off")?);
    if (riff as usize).saturating_add(8) > bytes.len() {
        return Err("it is shorter than its RIFF header says");
    }
    let cut = "the first chunk is cut off";
    match bytes.get(12..16) {
        Some(b"VP8X") => Ok((le24(bytes, 24).ok_or(cut)? + 1, le24(bytes, 27).ok_or(cut)? + 1)),
        Some(b"VP8L") => {
            let b = bytes.get(21..25).ok_or(cut)?;
            let width = 1 + (u32::from(b[0]) | (u32::from(b[1]) & 0x3F) << 8);
            let height = 1 + (u32::from(b[1]) >> 6 | u32::from(b[2]) << 2 | (u32::from(b[3]) & 0x0F) << 10);
            Ok((width, height))
        }
        Some(b"VP8 ") => Ok((le16(bytes, 26).ok_or(cut)? & 0x3FFF, le16(bytes, 28).ok_or(cut)? & 0x3FFF)),
        _ => Err("no VP8 chunk"),
    }
}

/// Test images: the smallest whole file of each format, and a PNG of any size.
#[cfg(test)]
pub(crate) mod samples {
    /// A 1x1 PNG: signature, IHDR, IDAT, IEND.
    pub fn png(width: u32, height: u32) -> Vec<u8> {
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        let mut chunk = |kind: &[u8], data: &[u8]| {
            out.extend((data.len() as u32).to_be_bytes());
            out.extend(kind);
            out.extend(data);
            out.extend([0, 0, 0, 0]);
        };
        let mut ihdr = width.to_be_bytes().to_vec();
        ihdr.extend(height.to_be_bytes());
        ihdr.extend([8, 6, 0, 0, 0]);
        chunk(b"IHDR", &ihdr);
        chunk(b"IDAT", &[0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01]);
        chunk(b"IEND", &[]);
        out
    }

    pub fn gif() -> Vec<u8> {
        let mut out = b"GIF89a".to_vec();
        out.extend([2, 0, 3, 0, 0, 0, 0]);
        out.extend([0x2C, 0, 0, 0, 0, 2, 0, 3, 0, 0, 2, 2, 0x44, 0x01, 0x00, 0x3B]);
        out
    }

    pub fn jpeg() -> Vec<u8> {
        let mut out = vec![0xFF, 0xD8];
        out.extend([0xFF, 0xE0, 0x00, 0x10, b'J', b'F', b'I', b'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
        out.extend([0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, 0x20, 0x00, 0x40, 0x01, 0x01, 0x11, 0x00]);
        out.extend([0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00, 0x12, 0x34]);
        out.extend([0xFF, 0xD9]);
        out
    }

    pub fn webp() -> Vec<u8> {
        let mut body = b"WEBPVP8X".to_vec();
        body.extend(10u32.to_le_bytes());
        body.extend([0, 0, 0, 0]);
        body.extend([99, 0, 0, 49, 0, 0]);
        let mut out = b"RIFF".to_vec();
        out.extend((body.len() as u32).to_le_bytes());
        out.extend(body);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_is_known_by_its_bytes_with_its_size() {
        let cases = [("png", samples::png(640, 480)), ("gif", samples::gif()), ("jpeg", samples::jpeg()), ("webp", samples::webp())];
        let mut lines = Vec::new();
        for (label, bytes) in cases {
            let format = Format::sniff(&bytes).unwrap();
            let size = dimensions(format, &bytes).unwrap();
            let image = Image::from_bytes(&bytes, label).unwrap();
            assert_eq!(image.byte_len(), bytes.len());
            lines.push(format!("{label}: {} {size:?}", image.media_type));
        }
        expect_test::expect![[r#"
            png: image/png (640, 480)
            gif: image/gif (2, 3)
            jpeg: image/jpeg (64, 32)
            webp: image/webp (100, 50)"#]]
        .assert_eq(&lines.join("\n"));
        assert_eq!(Format::sniff(b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>"), None);
    }

    #[test]
    fn a_cut_or_oversized_image_is_refused_in_a_sentence() {
        let png = samples::png(10, 10);
        let mut lines = Vec::new();
        for cut in [png.len() - 12, png.len() - 30, 20] {
            lines.push(Image::from_bytes(&png[..cut], "shot.png").unwrap_err());
        }
        for (label, mut bytes) in [("a.gif", samples::gif()), ("a.jpg", samples::jpeg()), ("a.webp", samples::webp())] {
            bytes.pop();
            lines.push(Image::from_bytes(&bytes, label).unwrap_err());
        }
        lines.push(Image::from_bytes(&samples::png(9000, 20), "wide.png").unwrap_err());
        let mut big = samples::png(10, 10);
        big.resize(MAX_IMAGE_BYTES as usize + 1, 0);
        lines.push(Image::from_bytes(&big, "big.png").unwrap_err());
        lines.push(Image::from_bytes(b"<svg/>", "logo.svg").unwrap_err());
        expect_test::expect![[r#"
            shot.png is a PNG image whose data is cut off or damaged (it ends before the IEND chunk), so it cannot be shown.
            shot.png is a PNG image whose data is cut off or damaged (it ends before the IEND chunk), so it cannot be shown.
            shot.png is a PNG image whose data is cut off or damaged (the header is cut off), so it cannot be shown.
            a.gif is a GIF image whose data is cut off or damaged (no trailer byte at the end), so it cannot be shown.
            a.jpg is a JPEG image whose data is cut off or damaged (no end-of-image marker), so it cannot be shown.
            a.webp is a WebP image whose data is cut off or damaged (it is shorter than its RIFF header says), so it cannot be shown.
            wide.png is a 9000x20-pixel PNG image, over the 8000-pixel side the model APIs take. Make a smaller copy (for example `magick wide.png -resize 1568x1568 smaller.png`) and use that.
            big.png is a 3750001-byte PNG image, over the 3750000-byte limit for an image sent to the model. Make a smaller copy (for example `magick big.png -resize 1568x1568 smaller.png`, or save it as JPEG) and use that.
            logo.svg is not a PNG, JPEG, GIF or WebP image (the only image formats sent to the model)."#]]
        .assert_eq(&lines.join("\n"));
    }

    #[test]
    fn data_url_and_placeholder() {
        let image = Image::from_bytes(&samples::gif(), "a.gif").unwrap();
        assert!(image.data_url().starts_with("data:image/gif;base64,R0lGODlh"));
        assert_eq!(image.placeholder("not sent"), "[image image/gif, 1 KB: not sent]");
    }
}
