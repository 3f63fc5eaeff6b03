//! The embedded fonts, read once, and text measured with their advance widths.
//!
//! Glyphs are placed by their advance widths alone (no kerning), so the width measured here
//! is exactly the width drawn: right-aligned numbers end on the same edge to the point.

use std::sync::LazyLock;

use krilla::text::{Font, GlyphId, KrillaGlyph};
use skrifa::MetadataProvider;
use skrifa::charmap::Charmap;
use skrifa::metrics::GlyphMetrics;
use skrifa::prelude::{FontRef, LocationRef, Size};

/// `DejaVu Sans` and `DejaVu Sans Bold`: Latin, Greek and Cyrillic. Bitstream Vera licence,
/// see `fonts/LICENSE`.
static FONTS: LazyLock<Result<Fonts, String>> = LazyLock::new(|| {
    Ok(Fonts {
        regular: Face::load("DejaVuSans.ttf", include_bytes!("../../fonts/DejaVuSans.ttf"))?,
        bold: Face::load("DejaVuSans-Bold.ttf", include_bytes!("../../fonts/DejaVuSans-Bold.ttf"))?,
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

    pub(super) fn face(&self, weight: Weight) -> &Face {
        match weight {
            Weight::Regular => &self.regular,
            Weight::Bold => &self.bold,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Weight {
    Regular,
    Bold,
}

/// One font, for drawing (krilla) and for measuring (skrifa).
pub(super) struct Face {
    pub(super) font: Font,
    charmap: Charmap<'static>,
    /// Advance widths in em (measured at 1 pixel per em).
    metrics: GlyphMetrics<'static>,
}

impl Face {
    fn load(name: &str, data: &'static [u8]) -> Result<Self, String> {
        let font_ref = FontRef::new(data).map_err(|error| format!("embedded font {name}: {error}"))?;
        let font = Font::new(data.into(), 0)
            .ok_or_else(|| format!("embedded font {name}: krilla cannot read it"))?;
        Ok(Self {
            font,
            charmap: font_ref.charmap(),
            metrics: font_ref.glyph_metrics(Size::new(1.0), LocationRef::default()),
        })
    }

    /// The glyph of `c` (`.notdef` when the font has none) and its advance in em.
    fn glyph(&self, c: char) -> (skrifa::GlyphId, f32) {
        let glyph = self.charmap.map(c).unwrap_or(skrifa::GlyphId::NOTDEF);
        (glyph, self.metrics.advance_width(glyph).unwrap_or(0.0))
    }

    /// The width of `text` at `size` points, as [`Face::glyphs`] places it.
    pub(super) fn width(&self, text: &str, size: f32) -> f32 {
        text.chars().map(|c| self.glyph(c).1).sum::<f32>() * size
    }

    /// `text` as glyphs, one per character, each mapped back to its characters so the
    /// PDF's text can be copied and searched.
    pub(super) fn glyphs(&self, text: &str) -> Vec<KrillaGlyph> {
        text.char_indices()
            .map(|(at, c)| {
                let (glyph, advance) = self.glyph(c);
                KrillaGlyph::new(
                    GlyphId::new(glyph.to_u32()),
                    advance,
                    0.0,
                    0.0,
                    0.0,
                    at..at + c.len_utf8(),
                    None,
                )
            })
            .collect()
    }

    /// Greedy word wrap of `text` to lines at most `width` wide. Line breaks in `text` are
    /// kept; a word longer than a line is broken between characters. Never empty.
    pub(super) fn wrap(&self, text: &str, size: f32, width: f32) -> Vec<String> {
        let mut lines = Vec::new();
        for paragraph in text.lines() {
            // Runs of blanks print as one space, as before any break is chosen.
            let paragraph = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
            let mut line = String::new();
            let mut start = 0;
            for (end, _) in unicode_linebreak::linebreaks(&paragraph) {
                // The text up to the next place a line may break (UAX #14), its trailing
                // space included: kept inside a line, dropped at its end.
                let segment = &paragraph[start..end];
                start = end;
                let candidate = format!("{line}{segment}");
                if self.width(candidate.trim_end(), size) <= width {
                    line = candidate;
                    continue;
                }
                if !line.trim_end().is_empty() {
                    lines.push(line.trim_end().to_owned());
                }
                line = if self.width(segment.trim_end(), size) <= width {
                    segment.to_owned()
                } else {
                    self.break_graphemes(segment, size, width, &mut lines)
                };
            }
            lines.push(line.trim_end().to_owned());
        }
        // Trailing blank lines print nothing but would take room.
        while lines.len() > 1 && lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        if lines.is_empty() {
            lines.push(String::new());
        }
        lines
    }

    /// A segment wider than a line, broken between graphemes (never inside one, so marks
    /// stay on their letters): full lines go to `lines`, the rest is returned.
    fn break_graphemes(&self, segment: &str, size: f32, width: f32, lines: &mut Vec<String>) -> String {
        let mut line = String::new();
        for grapheme in unicode_segmentation::UnicodeSegmentation::graphemes(segment, true) {
            let candidate = format!("{line}{grapheme}");
            if !line.is_empty() && self.width(candidate.trim_end(), size) > width {
                lines.push(std::mem::take(&mut line));
                line.push_str(grapheme);
            } else {
                line = candidate;
            }
        }
        line
    }

    /// `text` on one line at most `width` wide, cut with an ellipsis if need be.
    pub(super) fn truncate(&self, text: &str, size: f32, width: f32) -> String {
        if self.width(text, size) <= width {
            return text.to_owned();
        }
        let room = width - self.width("…", size);
        let mut used = 0.0;
        let mut out = String::new();
        for c in text.chars() {
            used += self.glyph(c).1 * size;
            if used > room {
                break;
            }
            out.push(c);
        }
        out.truncate(out.trim_end().len());
        out.push('…');
        out
    }
}

/// Text as it may be drawn on one line: control characters (tabs, line breaks) become spaces.
pub(super) fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn regular() -> &'static Face {
        &Fonts::get().unwrap().regular
    }

    #[test]
    fn every_script_we_promise_has_real_glyphs() {
        let fonts = Fonts::get().unwrap();
        for face in [&fonts.regular, &fonts.bold] {
            for c in "Zoë Łukasiewicz — Ёлка ΑΒΓ αβγ ß €…·".chars().filter(|c| !c.is_whitespace())
            {
                assert_ne!(face.glyph(c).0, skrifa::GlyphId::NOTDEF, "{c:?} has no glyph");
                assert!(face.glyph(c).1 > 0.0, "{c:?} has no width");
            }
        }
    }

    #[test]
    fn wrapped_lines_fit_and_keep_every_word() {
        let text = "Backend development: invoicing, PDF rendering and the time tracking API, \
                    reviewed with the client's team over three rounds";
        let lines = regular().wrap(text, 9.5, 150.0);
        assert!(lines.len() > 1);
        for line in &lines {
            assert!(regular().width(line, 9.5) <= 150.0, "{line:?} is too wide");
        }
        assert_eq!(lines.join(" "), text.split_whitespace().collect::<Vec<_>>().join(" "));
    }

    #[test]
    fn cjk_wraps_between_ideographs_and_keeps_closing_punctuation_on_its_line() {
        let text = "山田商事様、十一月分のご請求です。お支払いは十四日以内にお願いいたします。ありがとうございました。";
        let lines = regular().wrap(text, 9.5, 120.0);
        assert!(lines.len() > 1, "{lines:?}");
        assert_eq!(lines.concat(), text, "nothing lost, nothing added");
        for line in &lines {
            assert!(regular().width(line, 9.5) <= 120.0, "{line:?} is too wide");
            assert!(
                !line.starts_with(['、', '。']),
                "{line:?}: a line never starts with closing punctuation"
            );
        }
    }

    #[test]
    fn mixed_text_breaks_at_spaces_before_it_breaks_words() {
        let text = "Invoice for 山田商事 covering consultation and implementation";
        let lines = regular().wrap(text, 9.5, 110.0);
        assert!(lines.len() > 1);
        let words: Vec<&str> = lines.iter().flat_map(|line| line.split(' ')).collect();
        for word in ["Invoice", "consultation", "implementation"] {
            assert!(words.contains(&word), "{word} kept whole: {lines:?}");
        }
    }

    #[test]
    fn a_long_run_without_breaks_is_cut_between_graphemes_only() {
        // Thai has no spaces between words and combining marks on its letters: a cut may
        // fall only where a reader sees one character end.
        let text = "ภาษาไทยที่ยาวมากโดยไม่มีช่องว่างระหว่างคำเพื่อทดสอบการตัดบรรทัด".repeat(3);
        let lines = regular().wrap(&text, 9.5, 80.0);
        assert!(lines.len() > 1);
        assert_eq!(lines.concat(), text);
        for line in &lines[1..] {
            let first = line.chars().next().unwrap();
            let mark = first == '\u{0E31}'
                || ('\u{0E34}'..='\u{0E3A}').contains(&first)
                || ('\u{0E47}'..='\u{0E4E}').contains(&first);
            assert!(!mark, "{line:?} starts with a combining mark");
        }
    }

    #[test]
    fn a_word_longer_than_the_line_is_broken() {
        let word = "x".repeat(200);
        let lines = regular().wrap(&word, 9.5, 100.0);
        assert!(lines.len() > 1);
        assert_eq!(lines.concat(), word);
        assert!(lines.iter().all(|line| regular().width(line, 9.5) <= 100.0));
    }

    #[test]
    fn line_breaks_are_kept_and_trailing_blank_lines_dropped() {
        assert_eq!(regular().wrap("one\n\ntwo\n\n", 9.5, 500.0), ["one", "", "two"]);
        assert_eq!(regular().wrap("", 9.5, 500.0), [""]);
    }

    #[test]
    fn truncation_ends_in_an_ellipsis_within_the_width() {
        let cut = regular().truncate(&"Billable Studio GmbH ".repeat(20), 8.0, 120.0);
        assert!(cut.ends_with('…'));
        assert!(regular().width(&cut, 8.0) <= 120.0);
        assert_eq!(regular().truncate("short", 8.0, 120.0), "short");
    }

    #[test]
    fn glyphs_advance_by_the_measured_width() {
        let text = "Ёлка 1,250.00 EUR";
        let advance: f32 = regular().glyphs(text).iter().map(|g| g.x_advance).sum();
        assert!((advance * 9.5 - regular().width(text, 9.5)).abs() < 1e-3);
    }
}
