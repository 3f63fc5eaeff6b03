//! The sender's logo: a PNG (krilla embeds it as it is) or an SVG (usvg reads it, krilla-svg
//! draws it as vectors), read once per render.

use std::sync::Arc;

use krilla::geom::Size;
use krilla::image::Image;
use krilla::surface::Surface;
use krilla_svg::{SurfaceExt, SvgSettings};

/// A logo, read and ready to draw.
pub(super) enum Logo {
    Png(Image),
    // Boxed: a tree is ten times the size of an image handle.
    Svg(Box<usvg::Tree>),
}

impl Logo {
    /// Reads `bytes` as a PNG or an SVG, whichever it is; the error says why it cannot be
    /// drawn.
    pub(super) fn read(bytes: &[u8]) -> Result<Self, String> {
        let logo = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Image::from_png(Arc::new(bytes.to_vec()).into(), true).map(Logo::Png)?
        } else {
            let tree = usvg::Tree::from_data(bytes, &svg_options())
                .map_err(|error| format!("not a valid SVG: {error}"))?;
            Logo::Svg(Box::new(tree))
        };
        let (width, height) = logo.size();
        if !(width > 0.0 && height > 0.0 && width.is_finite() && height.is_finite()) {
            return Err("the image has no size".to_owned());
        }
        Ok(logo)
    }

    /// The logo's own width and height, in pixels (PNG) or user units (SVG): its aspect.
    pub(super) fn size(&self) -> (f32, f32) {
        match self {
            Logo::Png(image) => {
                let (width, height) = image.size();
                (to_f32(width), to_f32(height))
            }
            Logo::Svg(tree) => (tree.size().width(), tree.size().height()),
        }
    }

    /// Draws the logo with its top-left corner at the surface's origin, `width` × `height`.
    pub(super) fn draw(&self, surface: &mut Surface<'_>, width: f32, height: f32) {
        let Some(size) = Size::from_wh(width, height) else { return };
        match self {
            Logo::Png(image) => surface.draw_image(image.clone(), size),
            Logo::Svg(tree) => {
                // Text in a logo is drawn as outlines: it is a picture, not something to copy.
                let settings = SvgSettings { embed_text: false, ..SvgSettings::default() };
                if surface.draw_svg(tree, size, settings).is_none() {
                    tracing::warn!("the sender's SVG logo could not be drawn");
                }
            }
        }
    }
}

/// What an SVG logo may use: text in the embedded `DejaVu` faces, and images only as
/// `data:` URLs inside it. A reference to a file or a URL is ignored, so a logo can never pull a
/// file of the server into an invoice.
fn svg_options() -> usvg::Options<'static> {
    let mut fonts = usvg::fontdb::Database::new();
    fonts.load_font_data(include_bytes!("../../fonts/DejaVuSans.ttf").to_vec());
    fonts.load_font_data(include_bytes!("../../fonts/DejaVuSans-Bold.ttf").to_vec());
    fonts.set_sans_serif_family("DejaVu Sans");
    usvg::Options {
        fontdb: Arc::new(fonts),
        font_family: "DejaVu Sans".to_owned(),
        image_href_resolver: usvg::ImageHrefResolver {
            resolve_data: usvg::ImageHrefResolver::default_data_resolver(),
            resolve_string: Box::new(|_, _| None),
        },
        ..usvg::Options::default()
    }
}

/// Pixel counts of a logo are far below f32's exact range (16 million).
fn to_f32(pixels: u32) -> f32 {
    f32::from(u16::try_from(pixels).unwrap_or(u16::MAX))
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn an_svg_is_read_with_its_size_and_a_file_it_names_is_never_read() {
        let svg = br#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="200" height="50">
            <rect width="200" height="50" fill="teal"/>
            <image href="/etc/hostname" width="10" height="10"/>
            <image xlink:href="file:///etc/passwd" width="10" height="10"/>
        </svg>"#;
        let logo = Logo::read(svg).unwrap();
        assert_eq!(logo.size(), (200.0, 50.0));
        let Logo::Svg(tree) = logo else { panic!("an SVG") };
        // Only the rectangle is left: the images that name files were dropped.
        assert_eq!(tree.root().children().len(), 1);
    }

    #[test]
    fn what_is_neither_png_nor_svg_is_refused_with_a_reason() {
        assert!(Logo::read(b"\x89PNG\r\n\x1a\nnot really").is_err());
        assert!(Logo::read(b"<html></html>").err().unwrap().contains("SVG"));
        assert!(Logo::read(br#"<svg xmlns="http://www.w3.org/2000/svg" width="0" height="0"/>"#).is_err());
    }
}
