//! Fonts: the embedded `DejaVu` faces every invoice is set in, and the face type that both
//! shapes text (rustybuzz) and is embedded in the PDF (krilla).
//!
//! Characters `DejaVu` lacks come from other fonts found at run time ([`super::fallback`]);
//! how a line is shaped and measured is [`super::shape`].

use std::fmt;
use std::sync::LazyLock;

use krilla::text::Font;

/// `DejaVu Sans` and `DejaVu Sans Bold`: Latin, Greek, Cyrillic, Hebrew and Arabic.
/// Bitstream Vera licence, see `fonts/LICENSE`.
static FONTS: LazyLock<Result<Fonts, String>> = LazyLock::new(|| {
    Ok(Fonts {
        regular: Face::load("DejaVu Sans", include_bytes!("../../fonts/DejaVuSans.ttf"), 0, Weight::Regular)?,
        bold: Face::load(
            "DejaVu Sans Bold",
            include_bytes!("../../fonts/DejaVuSans-Bold.ttf"),
            0,
            Weight::Bold,
        )?,
    })
});

/// `Liberation Sans` and `Liberation Sans Bold`, the one of the typefaces SIX allows on a
/// Swiss QR-bill (Arial, Frutiger, Helvetica, Liberation Sans: IG 2.3, 3.4) that may be
/// embedded freely. SIL Open Font License 1.1, see `fonts/LICENSE-Liberation`.
static SLIP_FONTS: LazyLock<Result<Fonts, String>> = LazyLock::new(|| {
    Ok(Fonts {
        regular: Face::load(
            "Liberation Sans",
            include_bytes!("../../fonts/LiberationSans-Regular.ttf"),
            0,
            Weight::Regular,
        )?,
        bold: Face::load(
            "Liberation Sans Bold",
            include_bytes!("../../fonts/LiberationSans-Bold.ttf"),
            0,
            Weight::Bold,
        )?,
    })
});

/// The two faces every page is set in.
pub(super) struct Fonts {
    pub(super) regular: Face,
    pub(super) bold: Face,
}

impl Fonts {
    /// The fonts, parsed on first use. They are compiled in, so an error is a build
    /// defect, which every test would show.
    pub(super) fn get() -> anyhow::Result<&'static Fonts> {
        FONTS.as_ref().map_err(|error| anyhow::anyhow!("{error}"))
    }

    /// The faces a Swiss QR-bill's receipt and payment part are set in.
    pub(super) fn slip() -> anyhow::Result<&'static Fonts> {
        SLIP_FONTS.as_ref().map_err(|error| anyhow::anyhow!("{error}"))
    }

    pub(super) fn face(&self, weight: Weight) -> &Face {
        match weight {
            Weight::Regular => &self.regular,
            Weight::Bold => &self.bold,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Weight {
    Regular,
    Bold,
}

impl Weight {
    /// The OpenType weight class (`usWeightClass`) of the weight.
    pub(super) fn class(self) -> u16 {
        match self {
            Weight::Regular => 400,
            Weight::Bold => 700,
        }
    }
}

/// One font face, for shaping (rustybuzz) and for drawing (krilla). Faces live as long as
/// the process: the embedded ones are compiled in, fallback faces are loaded once.
pub(super) struct Face {
    pub(super) name: String,
    pub(super) font: Font,
    shaper: rustybuzz::Face<'static>,
    /// Em per font unit.
    scale: f32,
    pub(super) weight: Weight,
}

impl fmt::Debug for Face {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The font data and its tables would fill a screen and say nothing.
        f.debug_struct("Face").field("name", &self.name).field("weight", &self.weight).finish_non_exhaustive()
    }
}

impl Face {
    pub(super) fn load(name: &str, data: &'static [u8], index: u32, weight: Weight) -> Result<Self, String> {
        let shaper = rustybuzz::Face::from_slice(data, index)
            .ok_or_else(|| format!("font {name}: not a font rustybuzz can read"))?;
        let font =
            Font::new(data.into(), index).ok_or_else(|| format!("font {name}: krilla cannot read it"))?;
        let units = f32::from(u16::try_from(shaper.units_per_em()).unwrap_or(1000).max(1));
        Ok(Self { name: name.to_owned(), font, shaper, scale: 1.0 / units, weight })
    }

    /// Whether the face has a glyph for `c`.
    pub(super) fn has(&self, c: char) -> bool {
        self.shaper.glyph_index(c).is_some()
    }

    pub(super) fn shaper(&self) -> &rustybuzz::Face<'static> {
        &self.shaper
    }

    /// Em per font unit.
    pub(super) fn scale(&self) -> f32 {
        self.scale
    }

    /// The glyph of `c` and its advance in em, if the face has one.
    pub(super) fn glyph(&self, c: char) -> Option<(u16, f32)> {
        let glyph = self.shaper.glyph_index(c)?;
        let advance = self.shaper.glyph_hor_advance(glyph).map_or(0.0, f32::from) * self.scale;
        Some((glyph.0, advance))
    }
}

/// Text as it may be drawn on one line: control characters (tabs, line breaks) become spaces.
pub(super) fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn the_embedded_faces_cover_the_scripts_they_promise() {
        let fonts = Fonts::get().unwrap();
        for face in [&fonts.regular, &fonts.bold] {
            for c in
                "Zoë Łukasiewicz — Ёлка ΑΒΓ αβγ ß €…· עברית العربية �".chars().filter(|c| !c.is_whitespace())
            {
                let (_, advance) =
                    face.glyph(c).unwrap_or_else(|| panic!("{c:?} has no glyph in {}", face.name));
                assert!(advance > 0.0, "{c:?} has no width");
            }
            assert!(!face.has('山') && !face.has('ก'), "CJK and Thai come from fallback fonts");
        }
    }
}
