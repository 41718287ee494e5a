//! Fitting images into what a model accepts: at most 2000x2000 px and 4.5 MiB of base64 by
//! default (the model's `inputLimits.images.resize` when it has one), re-encoded as PNG or
//! JPEG when they are larger, the way the reference agent prepares images.

use std::io::Cursor;
use std::sync::Arc;

use base64::Engine;
use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};
use serde_json::Value;

/// Headroom below Anthropic's 5 MB image limit, counted in base64 bytes.
pub const DEFAULT_MAX_IMAGE_BYTES: usize = 4_718_592;

/// JPEG qualities tried after the configured one when an image is still too large.
const FALLBACK_QUALITIES: [u8; 4] = [85, 70, 55, 40];

/// The note for a model that takes no images.
pub const NON_VISION_NOTE: &str =
    "[Current model does not support images. The image will be omitted from this request.]";

/// The note when no encoding fits the size limit.
pub const IMAGE_TOO_LARGE_NOTE: &str =
    "[Image omitted: could not be resized below the inline image size limit.]";

/// Formats every provider accepts as they are; anything else (BMP) is sent as PNG.
const SENDABLE_MIME_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The largest image a model is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResizeLimits {
    pub max_width: u32,
    pub max_height: u32,
    /// Base64-encoded size; an image must come in below it.
    pub max_bytes: usize,
    pub jpeg_quality: u8,
}

impl Default for ResizeLimits {
    fn default() -> Self {
        Self {
            max_width: 2000,
            max_height: 2000,
            max_bytes: DEFAULT_MAX_IMAGE_BYTES,
            jpeg_quality: 80,
        }
    }
}

impl ResizeLimits {
    /// The defaults overridden by a model's `inputLimits` (`images.resize.{maxWidth,
    /// maxHeight, maxBytes, jpegQuality}`); values that are not positive numbers are ignored.
    pub fn from_input_limits(input_limits: Option<&Value>) -> Self {
        let mut limits = Self::default();
        let Some(resize) = input_limits
            .and_then(|limits| limits.get("images"))
            .and_then(|images| images.get("resize"))
        else {
            return limits;
        };
        let positive = |key: &str| {
            resize
                .get(key)
                .and_then(Value::as_f64)
                .filter(|value| value.is_finite() && *value >= 1.0)
        };
        if let Some(width) = positive("maxWidth") {
            limits.max_width = width.min(f64::from(u32::MAX)) as u32;
        }
        if let Some(height) = positive("maxHeight") {
            limits.max_height = height.min(f64::from(u32::MAX)) as u32;
        }
        if let Some(bytes) = positive("maxBytes") {
            limits.max_bytes = bytes as usize;
        }
        if let Some(quality) = positive("jpegQuality") {
            limits.jpeg_quality = quality.min(100.0) as u8;
        }
        limits
    }
}

/// How the `read` tool treats images, asked at every call so a model switch applies at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImagePolicy {
    /// The `images.autoResize` setting.
    pub auto_resize: bool,
    pub limits: ResizeLimits,
    /// Whether the current model takes images; `None` when unknown (no note then).
    pub model_accepts_images: Option<bool>,
}

impl Default for ImagePolicy {
    fn default() -> Self {
        Self {
            auto_resize: true,
            limits: ResizeLimits::default(),
            model_accepts_images: None,
        }
    }
}

/// Asked at the start of every image read.
pub type ImagePolicySource = Arc<dyn Fn() -> ImagePolicy + Send + Sync>;

/// An image ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FittedImage {
    /// Base64.
    pub data: String,
    pub mime_type: String,
    pub original_width: u32,
    pub original_height: u32,
    pub width: u32,
    pub height: u32,
    /// Whether the pixels were scaled (a format change alone does not count).
    pub resized: bool,
}

