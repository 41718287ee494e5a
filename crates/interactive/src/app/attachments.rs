//! Images for the next prompt: a pasted path to an image file, or an image read from the
//! clipboard (Ctrl+V). The images and the names shown above the editor stay in step:
//! both are added together and taken or cleared together.

use knightcode_protocol::ContentBlock;
use knightcode_protocol::ImageContent;

use super::clipboard;
use super::clipboard_image::ClipboardRead;
use super::ui::Ui;

/// Image files a pasted path may name.
const IMAGE_TYPES: &[(&str, &str)] = &[
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
];

/// Images above this size are refused (providers reject them anyway).
const MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// The images waiting to go with the next prompt (their names are on the screen).
#[derive(Default)]
pub struct Attachments {
    images: Vec<ContentBlock>,
    /// Images pasted from the clipboard so far (they are named by number).
    from_clipboard: usize,
}

impl Ui {
    pub fn take_images(&mut self) -> Vec<ContentBlock> {
        self.screen.attachments.clear();
        std::mem::take(&mut self.attachments.images)
    }

    /// A pasted path to an image file attaches the image instead of inserting text.
    pub fn attach_image_path(&mut self, pasted: &str) -> bool {
        let trimmed = pasted.trim().trim_matches(['\'', '"']);
        if trimmed.contains('\n') || trimmed.is_empty() {
            return false;
        }
        let unescaped = trimmed.replace("\\ ", " ");
        let path = if let Some(rest) = unescaped.strip_prefix("~/") {
            match self.places.home() {
                Some(home) => home.join(rest),
                None => return false,
            }
        } else {
            self.places.cwd().join(&unescaped)
        };
        let Some(ext) = path.extension().and_then(|e| e.to_str()) else {
            return false;
        };
        let Some((_, mime)) = IMAGE_TYPES
            .iter()
            .find(|(e, _)| e.eq_ignore_ascii_case(ext))
        else {
            return false;
        };
        let Ok(meta) = std::fs::metadata(&path) else {
            return false;
        };
        if !meta.is_file() {
            return false;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if meta.len() > MAX_IMAGE_BYTES {
            self.warn(&format!(
                "{name} is larger than 20 MB and was not attached."
            ));
            return true;
        }
        match std::fs::read(&path) {
            Ok(bytes) => self.attach_image(name, &bytes, mime),
            Err(error) => self.error(&format!("Could not read {}: {error}", path.display())),
        }
        true
    }

    /// Attaches an image to the next prompt, shown by `name` above the editor.
    pub fn attach_image(&mut self, name: String, bytes: &[u8], mime: &str) {
        if bytes.len() as u64 > MAX_IMAGE_BYTES {
            self.warn(&format!(
                "{name} is larger than 20 MB and was not attached."
            ));
            return;
        }
        self.attachments
            .images
            .push(ContentBlock::Image(ImageContent {
                data: clipboard::base64(bytes),
                mime_type: mime.to_owned(),
                ..ImageContent::default()
            }));
        self.screen.attachments.push(name);
        if let Some(model) = self.session.current_model()
            && !model.input.iter().any(|kind| kind == "image")
        {
            self.warn(&format!(
                "{} does not take images; it will get a note that an image was left out. Pick another model with ctrl+l.",
                model.id
            ));
        }
    }

    /// Ctrl+V: reads an image from the system clipboard; it is attached when it arrives.
    pub fn paste_clipboard_image(&mut self) {
        self.jobs.read_clipboard_image();
        self.screen.hint = Some("Reading an image from the clipboard…".to_owned());
    }

    pub fn on_clipboard_image(&mut self, read: ClipboardRead) {
        self.screen.hint = None;
        match read {
            Ok(Some(image)) => {
                self.attachments.from_clipboard += 1;
                let extension = image
                    .mime_type
                    .trim_start_matches("image/")
                    .replace("jpeg", "jpg");
                let name = format!("clipboard-{}.{extension}", self.attachments.from_clipboard);
                self.attach_image(name, &image.bytes, &image.mime_type);
            }
            Ok(None) => self.info(
                "The clipboard holds no image (copy one first, or paste the image file's path).",
            ),
            Err(message) => self.warn(&message),
        }
        self.mark_urgent();
    }

    /// Drops the images waiting for the next prompt (Ctrl+C on a full editor).
    pub fn clear_attachments(&mut self) {
        self.screen.attachments.clear();
        self.attachments.images.clear();
    }
}