impl FittedImage {
    /// Tells the model how coordinates map back to the original, when it was scaled.
    pub fn dimension_note(&self) -> Option<String> {
        if !self.resized || self.width == 0 {
            return None;
        }
        let scale = f64::from(self.original_width) / f64::from(self.width);
        Some(format!(
            "[Image: original {}x{}, displayed at {}x{}. Multiply coordinates by {scale:.2} to map to original image.]",
            self.original_width, self.original_height, self.width, self.height
        ))
    }
}

fn base64_len(bytes: usize) -> usize {
    bytes.div_ceil(3) * 4
}

fn encode_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes with the EXIF orientation applied, so a phone photo is the right way up.
fn decode(bytes: &[u8]) -> Option<DynamicImage> {
    let reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .ok()?;
    let mut decoder = reader.into_decoder().ok()?;
    let orientation = decoder.orientation().ok();
    let mut image = DynamicImage::from_decoder(decoder).ok()?;
    if let Some(orientation) = orientation {
        image.apply_orientation(orientation);
    }
    Some(image)
}

fn encode_png(image: &DynamicImage) -> Option<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::Png).ok()?;
    Some(out.into_inner())
}

fn encode_jpeg(image: &DynamicImage, quality: u8) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    // JPEG has no alpha channel.
    let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
    rgb.write_with_encoder(JpegEncoder::new_with_quality(
        &mut out,
        quality.clamp(1, 100),
    ))
    .ok()?;
    Some(out)
}

/// The size to scale to so both sides fit, keeping the aspect ratio.
fn fit_dimensions(width: u32, height: u32, limits: &ResizeLimits) -> (u32, u32) {
    let (mut w, mut h) = (f64::from(width), f64::from(height));
    if w > f64::from(limits.max_width) {
        h = (h * f64::from(limits.max_width) / w).round();
        w = f64::from(limits.max_width);
    }
    if h > f64::from(limits.max_height) {
        w = (w * f64::from(limits.max_height) / h).round();
        h = f64::from(limits.max_height);
    }
    ((w as u32).max(1), (h as u32).max(1))
}

/// Fits an image into `limits`: as it is when it already fits, else scaled to the
/// largest size allowed and encoded as PNG or JPEG (the first, in that order and then by
/// falling JPEG quality, that comes in under the byte limit), shrinking by a quarter until
/// one does. `None` when the image cannot be decoded or nothing fits.
pub fn fit_image(bytes: &[u8], mime_type: &str, limits: &ResizeLimits) -> Option<FittedImage> {
    let image = decode(bytes)?;
    let (original_width, original_height) = (image.width(), image.height());
    let sendable = SENDABLE_MIME_TYPES.contains(&mime_type);
    if original_width <= limits.max_width
        && original_height <= limits.max_height
        && base64_len(bytes.len()) < limits.max_bytes
    {
        if sendable {
            return Some(FittedImage {
                data: encode_base64(bytes),
                mime_type: mime_type.to_owned(),
                original_width,
                original_height,
                width: original_width,
                height: original_height,
                resized: false,
            });
        }
        if let Some(png) = encode_png(&image).filter(|png| base64_len(png.len()) < limits.max_bytes)
        {
            return Some(FittedImage {
                data: encode_base64(&png),
                mime_type: "image/png".to_owned(),
                original_width,
                original_height,
                width: original_width,
                height: original_height,
                resized: false,
            });
        }
    }

    let mut qualities = vec![limits.jpeg_quality];
    qualities.extend(
        FALLBACK_QUALITIES
            .iter()
            .copied()
            .filter(|q| *q != limits.jpeg_quality),
    );
    let (mut width, mut height) = fit_dimensions(original_width, original_height, limits);
    loop {
        let scaled = if (width, height) == (original_width, original_height) {
            image.clone()
        } else {
            image.resize_exact(width, height, FilterType::Lanczos3)
        };
        let candidates = std::iter::once(("image/png", encode_png(&scaled))).chain(
            qualities
                .iter()
                .map(|quality| ("image/jpeg", encode_jpeg(&scaled, *quality))),
        );
        for (mime, encoded) in candidates {
            let Some(encoded) = encoded else { continue };
            if base64_len(encoded.len()) < limits.max_bytes {
                return Some(FittedImage {
                    data: encode_base64(&encoded),
                    mime_type: mime.to_owned(),
                    original_width,
                    original_height,
                    width,
                    height,
                    resized: (width, height) != (original_width, original_height),
                });
            }
        }
        if width == 1 && height == 1 {
            return None;
        }
        let next = (
            if width == 1 {
                1
            } else {
                (width * 3 / 4).max(1)
            },
            if height == 1 {
                1
            } else {
                (height * 3 / 4).max(1)
            },
        );
        if next == (width, height) {
            return None;
        }
        (width, height) = next;
    }
}

/// [`fit_image`] for an image already in base64 (a prompt's attachment); `None` also when
/// the base64 is invalid.
pub fn fit_encoded_image(
    data: &str,
    mime_type: &str,
    limits: &ResizeLimits,
) -> Option<FittedImage> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.as_bytes())
        .ok()?;
    fit_image(&bytes, mime_type, limits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = DynamicImage::ImageRgb8(image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x * y) % 256) as u8])
        }));
        encode_png(&image).unwrap_or_default()
    }

    #[test]
    fn small_images_go_as_they_are() {
        let bytes = png(40, 30);
        let fitted = fit_image(&bytes, "image/png", &ResizeLimits::default());
        let fitted = fitted.as_ref();
        assert_eq!(fitted.map(|f| f.data.clone()), Some(encode_base64(&bytes)));
        assert_eq!(fitted.map(|f| f.resized), Some(false));
        assert_eq!(fitted.and_then(FittedImage::dimension_note), None);
    }

    #[test]
    fn wide_images_scale_to_the_limit_keeping_the_aspect_ratio() {
        let limits = ResizeLimits {
            max_width: 100,
            max_height: 100,
            ..ResizeLimits::default()
        };
        let fitted = fit_image(&png(400, 100), "image/png", &limits);
        let fitted = fitted.as_ref();
        assert_eq!(fitted.map(|f| (f.width, f.height)), Some((100, 25)));
        assert_eq!(
            fitted.and_then(FittedImage::dimension_note).as_deref(),
            Some(
                "[Image: original 400x100, displayed at 100x25. Multiply coordinates by 4.00 to map to original image.]"
            )
        );
    }

    #[test]
    fn too_many_bytes_fall_back_to_jpeg_then_smaller_sizes() {
        let bytes = png(300, 300);
        let limits = ResizeLimits {
            max_bytes: 6_000,
            ..ResizeLimits::default()
        };
        let fitted = fit_image(&bytes, "image/png", &limits);
        let fitted = fitted.as_ref();
        assert_eq!(fitted.map(|f| f.mime_type.as_str()), Some("image/jpeg"));
        assert!(fitted.is_some_and(|f| f.data.len() < 6_000));
    }

    #[test]
    fn nothing_fits_a_limit_below_any_encoding() {
        let limits = ResizeLimits {
            max_bytes: 10,
            ..ResizeLimits::default()
        };
        assert_eq!(fit_image(&png(20, 20), "image/png", &limits), None);
    }

    #[test]
    fn undecodable_bytes_give_none() {
        let mut bytes = png(20, 20);
        bytes.truncate(40);
        assert_eq!(
            fit_image(&bytes, "image/png", &ResizeLimits::default()),
            None
        );
    }

    #[test]
    fn model_limits_override_the_defaults() {
        let limits = ResizeLimits::from_input_limits(Some(&json!({
            "images": {"resize": {"maxWidth": 512, "jpegQuality": 60, "maxHeight": "x"}}
        })));
        assert_eq!(limits.max_width, 512);
        assert_eq!(limits.max_height, 2000);
        assert_eq!(limits.jpeg_quality, 60);
        assert_eq!(limits.max_bytes, DEFAULT_MAX_IMAGE_BYTES);
    }
}
